within Modelica;
package Thermal "Thermal systems"
  extends Modelica.Icons.Package;
  import Modelica.Units.SI;
end Thermal;
