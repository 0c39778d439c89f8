within Modelica.Blocks;
package Continuous "Linear continuous-time blocks and controllers"
  extends Modelica.Icons.Package;

  block Integrator "y = k * integral of u (optional reset to a set value)"
    import Modelica.Blocks.Types.Init;
    parameter Real k = 1 "Integrator gain";
    parameter Boolean use_reset = false "= true: enable the reset input";
    parameter Boolean use_set = false "= true: enable the set input (value after a reset)";
    parameter Init initType = Init.InitialState "Initialization";
    parameter Real y_start = 0 "Initial (or guess) value of the output";
    extends Interfaces.SISO(y(start=y_start));
    Modelica.Blocks.Interfaces.BooleanInput reset if use_reset "Rising edge resets the output";
    Modelica.Blocks.Interfaces.RealInput set if use_reset and use_set "Output value after a reset";
  protected
    Modelica.Blocks.Interfaces.BooleanOutput local_reset "Reset signal (false if not enabled)";
    Modelica.Blocks.Interfaces.RealOutput local_set "Value after a reset";
  initial equation
    if initType == Init.SteadyState then
      der(y) = 0;
    elseif initType == Init.InitialState or initType == Init.InitialOutput then
      y = y_start;
    end if;
  equation
    connect(reset, local_reset);
    connect(set, local_set);
    if not use_reset then
      local_reset = false;
    end if;
    if not (use_reset and use_set) then
      local_set = y_start;
    end if;
    when local_reset then
      reinit(y, local_set);
    end when;
    der(y) = k*u;
  end Integrator;

  block LimIntegrator "Integrator whose output stays within [outMin, outMax]"
    import Modelica.Blocks.Types.Init;
    parameter Real k = 1 "Integrator gain";
    parameter Real outMax(start=1) "Upper limit of the output";
    parameter Real outMin = -outMax "Lower limit of the output";
    parameter Boolean use_reset = false "= true: enable the reset input";
    parameter Boolean use_set = false "= true: enable the set input (value after a reset)";
    parameter Init initType = Init.InitialState "Initialization";
    parameter Boolean limitsAtInit = true "= false: limits ignored during initialization";
    parameter Real y_start = 0 "Initial (or guess) value of the output";
    parameter Boolean strict = false "= true: no events at the limits (noEvent)";
    extends Interfaces.SISO(y(start=y_start));
    Modelica.Blocks.Interfaces.BooleanInput reset if use_reset "Rising edge resets the output";
    Modelica.Blocks.Interfaces.RealInput set if use_reset and use_set "Output value after a reset";
  protected
    Modelica.Blocks.Interfaces.BooleanOutput local_reset "Reset signal (false if not enabled)";
    Modelica.Blocks.Interfaces.RealOutput local_set "Value after a reset";
    Boolean pushingOut "Integration would leave the allowed range";
  initial equation
    if initType == Init.SteadyState then
      der(y) = 0;
    elseif initType == Init.InitialState or initType == Init.InitialOutput then
      y = y_start;
    end if;
  equation
    connect(reset, local_reset);
    connect(set, local_set);
    if not use_reset then
      local_reset = false;
    end if;
    if not (use_reset and use_set) then
      local_set = y_start;
    end if;
    when local_reset then
      reinit(y, min(outMax, max(outMin, local_set)));
    end when;
    if strict then
      pushingOut = noEvent(y < outMin and k*u < 0 or y > outMax and k*u > 0);
    else
      pushingOut = y < outMin and k*u < 0 or y > outMax and k*u > 0;
    end if;
    if initial() and not limitsAtInit then
      der(y) = k*u;
    else
      der(y) = if pushingOut then 0 else k*u;
    end if;
  end LimIntegrator;

  block Derivative "Approximate derivative: y = k*s/(T*s + 1)*u"
    import Modelica.Blocks.Types.Init;
    parameter Real k = 1 "Gain";
    parameter SI.Time T(min=Modelica.Constants.small) = 0.01 "Time constant (T > 0)";
    parameter Init initType = Init.NoInit "Initialization";
    parameter Real x_start = 0 "Initial (or guess) value of the state";
    parameter Real y_start = 0 "Initial value of the output";
    extends Interfaces.SISO;
    output Real x(start=x_start) "State: u filtered by 1/(T*s + 1)";
  protected
    parameter Boolean zeroGain = abs(k) < Modelica.Constants.eps "Gain is zero: output is zero";
  initial equation
    if initType == Init.SteadyState then
      der(x) = 0;
    elseif initType == Init.InitialState then
      x = x_start;
    elseif initType == Init.InitialOutput then
      if zeroGain then
        x = u;
      else
        y = y_start;
      end if;
    end if;
  equation
    // k*s/(T*s+1) = (k/T)*(1 - 1/(T*s+1)): output is the scaled difference between u and its lag
    der(x) = if zeroGain then 0 else (u - x)/T;
    y = if zeroGain then 0 else k*(u - x)/T;
  end Derivative;

  block FirstOrder "First order lag: y = k/(T*s + 1)*u"
    import Modelica.Blocks.Types.Init;
    parameter Real k = 1 "Gain";
    parameter SI.Time T(start=1) "Time constant";
    parameter Init initType = Init.NoInit "Initialization";
    parameter Real y_start = 0 "Initial (or guess) value of the output";
    extends Interfaces.SISO(y(start=y_start));
  initial equation
    if initType == Init.SteadyState then
      der(y) = 0;
    elseif initType == Init.InitialState or initType == Init.InitialOutput then
      y = y_start;
    end if;
  equation
    T*der(y) = k*u - y;
  end FirstOrder;

  block SecondOrder "Second order system: y = k*w^2/(s^2 + 2*D*w*s + w^2)*u"
    import Modelica.Blocks.Types.Init;
    parameter Real k = 1 "Gain";
    parameter SI.AngularFrequency w(start=1) "Natural angular frequency";
    parameter Real D(start=1) "Damping ratio";
    parameter Init initType = Init.NoInit "Initialization";
    parameter Real y_start = 0 "Initial (or guess) value of the output";
    parameter Real yd_start = 0 "Initial (or guess) value of der(y)";
    extends Interfaces.SISO(y(start=y_start));
    output Real yd(start=yd_start) "der(y)";
  initial equation
    if initType == Init.SteadyState then
      der(y) = 0;
      der(yd) = 0;
    elseif initType == Init.InitialState or initType == Init.InitialOutput then
      y = y_start;
      yd = yd_start;
    end if;
  equation
    der(y) = yd;
    der(yd) = w*w*(k*u - y) - 2*D*w*yd;
  end SecondOrder;

  block PI "PI controller: y = k*(1 + 1/(T*s))*u"
    import Modelica.Blocks.Types.Init;
    parameter Real k = 1 "Gain";
    parameter SI.Time T(start=1, min=Modelica.Constants.small) "Integral time constant (T > 0)";
    parameter Init initType = Init.NoInit "Initialization";
    parameter Real x_start = 0 "Initial (or guess) value of the state";
    parameter Real y_start = 0 "Initial value of the output";
    extends Interfaces.SISO;
    output Real x(start=x_start) "Integral part: der(x) = u/T";
  initial equation
    if initType == Init.SteadyState then
      der(x) = 0;
    elseif initType == Init.InitialState then
      x = x_start;
    elseif initType == Init.InitialOutput then
      y = y_start;
    end if;
  equation
    der(x) = u/T;
    y = k*(u + x);
  end PI;

  block PID "PID controller in additive form: y = k*(u + I + D)"
    import Modelica.Blocks.Types.Init;
    extends Interfaces.SISO;
    parameter Real k = 1 "Gain";
    parameter SI.Time Ti(min=Modelica.Constants.small, start=0.5) "Integral time constant";
    parameter SI.Time Td(min=0, start=0.1) "Derivative time constant";
    parameter Real Nd(min=Modelica.Constants.small) = 10 "Derivative filter: T = Td/Nd";
    parameter Init initType = Init.InitialState "Initialization";
    parameter Real xi_start = 0 "Initial (or guess) value of the integrator state";
    parameter Real xd_start = 0 "Initial (or guess) value of the derivative block state";
    parameter Real y_start = 0 "Initial value of the output";
    constant SI.Time unitTime = 1;
    Blocks.Math.Gain P(k=1) "Proportional part";
    Blocks.Continuous.Integrator I(k=unitTime/Ti, y_start=xi_start,
      initType=if initType == Init.SteadyState then Init.SteadyState
        elseif initType == Init.InitialState then Init.InitialState else Init.NoInit) "Integral part";
    Blocks.Continuous.Derivative D(k=Td/unitTime, T=max(Td/Nd, 100*Modelica.Constants.eps), x_start=xd_start,
      initType=if initType == Init.SteadyState or initType == Init.InitialOutput then Init.SteadyState
        elseif initType == Init.InitialState then Init.InitialState else Init.NoInit) "Derivative part";
    Blocks.Math.Gain Gain(k=k) "Overall gain";
    Blocks.Math.Add3 Add "Sum of the three parts";
  initial equation
    if initType == Init.InitialOutput then
      y = y_start;
    end if;
  equation
    connect(u, P.u);
    connect(u, I.u);
    connect(u, D.u);
    connect(P.y, Add.u1);
    connect(I.y, Add.u2);
    connect(D.y, Add.u3);
    connect(Add.y, Gain.u);
    connect(Gain.y, y);
  end PID;

  block LimPID "P, PI, PD or PID controller with output limits, anti-windup, set-point weights and feed-forward"
    import Modelica.Blocks.Types.Init;
    import Modelica.Blocks.Types.SimpleController;
    extends Modelica.Blocks.Interfaces.SVcontrol;
    output Real controlError = u_s - u_m "Set point minus measurement";
    parameter Modelica.Blocks.Types.SimpleController controllerType = Modelica.Blocks.Types.SimpleController.PID
      "Controller structure";
    parameter Real k = 1 "Gain (non-zero)";
    parameter SI.Time Ti(min=Modelica.Constants.small) = 0.5 "Integral time constant";
    parameter SI.Time Td(min=0) = 0.1 "Derivative time constant";
    parameter Real yMax(start=1) "Upper limit of the output";
    parameter Real yMin = -yMax "Lower limit of the output";
    parameter Real wp(min=0) = 1 "Set-point weight of the proportional part";
    parameter Real wd(min=0) = 0 "Set-point weight of the derivative part";
    parameter Real Ni(min=100*Modelica.Constants.eps) = 0.9 "Anti-windup time constant is Ni*Ti";
    parameter Real Nd(min=100*Modelica.Constants.eps) = 10 "Derivative filter: T = Td/Nd";
    parameter Boolean withFeedForward = false "= true: enable the feed-forward input";
    parameter Real kFF = 1 "Gain of the feed-forward input";
    parameter Init initType = Init.InitialState "Initialization";
    parameter Real xi_start = 0 "Initial (or guess) value of the integrator state";
    parameter Real xd_start = 0 "Initial (or guess) value of the derivative block state";
    parameter Real y_start = 0 "Initial value of the output";
    parameter Modelica.Blocks.Types.LimiterHomotopy homotopyType = Modelica.Blocks.Types.LimiterHomotopy.Linear
      "Simplified limiter used by homotopy initialization";
    parameter Boolean strict = false "= true: no events at the limits (noEvent)";
    constant SI.Time unitTime = 1;
    Modelica.Blocks.Interfaces.RealInput u_ff if withFeedForward "Feed-forward input";
    Modelica.Blocks.Math.Add addP(k1=wp, k2=-1) "Weighted error for the proportional part";
    Modelica.Blocks.Math.Add addD(k1=wd, k2=-1) if with_D "Weighted error for the derivative part";
    Modelica.Blocks.Math.Gain P(k=1) "Proportional part";
    Modelica.Blocks.Continuous.Integrator I(k=unitTime/Ti, y_start=xi_start,
      initType=if initType == Init.SteadyState then Init.SteadyState
        elseif initType == Init.InitialState then Init.InitialState else Init.NoInit) if with_I
      "Integral part";
    Modelica.Blocks.Continuous.Derivative D(k=Td/unitTime, T=max(Td/Nd, 1.e-14), x_start=xd_start,
      initType=if initType == Init.SteadyState or initType == Init.InitialOutput then Init.SteadyState
        elseif initType == Init.InitialState then Init.InitialState else Init.NoInit) if with_D
      "Derivative part";
    Modelica.Blocks.Math.Gain gainPID(k=k) "Controller gain";
    Modelica.Blocks.Math.Add3 addPID "Sum of P, I and D parts";
    Modelica.Blocks.Math.Add3 addI(k2=-1) if with_I "Error plus anti-windup feedback";
    Modelica.Blocks.Math.Add addSat(k1=+1, k2=-1) if with_I "Amount by which the limiter clips";
    Modelica.Blocks.Math.Gain gainTrack(k=1/(k*Ni)) if with_I "Anti-windup gain";
    Modelica.Blocks.Nonlinear.Limiter limiter(uMax=yMax, uMin=yMin, strict=strict, homotopyType=homotopyType)
      "Output limiter";
  protected
    parameter Boolean with_I = controllerType == SimpleController.PI or controllerType == SimpleController.PID
      "Integral part present";
    parameter Boolean with_D = controllerType == SimpleController.PD or controllerType == SimpleController.PID
      "Derivative part present";
  public
    Modelica.Blocks.Sources.Constant Dzero(k=0) if not with_D "Zero instead of the derivative part";
    Modelica.Blocks.Sources.Constant Izero(k=0) if not with_I "Zero instead of the integral part";
    Modelica.Blocks.Sources.Constant FFzero(k=0) if not withFeedForward "Zero instead of the feed-forward input";
    Modelica.Blocks.Math.Add addFF(k1=1, k2=kFF) "Controller output plus feed-forward";
  initial equation
    if initType == Init.InitialOutput then
      gainPID.y = y_start;
    end if;
  equation
    assert(abs(k) >= Modelica.Constants.small, "LimPID: the gain k must be non-zero");
    // proportional path
    connect(u_s, addP.u1);
    connect(u_m, addP.u2);
    connect(addP.y, P.u);
    connect(P.y, addPID.u1);
    // derivative path
    connect(u_s, addD.u1);
    connect(u_m, addD.u2);
    connect(addD.y, D.u);
    connect(D.y, addPID.u2);
    connect(Dzero.y, addPID.u2);
    // integral path with anti-windup: the integrator also sees how much the limiter clips
    connect(u_s, addI.u1);
    connect(u_m, addI.u2);
    connect(gainTrack.y, addI.u3);
    connect(addI.y, I.u);
    connect(I.y, addPID.u3);
    connect(Izero.y, addPID.u3);
    connect(limiter.y, addSat.u1);
    connect(addFF.y, addSat.u2);
    connect(addSat.y, gainTrack.u);
    // gain, feed-forward and limiter
    connect(addPID.y, gainPID.u);
    connect(gainPID.y, addFF.u1);
    connect(u_ff, addFF.u2);
    connect(FFzero.y, addFF.u2);
    connect(addFF.y, limiter.u);
    connect(limiter.y, y);
  end LimPID;

  block TransferFunction "Linear transfer function y = (b[1]*s^nb-1 + ...)/(a[1]*s^na-1 + ...)*u"
    import Modelica.Blocks.Types.Init;
    extends Interfaces.SISO;
    parameter Real b[:] = {1} "Numerator coefficients, highest power of s first";
    parameter Real a[:](start={1}) "Denominator coefficients, highest power of s first";
    parameter Init initType = Init.NoInit "Initialization";
    parameter Real x_start[size(a, 1) - 1] = zeros(nx) "Initial (or guess) values of the states";
    parameter Real y_start = 0 "Initial value of the output";
    output Real x[size(a, 1) - 1](start=x_start) "States in controller canonical form (x[nx] is the lowest derivative)";
  protected
    parameter Integer na = size(a, 1) "Number of denominator coefficients";
    parameter Integer nb = size(b, 1) "Number of numerator coefficients";
    parameter Integer nx = size(a, 1) - 1 "Number of states";
    parameter Real bb[na] = cat(1, zeros(max(0, na - nb)), b) "Numerator padded to the length of a";
    Real z_n "Highest derivative of the internal signal z, where a(s)*z = u";
  initial equation
    if nx > 0 then
      if initType == Init.SteadyState then
        der(x) = zeros(nx);
      elseif initType == Init.InitialState then
        x = x_start;
      elseif initType == Init.InitialOutput then
        y = y_start;
        der(x[1:nx - 1]) = zeros(nx - 1);
      end if;
    end if;
  equation
    assert(size(b, 1) <= size(a, 1), "TransferFunction: the numerator degree must not exceed the denominator degree");
    if nx == 0 then
      z_n = u/a[1];
      y = bb[1]*z_n;
    else
      // x = {z^(nx-1), ..., z', z}; a[1]*z^(nx) + a[2:na]*x = u
      z_n = (u - a[2:na]*x)/a[1];
      der(x[1]) = z_n;
      der(x[2:nx]) = x[1:nx - 1];
      y = bb[1]*z_n + bb[2:na]*x;
    end if;
  end TransferFunction;

  block Der "y = der(u) (exact derivative)"
    extends Interfaces.SISO;
  equation
    y = der(u);
  end Der;
end Continuous;
