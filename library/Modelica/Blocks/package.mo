within Modelica;
package Blocks "Input/output blocks: sources, math, continuous, nonlinear"
  extends Modelica.Icons.Package;
  import Modelica.Units.SI;
end Blocks;
