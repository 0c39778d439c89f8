within Modelica;
package Mechanics "1-dimensional mechanical systems"
  extends Modelica.Icons.Package;
  import Modelica.Units.SI;
end Mechanics;
