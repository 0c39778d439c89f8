within Modelica.Thermal;
package HeatTransfer "Lumped 1-dimensional heat transfer"
  extends Modelica.Icons.Package;
end HeatTransfer;
