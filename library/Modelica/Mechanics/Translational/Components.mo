within Modelica.Mechanics.Translational;
package Components "Translational components: masses, compliances, contacts and friction"
  extends Modelica.Icons.Package;

  model Fixed "Flange fixed in the housing at position s0"
    parameter SI.Position s0 = 0 "Position of the housing";
    Interfaces.Flange_b flange "Flange fixed in the housing";
  equation
    flange.s = s0;
  end Fixed;

  model Mass "Sliding mass without friction"
    parameter SI.Mass m(min=0, start=1) "Mass";
    parameter StateSelect stateSelect = StateSelect.default "Priority to use s and v as states";
    extends Translational.Interfaces.PartialRigid(L=0, s(start=0, stateSelect=stateSelect));
    SI.Velocity v(start=0, stateSelect=stateSelect) "Absolute velocity (= der(s))";
    SI.Acceleration a(start=0) "Absolute acceleration (= der(v))";
  equation
    v = der(s);
    a = der(v);
    // Newton's second law: the forces at both flanges accelerate the mass
    m*a = flange_a.f + flange_b.f;
  end Mass;

  model Rod "Massless rigid rod of length L"
    extends Translational.Interfaces.PartialRigid;
  equation
    0 = flange_a.f + flange_b.f;
  end Rod;

  model Spring "Linear translational spring"
    extends Translational.Interfaces.PartialCompliant;
    parameter SI.TranslationalSpringConstant c(final min=0, start=1) "Spring constant";
    parameter SI.Distance s_rel0 = 0 "Unstretched spring length";
  equation
    f = c*(s_rel - s_rel0);
  end Spring;

  model Damper "Linear translational damper"
    extends Translational.Interfaces.PartialCompliantWithRelativeStates;
    parameter SI.TranslationalDampingConstant d(final min=0, start=0) "Damping constant";
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
  equation
    f = d*v_rel;
    lossPower = f*v_rel;
  end Damper;

  model SpringDamper "Linear translational spring and damper in parallel"
    extends Translational.Interfaces.PartialCompliantWithRelativeStates;
    parameter SI.TranslationalSpringConstant c(final min=0, start=1) "Spring constant";
    parameter SI.TranslationalDampingConstant d(final min=0, start=1) "Damping constant";
    parameter SI.Position s_rel0 = 0 "Unstretched spring length";
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
  protected
    SI.Force f_c "Spring force";
    SI.Force f_d "Damping force";
  equation
    f_c = c*(s_rel - s_rel0);
    f_d = d*v_rel;
    f = f_c + f_d;
    lossPower = f_d*v_rel;
  end SpringDamper;

  model ElastoGap "Contact: spring-damper acting only when s_rel < s_rel0, and never pulling"
    extends Modelica.Mechanics.Translational.Interfaces.PartialCompliantWithRelativeStates;
    parameter SI.TranslationalSpringConstant c(final min=0, start=1) "Spring constant";
    parameter SI.TranslationalDampingConstant d(final min=0, start=1) "Damping constant";
    parameter SI.Position s_rel0 = 0 "Unstretched spring length (contact below it)";
    parameter SI.Force f_ref(min=0) = c*s_ref "Spring force at compression s_ref";
    parameter SI.Length s_ref(min=Modelica.Constants.eps) = 1 "Reference compression for f_ref";
    parameter Real n(final min=1) = 1 "Exponent of the spring force (1.5 for balls, 1 for plates)";
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
    Boolean contact "= true: the flanges are in contact";
  protected
    SI.Force f_c "Spring force (<= 0)";
    SI.Force f_d2 "Unlimited damping force";
    SI.Force f_d "Damping force, limited to |f_c|";
    Real ratio "Compression relative to s_ref";
  equation
    contact = s_rel < s_rel0;
    ratio = (s_rel - s_rel0)/s_ref;
    // Hertz-like spring force f_ref*|compression/s_ref|^n pushing the flanges apart (f < 0)
    f_c = smooth(1, noEvent(if contact then -f_ref*abs(ratio)^n else 0));
    f_d2 = if contact then d*v_rel else 0;
    // the damping force may not exceed the spring force in magnitude, so the
    // total force f_c + f_d is never positive: the contact pushes but never pulls
    f_d = smooth(0, noEvent(if contact then max(f_c, min(f_d2, -f_c)) else 0));
    f = f_c + f_d;
    lossPower = f_d*v_rel;
  end ElastoGap;

  model SupportFriction "Coulomb friction between the flanges and the support (force table over speed)"
    extends Modelica.Mechanics.Translational.Interfaces.PartialElementaryTwoFlangesAndSupport2;
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
    parameter Real f_pos[:, 2] = [0, 1] "Friction force [N] over speed [m/s] (speed >= 0)";
    parameter Modelica.Blocks.Types.Smoothness smoothness = Modelica.Blocks.Types.Smoothness.LinearSegments
      "Interpolation in f_pos";
    parameter Real peak(final min=1) = 1 "Static friction force is peak*f_pos[1, 2]";
    extends Translational.Interfaces.PartialFriction;
    SI.Position s "Position relative to the support (= flange_a.s - support.s)";
    SI.Force f "Friction force";
    SI.Velocity v "Velocity relative to the support";
    SI.Acceleration a "Acceleration relative to the support";
  equation
    assert(size(f_pos, 1) > 0, "SupportFriction: f_pos is empty");
    s = s_a;
    s_a = s_b;
    v = der(s);
    a = der(v);
    v_relfric = v;
    a_relfric = a;
    f0 = Modelica.Blocks.Tables.Internal.interpolateColumn(f_pos, 2, 0, smoothness);
    f0_max = peak*f0;
    free = false;
    flange_a.f + flange_b.f - f = 0;
    // the table gives the force for positive speed; backward sliding mirrors it
    f = if locked then sa*unitForce
      elseif startForward or (not startBackward and pre(mode) == Forward)
        then Modelica.Blocks.Tables.Internal.interpolateColumn(f_pos, 2, v, smoothness)
      else -Modelica.Blocks.Tables.Internal.interpolateColumn(f_pos, 2, -v, smoothness);
    lossPower = f*v_relfric;
  end SupportFriction;

  model Brake "Brake: Coulomb friction between the flanges and the support, normal force from an input"
    extends Modelica.Mechanics.Translational.Interfaces.PartialElementaryTwoFlangesAndSupport2;
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
    parameter Real mu_pos[:, 2] = [0, 0.5] "Sliding friction coefficient over speed [m/s] (speed >= 0)";
    parameter Modelica.Blocks.Types.Smoothness smoothness = Modelica.Blocks.Types.Smoothness.LinearSegments
      "Interpolation in mu_pos";
    parameter Real peak(final min=1) = 1 "Static friction coefficient is peak*mu_pos[1, 2]";
    parameter Real cgeo(final min=0) = 1 "Geometry factor: friction force = cgeo*mu*fn";
    parameter SI.Force fn_max(final min=0, start=1) "Maximum normal force";
    extends Translational.Interfaces.PartialFriction;
    SI.Position s "Position of the flanges relative to the support";
    SI.Force f "Brake friction force";
    SI.Velocity v "Velocity relative to the support";
    SI.Acceleration a "Acceleration relative to the support";
    Real mu "Friction coefficient";
    SI.Force fn "Normal force (= fn_max*f_normalized)";
    Modelica.Blocks.Interfaces.RealInput f_normalized "Normalized normal force (0..1)";
  protected
    final parameter Real mu0 = Modelica.Blocks.Tables.Internal.interpolateColumn(mu_pos, 2, 0, smoothness)
      "Sliding friction coefficient at zero speed";
  equation
    assert(size(mu_pos, 1) > 0, "Brake: mu_pos is empty");
    s = s_a;
    s = s_b;
    v = der(s);
    a = der(v);
    v_relfric = v;
    a_relfric = a;
    flange_a.f + flange_b.f - f = 0;
    fn = fn_max*f_normalized;
    f0 = mu0*cgeo*fn;
    f0_max = peak*f0;
    free = fn <= 0;
    mu = if startForward or (not startBackward and pre(mode) == Forward)
      then Modelica.Blocks.Tables.Internal.interpolateColumn(mu_pos, 2, v, smoothness)
      else -Modelica.Blocks.Tables.Internal.interpolateColumn(mu_pos, 2, -v, smoothness);
    f = if locked then sa*unitForce elseif free then 0 else mu*cgeo*fn;
    lossPower = f*v_relfric;
  end Brake;

  model MassWithStopAndFriction "Sliding mass with hard stops and Stribeck friction against the housing"
    extends Translational.Interfaces.PartialRigid(s(start=0, stateSelect=StateSelect.always));
    parameter SI.Position smax(start=25) "Right stop for the right end (flange_b) of the mass";
    parameter SI.Position smin(start=-25) "Left stop for the left end (flange_a) of the mass";
    parameter SI.Velocity v_small = 1e-3
      "Relative speed treated as zero after a reinit of the speed (only relevant if speed jumps occur)";
    SI.Velocity v(start=0, stateSelect=StateSelect.always) "Absolute velocity";
    SI.Acceleration a(start=0) "Absolute acceleration";
    parameter SI.Mass m(start=1) "Mass";
    parameter Real F_prop(final unit="N.s/m", final min=0, start=1) "Viscous friction coefficient";
    parameter SI.Force F_Coulomb(start=5) "Coulomb friction force";
    parameter SI.Force F_Stribeck(start=10) "Additional friction force at zero speed (Stribeck effect)";
    parameter Real fexp(final unit="s/m", final min=0, start=2) "Decay rate of the Stribeck force with speed";
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
    Integer stopped "Stop state: -1 at the left stop, 0 free, +1 at the right stop";
    // friction state machine (as in Interfaces.PartialFriction, but sliding is impossible into a stop)
    SI.Velocity v_relfric "Velocity of the friction surfaces (= v)";
    SI.Acceleration a_relfric "Acceleration of the friction surfaces (= a)";
    SI.Force f "Friction force";
    SI.Force f0 "Friction force at v = 0 when sliding";
    SI.Force f0_max "Largest friction force while stuck";
    Boolean free "= true: no friction and away from the stops";
    Real sa(unit="1") "Path parameter: holding force while locked, shifted acceleration while sliding";
    Boolean startForward(start=false, fixed=true) "= true: v = 0 and starting to slide forward";
    Boolean startBackward(start=false, fixed=true) "= true: v = 0 and starting to slide backward";
    Boolean locked(start=false) "= true: v = 0 and stuck (by friction or at a stop)";
    constant Integer Unknown = 3 "Mode not known";
    constant Integer Free = 2 "Element not engaged";
    constant Integer Forward = 1 "Sliding forward (v > 0)";
    constant Integer Stuck = 0 "v = 0";
    constant Integer Backward = -1 "Sliding backward (v < 0)";
    Integer mode(final min=Backward, final max=Unknown, start=Unknown, fixed=true)
      "Friction mode (-1 backward, 0 stuck, 1 forward, 2 free, 3 unknown)";
  protected
    constant SI.Acceleration unitAcceleration = 1;
    constant SI.Force unitForce = 1;
    Boolean roomAhead "The mass is left of its right stop";
    Boolean roomBehind "The mass is right of its left stop";
  equation
    roomAhead = s < smax - L/2;
    roomBehind = s > smin + L/2;

    startForward = pre(mode) == Stuck and roomAhead and (sa > f0_max/unitForce or pre(startForward) and sa > f0/unitForce)
      or pre(mode) == Backward and v_relfric > v_small
      or initial() and v_relfric > 0;
    startBackward = pre(mode) == Stuck and roomBehind and (sa < -f0_max/unitForce or pre(startBackward) and sa < -f0/unitForce)
      or pre(mode) == Forward and v_relfric < -v_small
      or initial() and v_relfric < 0;
    locked = not free and not (pre(mode) == Forward or startForward or pre(mode) == Backward or startBackward);
    a_relfric/unitAcceleration =
      if locked then 0
      elseif free then sa
      elseif startForward then sa - f0_max/unitForce
      elseif startBackward then sa + f0_max/unitForce
      elseif pre(mode) == Forward then sa - f0_max/unitForce
      else sa + f0_max/unitForce;
    mode = if free then Free
      elseif (pre(mode) == Forward or pre(mode) == Free or startForward) and v_relfric > 0 and roomAhead then Forward
      elseif (pre(mode) == Backward or pre(mode) == Free or startBackward) and v_relfric < 0 and roomBehind then Backward
      else Stuck;

    // friction law: viscous + Coulomb + Stribeck (decaying with speed)
    f0 = F_Coulomb + F_Stribeck;
    f0_max = 1.001*f0;
    free = f0 <= 0 and F_prop <= 0 and roomBehind and roomAhead;
    v = der(s);
    a = der(v);
    v_relfric = v;
    a_relfric = a;
    // Newton: flange forces minus friction accelerate the mass
    m*der(v) = flange_a.f + flange_b.f - f;
    f = if locked then sa*unitForce
      elseif free then 0
      elseif startForward then F_prop*v + F_Coulomb + F_Stribeck
      elseif startBackward then F_prop*v - F_Coulomb - F_Stribeck
      elseif pre(mode) == Forward then F_prop*v + F_Coulomb + F_Stribeck*exp(-fexp*abs(v))
      else F_prop*v - F_Coulomb - F_Stribeck*exp(-fexp*abs(v));
    lossPower = f*v_relfric;

    // hard stops: on reaching a stop the mass is put exactly on it and stops (inelastic impact)
    when initial() then
      assert(s > smin + L/2 or s >= smin + L/2 and v >= 0,
        "MassWithStopAndFriction: initial position is beyond the left stop (s - L/2 < smin)");
      assert(s < smax - L/2 or s <= smax - L/2 and v <= 0,
        "MassWithStopAndFriction: initial position is beyond the right stop (s + L/2 > smax)");
    end when;
    stopped = if s <= smin + L/2 then -1 elseif s >= smax - L/2 then +1 else 0;
    when stopped <> 0 then
      reinit(s, if stopped < 0 then smin + L/2 else smax - L/2);
      reinit(v, 0);
    end when;
  end MassWithStopAndFriction;

  model IdealGearR2T "Ideal rack/spindle: rotation to translation"
    extends Modelica.Mechanics.Rotational.Components.IdealGearR2T;
  end IdealGearR2T;

  model IdealRollingWheel "Wheel rolling without slip"
    extends Modelica.Mechanics.Rotational.Components.IdealRollingWheel;
  end IdealRollingWheel;

  model InitializeFlange "Initializes position, speed and acceleration of a flange from input signals"
    extends Modelica.Blocks.Icons.Block;
    parameter Boolean use_s_start = true "= true: flange position initialized from s_start";
    parameter Boolean use_v_start = true "= true: flange speed initialized from v_start";
    parameter Boolean use_a_start = true "= true: flange acceleration initialized from a_start";
    parameter StateSelect stateSelect = StateSelect.default "Priority to use flange position and speed as states";
    Modelica.Blocks.Interfaces.RealInput s_start(unit="m") if use_s_start "Initial position";
    Modelica.Blocks.Interfaces.RealInput v_start(unit="m/s") if use_v_start "Initial velocity";
    Modelica.Blocks.Interfaces.RealInput a_start(unit="m/s2") if use_a_start "Initial acceleration";
    Interfaces.Flange_b flange "Flange that is initialized (no force is exerted)";
    SI.Position s_flange(stateSelect=stateSelect) = flange.s "Flange position";
    SI.Velocity v_flange(stateSelect=stateSelect) = der(s_flange) "Flange velocity";
  protected
    Modelica.Blocks.Interfaces.RealOutput s_start_internal "s_start or 0";
    Modelica.Blocks.Interfaces.RealOutput v_start_internal "v_start or 0";
    Modelica.Blocks.Interfaces.RealOutput a_start_internal "a_start or 0";
  initial equation
    if use_s_start then
      s_flange = s_start_internal;
    end if;
    if use_v_start then
      v_flange = v_start_internal;
    end if;
    if use_a_start then
      der(v_flange) = a_start_internal;
    end if;
  equation
    connect(s_start, s_start_internal);
    connect(v_start, v_start_internal);
    connect(a_start, a_start_internal);
    if not use_s_start then
      s_start_internal = 0;
    end if;
    if not use_v_start then
      v_start_internal = 0;
    end if;
    if not use_a_start then
      a_start_internal = 0;
    end if;
    flange.f = 0;
  end InitializeFlange;

  model RelativeStates "Adds relative position and speed between two flanges as preferred states"
    extends Translational.Interfaces.PartialTwoFlanges;
    parameter StateSelect stateSelect = StateSelect.prefer "Priority to use s_rel and v_rel as states";
    SI.Position s_rel(start=0, stateSelect=stateSelect) "Relative position used as state";
    SI.Velocity v_rel(start=0, stateSelect=stateSelect) "Relative velocity used as state";
    SI.Acceleration a_rel(start=0) "Relative acceleration";
  equation
    s_rel = flange_b.s - flange_a.s;
    v_rel = der(s_rel);
    a_rel = der(v_rel);
    flange_a.f = 0;
    flange_b.f = 0;
  end RelativeStates;
end Components;
