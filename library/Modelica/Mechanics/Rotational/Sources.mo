within Modelica.Mechanics.Rotational;
package Sources "Torque and motion sources"
  extends Modelica.Icons.SourcesPackage;

  model Position "Flange angle follows a reference angle signal (exactly or through a filter)"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialElementaryOneFlangeAndSupport2;
    parameter Boolean exact = false "= true: exact tracking, = false: second order filter";
    parameter SI.Frequency f_crit = 50 "Cut-off frequency of the filter (exact = false)";
    SI.Angle phi(stateSelect=if exact then StateSelect.default else StateSelect.prefer)
      "Angle of the flange relative to the support";
    SI.AngularVelocity w(start=0, stateSelect=if exact then StateSelect.default else StateSelect.prefer)
      "Speed relative to the support (exact = false), else dummy zero";
    SI.AngularAcceleration a(start=0) "Acceleration relative to the support (exact = false), else dummy zero";
    Modelica.Blocks.Interfaces.RealInput phi_ref(final quantity="Angle", final unit="rad", displayUnit="deg")
      "Reference angle relative to the support";
  protected
    parameter SI.AngularFrequency w_crit = 2*Modelica.Constants.pi*f_crit "Cut-off angular frequency";
    constant Real af = 1.3617 "s coefficient of a 2nd order Bessel filter";
    constant Real bf = 0.6180 "s^2 coefficient of a 2nd order Bessel filter";
  initial equation
    if not exact then
      phi = phi_ref;
    end if;
  equation
    phi = flange.phi - phi_support;
    if exact then
      phi = phi_ref;
      w = 0;
      a = 0;
    else
      // phi = phi_ref/(1 + (af/w_crit)*s + (bf/w_crit^2)*s^2)
      w = der(phi);
      a = der(w);
      (bf/w_crit^2)*a + (af/w_crit)*w + phi = phi_ref;
    end if;
  end Position;

  model Speed "Flange speed follows a reference speed signal (exactly or through a filter)"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialElementaryOneFlangeAndSupport2;
    parameter Boolean exact = false "= true: exact tracking, = false: first order filter";
    parameter SI.Frequency f_crit = 50 "Cut-off frequency of the filter (exact = false)";
    SI.Angle phi(start=0, fixed=true, stateSelect=StateSelect.prefer) "Angle of the flange relative to the support";
    SI.AngularVelocity w(stateSelect=if exact then StateSelect.default else StateSelect.prefer)
      "Speed relative to the support";
    SI.AngularAcceleration a "Acceleration relative to the support (exact = false), else dummy zero";
    Modelica.Blocks.Interfaces.RealInput w_ref(unit="rad/s") "Reference speed relative to the support";
  protected
    parameter SI.AngularFrequency w_crit = 2*Modelica.Constants.pi*f_crit "Cut-off angular frequency";
  initial equation
    if not exact then
      w = w_ref;
    end if;
  equation
    phi = flange.phi - phi_support;
    w = der(phi);
    if exact then
      w = w_ref;
      a = 0;
    else
      // w = w_ref/(1 + s/w_crit)
      a = der(w);
      a = w_crit*(w_ref - w);
    end if;
  end Speed;

  model Accelerate "Flange acceleration given by an input signal"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialElementaryOneFlangeAndSupport2;
    SI.Angle phi(start=0, fixed=true, stateSelect=StateSelect.prefer) "Angle of the flange relative to the support";
    SI.AngularVelocity w(start=0, fixed=true, stateSelect=StateSelect.prefer) "Speed relative to the support";
    SI.AngularAcceleration a "Acceleration relative to the support";
    Modelica.Blocks.Interfaces.RealInput a_ref(unit="rad/s2") "Acceleration relative to the support";
  equation
    phi = flange.phi - phi_support;
    w = der(phi);
    a = der(w);
    a = a_ref;
  end Accelerate;

  model Move "Flange angle, speed and acceleration given by an input vector {phi, w, a}"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialElementaryOneFlangeAndSupport2;
    SI.Angle phi "Angle of the flange relative to the support";
    Modelica.Blocks.Interfaces.RealInput u[3] "{angle, speed, acceleration} relative to the support";
  protected
    function position "Angle with its derivatives given as further inputs"
      extends Modelica.Icons.Function;
      input Real q_qd_qdd[3];
      input Real dummy "Only to get a time dependent argument";
      output Real q;
    algorithm
      q := q_qd_qdd[1];
      annotation(derivative(noDerivative=q_qd_qdd) = position_der);
    end position;

    function position_der "Time derivative of position"
      extends Modelica.Icons.Function;
      input Real q_qd_qdd[3];
      input Real dummy;
      input Real dummy_der;
      output Real qd;
    algorithm
      qd := q_qd_qdd[2];
      annotation(derivative(noDerivative=q_qd_qdd, order=2) = position_der2);
    end position_der;

    function position_der2 "Second time derivative of position"
      extends Modelica.Icons.Function;
      input Real q_qd_qdd[3];
      input Real dummy;
      input Real dummy_der;
      input Real dummy_der2;
      output Real qdd;
    algorithm
      qdd := q_qd_qdd[3];
    end position_der2;
  equation
    phi = flange.phi - phi_support;
    phi = position(u, time);
  end Move;

  model Torque "External torque given by an input signal (acts on flange, reaction on support)"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialElementaryOneFlangeAndSupport2;
    Modelica.Blocks.Interfaces.RealInput tau(unit="N.m") "Torque accelerating the flange";
  equation
    flange.tau = -tau;
  end Torque;

  model Torque2 "Input torque acting between two flanges"
    extends Rotational.Interfaces.PartialTwoFlanges;
    Modelica.Blocks.Interfaces.RealInput tau(unit="N.m") "Torque driving the flange_b side forward (the flange_a side gets the reaction -tau)";
  equation
    flange_a.tau = tau;
    flange_b.tau = -tau;
  end Torque2;

  model ConstantTorque "Constant torque, independent of speed"
    extends Rotational.Interfaces.PartialTorque;
    parameter SI.Torque tau_constant "Torque (negative: load in positive direction of rotation)";
    SI.AngularVelocity w "Speed of the flange relative to the support";
    SI.Torque tau "Torque accelerating the flange (= -flange.tau)";
  equation
    w = der(phi);
    tau = -flange.tau;
    tau = tau_constant;
  end ConstantTorque;

  model ConstantSpeed "Constant speed, independent of torque"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialTorque;
    SI.AngularVelocity w "Speed of the flange relative to the support";
    parameter SI.AngularVelocity w_fixed "Fixed speed";
  equation
    w = der(phi);
    w = w_fixed;
  end ConstantSpeed;

  model TorqueStep "Torque step at startTime"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialTorque;
    parameter SI.Torque stepTorque(start=1) "Height of the step (negative: load)";
    parameter SI.Torque offsetTorque(start=0) "Torque before the step";
    parameter SI.Time startTime = 0 "Time of the step";
    SI.Torque tau "Torque accelerating the flange (= -flange.tau)";
  equation
    tau = -flange.tau;
    tau = offsetTorque + (if time < startTime then 0 else stepTorque);
  end TorqueStep;

  model LinearSpeedDependentTorque "Torque proportional to speed"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialTorque;
    parameter SI.Torque tau_nominal "Torque at w_nominal (negative: load)";
    parameter Boolean TorqueDirection = true "= true: same torque direction for both directions of rotation";
    parameter SI.AngularVelocity w_nominal(min=Modelica.Constants.eps) "Nominal speed";
    SI.AngularVelocity w "Speed of the flange relative to the support";
    SI.Torque tau "Torque accelerating the flange (= -flange.tau)";
  equation
    w = der(phi);
    tau = -flange.tau;
    if TorqueDirection then
      tau = tau_nominal*abs(w/w_nominal);
    else
      tau = tau_nominal*(w/w_nominal);
    end if;
  end LinearSpeedDependentTorque;

  model QuadraticSpeedDependentTorque "Torque proportional to speed squared"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialTorque;
    parameter SI.Torque tau_nominal "Torque at w_nominal (negative: load)";
    parameter Boolean TorqueDirection = true "= true: same torque direction for both directions of rotation";
    parameter SI.AngularVelocity w_nominal(min=Modelica.Constants.eps) "Nominal speed";
    SI.AngularVelocity w "Speed of the flange relative to the support";
    SI.Torque tau "Torque accelerating the flange (= -flange.tau)";
  equation
    w = der(phi);
    tau = -flange.tau;
    if TorqueDirection then
      tau = tau_nominal*(w/w_nominal)^2;
    else
      // torque direction follows the direction of rotation
      tau = tau_nominal*smooth(1, if w >= 0 then (w/w_nominal)^2 else -(w/w_nominal)^2);
    end if;
  end QuadraticSpeedDependentTorque;

  model InverseSpeedDependentTorque "Torque inversely proportional to speed (constant power)"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialTorque;
    parameter SI.Torque tau_nominal "Torque at w_nominal (negative: load)";
    parameter Boolean TorqueDirection = true "= true: same torque direction for both directions of rotation";
    parameter SI.AngularVelocity w_nominal(min=Modelica.Constants.eps) "Nominal speed";
    parameter SI.AngularVelocity w0(final min=Modelica.Constants.eps, start=0.1)
      "Below this speed the torque is linear in speed (regularization)";
    SI.AngularVelocity w "Speed of the flange relative to the support";
    SI.Torque tau "Torque accelerating the flange (= -flange.tau)";
  equation
    w = der(phi);
    tau = -flange.tau;
    if TorqueDirection then
      // constant torque below w0 keeps the torque finite at standstill
      tau = tau_nominal*w_nominal/max(abs(w), w0);
    else
      // linear through zero below w0, continuous at |w| = w0
      tau = tau_nominal*(if abs(w) < w0 then w*w_nominal/(w0*w0) else w_nominal/w);
    end if;
  end InverseSpeedDependentTorque;

  model SignTorque "Constant torque that changes sign with the direction of rotation"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialTorque;
    parameter SI.Torque tau_nominal "Torque magnitude (negative: load)";
    parameter Modelica.Blocks.Types.Regularization reg = Modelica.Blocks.Types.Regularization.Exp
      "Shape of the transition around zero speed";
    parameter SI.AngularVelocity w0(final min=Modelica.Constants.eps, start=0.1) "Width of the transition";
    SI.AngularVelocity w "Speed of the flange relative to the support";
    SI.Torque tau "Torque accelerating the flange (= -flange.tau)";
  equation
    w = der(phi);
    tau = -flange.tau;
    if reg == Modelica.Blocks.Types.Regularization.Exp then
      tau = tau_nominal*tanh(w/(0.02*w0));
    elseif reg == Modelica.Blocks.Types.Regularization.Sine then
      tau = tau_nominal*smooth(1, if abs(w) >= w0 then sign(w) else sin(Modelica.Constants.pi/2*w/w0));
    elseif reg == Modelica.Blocks.Types.Regularization.Linear then
      tau = tau_nominal*(if abs(w) >= w0 then sign(w) else w/w0);
    else
      tau = tau_nominal*smooth(0, if abs(w) >= w0 then sign(w) else sign(w)*(1 - cos(Modelica.Constants.pi/2*w/w0)));
    end if;
  end SignTorque;
end Sources;
