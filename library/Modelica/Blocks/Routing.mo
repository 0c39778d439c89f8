within Modelica.Blocks;
package Routing "Signal routing"
  extends Modelica.Icons.Package;

  block RealPassThrough "y = u"
    extends Modelica.Blocks.Icons.Block;
    Modelica.Blocks.Interfaces.RealInput u "Input signal";
    Modelica.Blocks.Interfaces.RealOutput y "Same signal";
  equation
    y = u;
  end RealPassThrough;

  block Replicator "Copies one input to all nout outputs"
    extends Modelica.Blocks.Interfaces.SIMO;
  equation
    y = fill(u, nout);
  end Replicator;

  block Multiplex2 "Concatenates two input vectors"
    extends Modelica.Blocks.Icons.Block;
    parameter Integer n1 = 1 "Size of u1";
    parameter Integer n2 = 1 "Size of u2";
    Modelica.Blocks.Interfaces.RealInput u1[n1] "First input vector";
    Modelica.Blocks.Interfaces.RealInput u2[n2] "Second input vector";
    Modelica.Blocks.Interfaces.RealOutput y[n1 + n2] "{u1, u2}";
  equation
    y = cat(1, u1, u2);
  end Multiplex2;

  block DeMultiplex2 "Splits an input vector into two output vectors"
    extends Modelica.Blocks.Icons.Block;
    parameter Integer n1 = 1 "Size of y1";
    parameter Integer n2 = 1 "Size of y2";
    Modelica.Blocks.Interfaces.RealInput u[n1 + n2] "Input vector";
    Modelica.Blocks.Interfaces.RealOutput y1[n1] "First n1 elements of u";
    Modelica.Blocks.Interfaces.RealOutput y2[n2] "Last n2 elements of u";
  equation
    y1 = u[1:n1];
    y2 = u[n1 + 1:n1 + n2];
  end DeMultiplex2;
end Routing;
