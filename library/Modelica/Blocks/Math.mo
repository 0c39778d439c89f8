within Modelica.Blocks;
package Math "Mathematical operations on signals"
  extends Modelica.Icons.Package;

  block Gain "y = k*u"
    parameter Real k(start=1, unit="1") "Gain";
    Interfaces.RealInput u "Input signal";
    Interfaces.RealOutput y "Output signal";
  equation
    y = k*u;
  end Gain;

  block MatrixGain "y = K*u"
    parameter Real K[:, :] = [1, 0; 0, 1] "Gain matrix";
    extends Interfaces.MIMO(final nin=size(K, 2), final nout=size(K, 1));
  equation
    y = K*u;
  end MatrixGain;

  block Sum "y = k*u (weighted sum of the inputs)"
    extends Interfaces.MISO;
    parameter Real k[nin] = ones(nin) "Weights";
  equation
    y = k*u;
  end Sum;

  block Feedback "y = u1 - u2"
    Interfaces.RealInput u1 "Reference";
    Interfaces.RealInput u2 "Feedback";
    Interfaces.RealOutput y "Difference";
  equation
    y = u1 - u2;
  end Feedback;

  block Add "y = k1*u1 + k2*u2"
    extends Interfaces.SI2SO;
    parameter Real k1 = +1 "Weight of u1";
    parameter Real k2 = +1 "Weight of u2";
  equation
    y = k1*u1 + k2*u2;
  end Add;

  block Add3 "y = k1*u1 + k2*u2 + k3*u3"
    extends Modelica.Blocks.Icons.Block;
    parameter Real k1 = +1 "Weight of u1";
    parameter Real k2 = +1 "Weight of u2";
    parameter Real k3 = +1 "Weight of u3";
    Interfaces.RealInput u1 "First input";
    Interfaces.RealInput u2 "Second input";
    Interfaces.RealInput u3 "Third input";
    Interfaces.RealOutput y "Weighted sum";
  equation
    y = k1*u1 + k2*u2 + k3*u3;
  end Add3;

  block Product "y = u1*u2"
    extends Interfaces.SI2SO;
  equation
    y = u1*u2;
  end Product;

  block Division "y = u1/u2"
    extends Interfaces.SI2SO;
  equation
    y = u1/u2;
  end Division;

  block Abs "y = |u|"
    extends Interfaces.SISO;
    parameter Boolean generateEvent = false "= true: events when u crosses zero";
  equation
    y = if generateEvent then (if u >= 0 then u else -u) else noEvent(if u >= 0 then u else -u);
  end Abs;

  block Sign "y = sign(u)"
    extends Interfaces.SISO;
    parameter Boolean generateEvent = false "= true: events when u crosses zero";
  equation
    y = if generateEvent then (if u > 0 then 1 elseif u < 0 then -1 else 0)
      else noEvent(if u > 0 then 1 elseif u < 0 then -1 else 0);
  end Sign;

  block Sqrt "y = sqrt(u)"
    extends Interfaces.SISO;
  equation
    y = sqrt(u);
  end Sqrt;

  block Sin "y = sin(u)"
    extends Interfaces.SISO(u(unit="rad"));
  equation
    y = sin(u);
  end Sin;

  block Cos "y = cos(u)"
    extends Interfaces.SISO(u(unit="rad"));
  equation
    y = cos(u);
  end Cos;

  block Tan "y = tan(u)"
    extends Interfaces.SISO(u(unit="rad"));
  equation
    y = tan(u);
  end Tan;

  block Asin "y = asin(u)"
    extends Interfaces.SISO(y(unit="rad"));
  equation
    y = asin(u);
  end Asin;

  block Acos "y = acos(u)"
    extends Interfaces.SISO(y(unit="rad"));
  equation
    y = acos(u);
  end Acos;

  block Atan "y = atan(u)"
    extends Interfaces.SISO(y(unit="rad"));
  equation
    y = atan(u);
  end Atan;

  block Atan2 "y = atan2(u1, u2)"
    extends Interfaces.SI2SO(y(unit="rad"));
  equation
    y = atan2(u1, u2);
  end Atan2;

  block Sinh "y = sinh(u)"
    extends Interfaces.SISO;
  equation
    y = sinh(u);
  end Sinh;

  block Cosh "y = cosh(u)"
    extends Interfaces.SISO;
  equation
    y = cosh(u);
  end Cosh;

  block Tanh "y = tanh(u)"
    extends Interfaces.SISO;
  equation
    y = tanh(u);
  end Tanh;

  block Exp "y = exp(u)"
    extends Interfaces.SISO;
  equation
    y = exp(u);
  end Exp;

  block Log "y = logarithm of u to the given base"
    extends Interfaces.SISO;
    parameter Real base = Modelica.Constants.e "Base of the logarithm";
  equation
    y = log(u)/log(base);
  end Log;

  block Log10 "y = log10(u)"
    extends Interfaces.SISO;
  equation
    y = log10(u);
  end Log10;

  block Power "y = base^u"
    parameter Real base = Modelica.Constants.e "Base of the power";
    parameter Boolean useExp = true "Not used: y is computed as base^u";
    extends Interfaces.SISO;
  equation
    y = base^u;
  end Power;

  block Exponentiation "y = u^exponent"
    parameter Real exponent = 2 "Exponent";
    extends Interfaces.SISO;
  equation
    y = u^exponent;
  end Exponentiation;

  block Max "y = max(u1, u2)"
    extends Interfaces.SI2SO;
  equation
    y = max(u1, u2);
  end Max;

  block Min "y = min(u1, u2)"
    extends Interfaces.SI2SO;
  equation
    y = min(u1, u2);
  end Min;

  block BooleanToReal "y = realTrue if u else realFalse"
    extends Modelica.Blocks.Icons.Block;
    parameter Real realTrue = 1.0 "Output when u is true";
    parameter Real realFalse = 0.0 "Output when u is false";
    Interfaces.BooleanInput u "Boolean input";
    Interfaces.RealOutput y "Real output";
  equation
    y = if u then realTrue else realFalse;
  end BooleanToReal;

  block RealToBoolean "y = u >= threshold"
    extends Modelica.Blocks.Icons.Block;
    parameter Real threshold = 0.5 "Switching threshold";
    Interfaces.RealInput u "Real input";
    Interfaces.BooleanOutput y "Boolean output";
  equation
    y = u >= threshold;
  end RealToBoolean;

  block IntegerToReal "y = u"
    extends Modelica.Blocks.Icons.Block;
    Interfaces.IntegerInput u "Integer input";
    Interfaces.RealOutput y "Real output";
  equation
    y = u;
  end IntegerToReal;
end Math;
