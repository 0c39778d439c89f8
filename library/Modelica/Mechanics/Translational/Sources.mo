within Modelica.Mechanics.Translational;
package Sources "Force and motion sources"
  extends Modelica.Icons.SourcesPackage;

  model Position "Flange position follows a reference signal (exactly or through a filter)"
    extends Modelica.Mechanics.Translational.Interfaces.PartialElementaryOneFlangeAndSupport2(
      s(stateSelect=if exact then StateSelect.default else StateSelect.prefer));
    parameter Boolean exact = false "= true: exact tracking, = false: second order filter";
    parameter SI.Frequency f_crit = 50 "Cut-off frequency of the filter (exact = false)";
    SI.Velocity v(start=0, stateSelect=if exact then StateSelect.default else StateSelect.prefer)
      "Velocity relative to the support (exact = false), else dummy zero";
    SI.Acceleration a(start=0) "Acceleration relative to the support (exact = false), else dummy zero";
    Modelica.Blocks.Interfaces.RealInput s_ref(unit="m") "Reference position relative to the support";
  protected
    parameter SI.AngularFrequency w_crit = 2*Modelica.Constants.pi*f_crit "Cut-off angular frequency";
    constant Real af = 1.3617 "s coefficient of a 2nd order Bessel filter";
    constant Real bf = 0.6180 "s^2 coefficient of a 2nd order Bessel filter";
  initial equation
    if not exact then
      s = s_ref;
    end if;
  equation
    if exact then
      s = s_ref;
      v = 0;
      a = 0;
    else
      // s = s_ref/(1 + (af/w_crit)*p + (bf/w_crit^2)*p^2)
      v = der(s);
      a = der(v);
      (bf/w_crit^2)*a + (af/w_crit)*v + s = s_ref;
    end if;
  end Position;

  model Speed "Flange velocity follows a reference signal (exactly or through a filter)"
    extends Modelica.Mechanics.Translational.Interfaces.PartialElementaryOneFlangeAndSupport2(
      s(start=0, fixed=true, stateSelect=StateSelect.prefer));
    parameter Boolean exact = false "= true: exact tracking, = false: first order filter";
    parameter SI.Frequency f_crit = 50 "Cut-off frequency of the filter (exact = false)";
    SI.Velocity v(stateSelect=if exact then StateSelect.default else StateSelect.prefer)
      "Velocity relative to the support";
    SI.Acceleration a "Acceleration relative to the support (exact = false), else dummy zero";
    Modelica.Blocks.Interfaces.RealInput v_ref(unit="m/s") "Reference velocity relative to the support";
  protected
    parameter SI.AngularFrequency w_crit = 2*Modelica.Constants.pi*f_crit "Cut-off angular frequency";
  initial equation
    if not exact then
      v = v_ref;
    end if;
  equation
    v = der(s);
    if exact then
      v = v_ref;
      a = 0;
    else
      a = der(v);
      a = w_crit*(v_ref - v);
    end if;
  end Speed;

  model Accelerate "Flange acceleration given by an input signal"
    extends Modelica.Mechanics.Translational.Interfaces.PartialElementaryOneFlangeAndSupport2(
      s(start=0, fixed=true, stateSelect=StateSelect.prefer));
    SI.Velocity v(start=0, fixed=true, stateSelect=StateSelect.prefer) "Velocity relative to the support";
    SI.Acceleration a "Acceleration relative to the support";
    Modelica.Blocks.Interfaces.RealInput a_ref(unit="m/s2") "Acceleration relative to the support";
  equation
    v = der(s);
    a = der(v);
    a = a_ref;
  end Accelerate;

  model Force "External force given by an input signal (acts on flange, reaction on support)"
    extends Modelica.Mechanics.Translational.Interfaces.PartialElementaryOneFlangeAndSupport2;
    Modelica.Blocks.Interfaces.RealInput f(unit="N") "Force accelerating the flange";
  equation
    flange.f = -f;
  end Force;

  model Force2 "Input force acting between two flanges"
    extends Translational.Interfaces.PartialTwoFlanges;
    Modelica.Blocks.Interfaces.RealInput f(unit="N") "Force pushing flange_b (and pulling flange_a back)";
  equation
    flange_a.f = f;
    flange_b.f = -f;
  end Force2;

  model ConstantForce "Constant force, independent of speed"
    extends Modelica.Mechanics.Translational.Interfaces.PartialForce;
    parameter SI.Force f_constant "Force (negative: load in positive direction of motion)";
  equation
    f = -f_constant;
  end ConstantForce;

  model ConstantSpeed "Constant speed, independent of force"
    extends Modelica.Mechanics.Translational.Interfaces.PartialForce;
    parameter SI.Velocity v_fixed "Fixed speed";
    SI.Velocity v "Velocity of the flange relative to the support";
  equation
    v = der(s);
    v = v_fixed;
  end ConstantSpeed;

  model ForceStep "Force step at startTime"
    extends Modelica.Mechanics.Translational.Interfaces.PartialForce;
    parameter SI.Force stepForce(start=1) "Height of the step (negative: load)";
    parameter SI.Force offsetForce(start=0) "Force before the step";
    parameter SI.Time startTime = 0 "Time of the step";
  equation
    f = -(offsetForce + (if time < startTime then 0 else stepForce));
  end ForceStep;

  model LinearSpeedDependentForce "Force proportional to speed"
    extends Modelica.Mechanics.Translational.Interfaces.PartialForce;
    parameter SI.Force f_nominal "Force at v_nominal (negative: load)";
    parameter Boolean ForceDirection = true "= true: same force direction for both directions of motion";
    parameter SI.Velocity v_nominal(min=Modelica.Constants.eps) "Nominal speed";
    SI.Velocity v "Velocity of the flange relative to the support";
  equation
    v = der(s);
    if ForceDirection then
      f = -f_nominal*abs(v/v_nominal);
    else
      f = -f_nominal*(v/v_nominal);
    end if;
  end LinearSpeedDependentForce;

  model QuadraticSpeedDependentForce "Force proportional to speed squared"
    extends Modelica.Mechanics.Translational.Interfaces.PartialForce;
    parameter SI.Force f_nominal "Force at v_nominal (negative: load)";
    parameter Boolean ForceDirection = true "= true: same force direction for both directions of motion";
    parameter SI.Velocity v_nominal(min=Modelica.Constants.eps) "Nominal speed";
    SI.Velocity v "Velocity of the flange relative to the support";
  equation
    v = der(s);
    if ForceDirection then
      f = -f_nominal*(v/v_nominal)^2;
    else
      // force direction follows the direction of motion (e.g. air drag with f_nominal < 0)
      f = -f_nominal*smooth(1, if v >= 0 then (v/v_nominal)^2 else -(v/v_nominal)^2);
    end if;
  end QuadraticSpeedDependentForce;

  model InverseSpeedDependentForce "Force inversely proportional to speed (constant power)"
    extends Modelica.Mechanics.Translational.Interfaces.PartialForce;
    parameter SI.Force f_nominal "Force at v_nominal (negative: load)";
    parameter Boolean ForceDirection = true "= true: same force direction for both directions of motion";
    parameter SI.Velocity v_nominal(min=Modelica.Constants.eps) "Nominal speed";
    parameter SI.Velocity v0(final min=Modelica.Constants.eps, start=0.1)
      "Below this speed the force is linear in speed (regularization)";
    SI.Velocity v "Velocity of the flange relative to the support";
  equation
    v = der(s);
    if ForceDirection then
      // constant force below v0 keeps the force finite at standstill
      f = -f_nominal*v_nominal/max(abs(v), v0);
    else
      // linear through zero below v0, continuous at |v| = v0
      f = -f_nominal*(if abs(v) < v0 then v*v_nominal/(v0*v0) else v_nominal/v);
    end if;
  end InverseSpeedDependentForce;

  model SignForce "Constant force that changes sign with the direction of motion"
    extends Modelica.Mechanics.Translational.Interfaces.PartialForce;
    parameter SI.Force f_nominal "Force magnitude (negative: load)";
    parameter Modelica.Blocks.Types.Regularization reg = Modelica.Blocks.Types.Regularization.Exp
      "Shape of the transition around zero speed";
    parameter SI.Velocity v0(final min=Modelica.Constants.eps, start=0.1) "Width of the transition";
    SI.Velocity v "Velocity of the flange relative to the support";
  equation
    v = der(s);
    if reg == Modelica.Blocks.Types.Regularization.Exp then
      f = -f_nominal*tanh(v/(0.02*v0));
    elseif reg == Modelica.Blocks.Types.Regularization.Sine then
      f = -f_nominal*smooth(1, if abs(v) >= v0 then sign(v) else sin(Modelica.Constants.pi/2*v/v0));
    elseif reg == Modelica.Blocks.Types.Regularization.Linear then
      f = -f_nominal*(if abs(v) >= v0 then sign(v) else v/v0);
    else
      f = -f_nominal*smooth(0, if abs(v) >= v0 then sign(v) else sign(v)*(1 - cos(Modelica.Constants.pi/2*v/v0)));
    end if;
  end SignForce;

  model Move "Flange position, speed and acceleration given by an input vector {s, v, a}"
    extends Modelica.Mechanics.Translational.Interfaces.PartialElementaryOneFlangeAndSupport2;
    Modelica.Blocks.Interfaces.RealInput u[3] "{position, velocity, acceleration} relative to the support";
  protected
    function position "Position with its derivatives given as further inputs"
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
    s = position(u, time);
  end Move;
end Sources;
