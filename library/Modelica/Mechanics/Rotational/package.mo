within Modelica.Mechanics;
package Rotational "1-dimensional rotational mechanics (drive trains)"
  extends Modelica.Icons.Package;
end Rotational;
