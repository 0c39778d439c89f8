within Modelica.Blocks;
package Nonlinear "Static nonlinear blocks"
  extends Modelica.Icons.Package;

  block Limiter "y = u clipped to [uMin, uMax]"
    parameter Real uMax(start=1) "Upper limit";
    parameter Real uMin = -uMax "Lower limit";
    parameter Boolean strict = false "= true: no events at the limits (noEvent)";
    parameter Types.LimiterHomotopy homotopyType = Modelica.Blocks.Types.LimiterHomotopy.Linear
      "Simplified model used by homotopy initialization";
    extends Interfaces.SISO;
  protected
    Real clipped "u clipped to the limits";
    Real simplified "Stand-in for the limiter during homotopy initialization";
  equation
    assert(uMax >= uMin, "Limiter: uMax must not be smaller than uMin");
    clipped = if strict then smooth(0, noEvent(if u > uMax then uMax elseif u < uMin then uMin else u))
      else smooth(0, if u > uMax then uMax elseif u < uMin then uMin else u);
    simplified = if homotopyType == Types.LimiterHomotopy.UpperLimit then uMax
      elseif homotopyType == Types.LimiterHomotopy.LowerLimit then uMin else u;
    if homotopyType == Types.LimiterHomotopy.NoHomotopy then
      y = clipped;
    else
      y = homotopy(actual=clipped, simplified=simplified);
    end if;
  end Limiter;

  block VariableLimiter "y = u clipped to the limits given by inputs limit1 (upper) and limit2 (lower)"
    extends Interfaces.SISO;
    parameter Boolean strict = false "= true: no events at the limits (noEvent)";
    parameter Types.VariableLimiterHomotopy homotopyType = Modelica.Blocks.Types.VariableLimiterHomotopy.Linear
      "Simplified model used by homotopy initialization";
    parameter Real ySimplified = 0 "Output of the simplified model (homotopyType = Fixed)";
    Interfaces.RealInput limit1 "Upper limit";
    Interfaces.RealInput limit2 "Lower limit";
  protected
    Real clipped "u clipped to the limits";
  equation
    assert(limit1 >= limit2, "VariableLimiter: limit1 must not be smaller than limit2");
    clipped = if strict then smooth(0, noEvent(if u > limit1 then limit1 elseif u < limit2 then limit2 else u))
      else smooth(0, if u > limit1 then limit1 elseif u < limit2 then limit2 else u);
    if homotopyType == Types.VariableLimiterHomotopy.NoHomotopy then
      y = clipped;
    elseif homotopyType == Types.VariableLimiterHomotopy.Linear then
      y = homotopy(actual=clipped, simplified=u);
    else
      y = homotopy(actual=clipped, simplified=ySimplified);
    end if;
  end VariableLimiter;

  block DeadZone "y = 0 inside [uMin, uMax], u minus the nearest limit outside"
    parameter Real uMax(start=1) "Upper end of the dead zone";
    parameter Real uMin = -uMax "Lower end of the dead zone";
    extends Interfaces.SISO;
  equation
    assert(uMax >= uMin, "DeadZone: uMax must not be smaller than uMin");
    y = homotopy(actual=smooth(0, if u > uMax then u - uMax elseif u < uMin then u - uMin else 0), simplified=u);
  end DeadZone;

  block SlewRateLimiter "Output follows the input with a limited rate of change"
    extends Interfaces.SISO;
    parameter Real Rising(min=Modelica.Constants.small) = 1 "Largest rising slope (per second)";
    parameter Real Falling(max=-Modelica.Constants.small) = -Rising "Largest falling slope (per second)";
    parameter SI.Time Td(min=Modelica.Constants.small) = 0.001 "Time constant of the tracking derivative";
    parameter Modelica.Blocks.Types.Init initType = Modelica.Blocks.Types.Init.SteadyState "Initialization";
    parameter Real y_start = 0 "Initial (or guess) value of the output";
    parameter Boolean strict = false "= true: no events at the limits (noEvent)";
  protected
    Real rate "Unlimited tracking rate";
  initial equation
    if initType == Modelica.Blocks.Types.Init.SteadyState then
      y = u;
    elseif initType == Modelica.Blocks.Types.Init.InitialState
        or initType == Modelica.Blocks.Types.Init.InitialOutput then
      y = y_start;
    end if;
  equation
    // y tracks u with time constant Td, but never faster than the allowed slopes
    rate = (u - y)/Td;
    if strict then
      der(y) = smooth(0, noEvent(if rate < Falling then Falling elseif rate > Rising then Rising else rate));
    else
      der(y) = if rate < Falling then Falling elseif rate > Rising then Rising else rate;
    end if;
  end SlewRateLimiter;
end Nonlinear;
