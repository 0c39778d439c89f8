within Modelica.Mechanics;
package Translational "1-dimensional translational mechanics"
  extends Modelica.Icons.Package;
end Translational;
