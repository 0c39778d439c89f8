within Modelica.Mechanics.Rotational;
package Components "Rotational components: inertias, compliances, friction elements and gears"
  extends Modelica.Icons.Package;

  model Fixed "Flange fixed in the housing at angle phi0"
    parameter SI.Angle phi0 = 0 "Angle of the housing";
    Interfaces.Flange_b flange "Flange fixed in the housing";
  equation
    flange.phi = phi0;
  end Fixed;

  model Inertia "Rigid rotating body with moment of inertia J"
    extends Rotational.Interfaces.PartialTwoFlanges;
    parameter SI.Inertia J(min=0, start=1) "Moment of inertia";
    parameter StateSelect stateSelect = StateSelect.default "Priority to use phi and w as states";
    SI.Angle phi(stateSelect=stateSelect) "Absolute rotation angle";
    SI.AngularVelocity w(stateSelect=stateSelect) "Absolute angular velocity (= der(phi))";
    SI.AngularAcceleration a "Absolute angular acceleration (= der(w))";
  equation
    phi = flange_a.phi;
    phi = flange_b.phi;
    w = der(phi);
    a = der(w);
    // Newton's law for rotation: the torques at both flanges accelerate the body
    J*a = flange_a.tau + flange_b.tau;
  end Inertia;

  model Disc "Massless rigid disc; flange_b is turned by deltaPhi relative to flange_a"
    extends Rotational.Interfaces.PartialTwoFlanges;
    parameter SI.Angle deltaPhi = 0 "flange_b.phi - flange_a.phi";
    SI.Angle phi "Angle of the disc centre";
  equation
    flange_a.phi = phi - deltaPhi/2;
    flange_b.phi = phi + deltaPhi/2;
    0 = flange_a.tau + flange_b.tau;
  end Disc;

  model Spring "Linear rotational spring"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialCompliant;
    parameter SI.RotationalSpringConstant c(final min=0, start=1.0e5) "Spring constant";
    parameter SI.Angle phi_rel0 = 0 "Unstretched spring angle";
  equation
    tau = c*(phi_rel - phi_rel0);
  end Spring;

  model Damper "Linear rotational damper"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialCompliantWithRelativeStates;
    parameter SI.RotationalDampingConstant d(final min=0, start=0) "Damping constant";
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
  equation
    tau = d*w_rel;
    lossPower = tau*w_rel;
  end Damper;

  model SpringDamper "Linear rotational spring and damper in parallel"
    parameter SI.RotationalSpringConstant c(final min=0, start=1.0e5) "Spring constant";
    parameter SI.RotationalDampingConstant d(final min=0, start=0) "Damping constant";
    parameter SI.Angle phi_rel0 = 0 "Unstretched spring angle";
    extends Modelica.Mechanics.Rotational.Interfaces.PartialCompliantWithRelativeStates;
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
  protected
    SI.Torque tau_c "Spring torque";
    SI.Torque tau_d "Damping torque";
  equation
    tau_c = c*(phi_rel - phi_rel0);
    tau_d = d*w_rel;
    tau = tau_c + tau_d;
    lossPower = tau_d*w_rel;
  end SpringDamper;

  model ElastoBacklash "Backlash in series with a spring and damper (contact torque never pulls)"
    parameter SI.RotationalSpringConstant c(final min=Modelica.Constants.small, start=1.0e5)
      "Spring constant (c > 0)";
    parameter SI.RotationalDampingConstant d(final min=0, start=0) "Damping constant";
    parameter SI.Angle b(final min=0) = 0 "Total backlash";
    parameter SI.Angle phi_rel0 = 0 "Unstretched spring angle";
    extends Modelica.Mechanics.Rotational.Interfaces.PartialCompliantWithRelativeStates;
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
  protected
    final parameter SI.Angle bMax = b/2 "Upper end of the free play (phi_rel - phi_rel0)";
    final parameter SI.Angle bMin = -bMax "Lower end of the free play";
    constant SI.Angle bEps = 1e-10 "Backlash below this is treated as zero";
    SI.Torque tau_c "Spring torque (zero inside the free play)";
    SI.Torque tau_d "Damping torque d*w_rel";
    SI.Angle phi_diff = phi_rel - phi_rel0 "Deflection";
    SI.Torque tau_dc "Damping torque actually transmitted in contact";
    Boolean inContact "Deflection is outside the free play";
  equation
    inContact = abs(b) <= bEps or phi_diff > bMax or phi_diff < bMin;
    if initial() then
      // Make the characteristic strictly monotonic while initializing so that it can be
      // inverted: straight line of slope c/3 for |phi_diff| < 1.5*bMax, meeting the
      // contact characteristic at the ends of that band.
      tau_c = if phi_diff > 1.5*bMax then c*(phi_diff - bMax)
        elseif phi_diff < 1.5*bMin then c*(phi_diff - bMin) else (c/3)*phi_diff;
      tau_d = d*w_rel;
      tau_dc = tau_d;
      tau = tau_c + tau_d;
      lossPower = tau_d*w_rel;
    else
      tau_c = if abs(b) <= bEps then c*phi_diff
        elseif phi_diff > bMax then c*(phi_diff - bMax)
        elseif phi_diff < bMin then c*(phi_diff - bMin) else 0;
      tau_d = d*w_rel;
      // In contact the damping torque is limited to the magnitude of the spring torque:
      // the two surfaces can push but never pull each other.
      tau_dc = if abs(b) <= bEps then tau_d
        else smooth(0, noEvent(min(max(tau_d, -abs(tau_c)), abs(tau_c))));
      tau = if abs(b) <= bEps then tau_c + tau_d elseif inContact then tau_c + tau_dc else 0;
      // The power entering the element is tau*w_rel = tau_c*w_rel + tau_dc*w_rel; the first part
      // changes the spring energy, the second is dissipated. When the flanks separate faster than
      // the spring relaxes (tau_dc = -tau_c, no torque), the spring energy released is lost too.
      lossPower = if abs(b) <= bEps then tau_d*w_rel elseif inContact then tau_dc*w_rel else 0;
    end if;
  end ElastoBacklash;

  model ElastoBacklash2 "Backlash in series with a spring and damper; the torque may jump at contact start"
    parameter SI.RotationalSpringConstant c(final min=Modelica.Constants.small, start=1.0e5)
      "Spring constant (c > 0)";
    parameter SI.RotationalDampingConstant d(final min=0, start=0) "Damping constant";
    parameter SI.Angle b(final min=0) = 0 "Total backlash";
    parameter SI.Angle phi_rel0 = 0 "Unstretched spring angle";
    extends Modelica.Mechanics.Rotational.Interfaces.PartialCompliantWithRelativeStates;
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
  protected
    final parameter SI.Angle bMax = b/2 "Upper end of the free play (phi_rel - phi_rel0)";
    final parameter SI.Angle bMin = -bMax "Lower end of the free play";
    constant SI.Angle bEps = 1e-10 "Backlash below this is treated as zero";
    SI.Torque tau_c "Spring torque (zero inside the free play)";
    SI.Torque tau_d "Damping torque d*w_rel";
    SI.Angle phi_diff = phi_rel - phi_rel0 "Deflection";
    Boolean pushing "Contact torque does not pull";
  equation
    if initial() then
      tau_c = if phi_diff > 1.5*bMax then c*(phi_diff - bMax)
        elseif phi_diff < 1.5*bMin then c*(phi_diff - bMin) else (c/3)*phi_diff;
      tau_d = d*w_rel;
      pushing = true;
      tau = tau_c + tau_d;
      lossPower = tau_d*w_rel;
    else
      tau_c = if abs(b) <= bEps then c*phi_diff
        elseif phi_diff > bMax then c*(phi_diff - bMax)
        elseif phi_diff < bMin then c*(phi_diff - bMin) else 0;
      tau_d = d*w_rel;
      // with events: the full spring-damper torque acts while it pushes, nothing otherwise
      pushing = if abs(b) <= bEps then true
        elseif phi_diff > bMax then tau_c + tau_d > 0
        elseif phi_diff < bMin then tau_c + tau_d < 0 else false;
      tau = if pushing then tau_c + tau_d else 0;
      // Energy balance: while pushing the damper dissipates tau_d*w_rel; in contact but not
      // pushing no torque is transmitted, so the spring energy released (-tau_c*w_rel >= 0) is lost.
      lossPower = if pushing then tau_d*w_rel
        elseif abs(b) > bEps and (phi_diff > bMax or phi_diff < bMin) then -tau_c*w_rel else 0;
    end if;
  end ElastoBacklash2;

  model BearingFriction "Coulomb friction in a bearing (torque table over speed, stick-slip)"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialElementaryTwoFlangesAndSupport2;
    parameter Real tau_pos[:, 2] = [0, 1] "Friction torque [N.m] over speed [rad/s] (speed >= 0)";
    parameter Modelica.Blocks.Types.Smoothness smoothness = Modelica.Blocks.Types.Smoothness.LinearSegments
      "Interpolation in tau_pos";
    parameter Real peak(final min=1) = 1 "Static friction torque is peak*tau_pos[1, 2]";
    extends Rotational.Interfaces.PartialFriction;
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
    SI.Angle phi "Angle of the flanges relative to the support";
    SI.Torque tau "Friction torque";
    SI.AngularVelocity w "Angular velocity relative to the support";
    SI.AngularAcceleration a "Angular acceleration relative to the support";
  equation
    assert(size(tau_pos, 1) > 0, "BearingFriction: tau_pos is empty");
    phi = flange_a.phi - phi_support;
    flange_b.phi = flange_a.phi;
    w = der(phi);
    a = der(w);
    w_relfric = w;
    a_relfric = a;
    flange_a.tau + flange_b.tau - tau = 0;
    tau0 = Modelica.Blocks.Tables.Internal.interpolateColumn(tau_pos, 2, 0, smoothness);
    tau0_max = peak*tau0;
    free = false;
    // the table gives the torque for positive speed; backward sliding mirrors it
    tau = if locked then sa*unitTorque
      elseif startForward or (not startBackward and pre(mode) == Forward)
        then Modelica.Blocks.Tables.Internal.interpolateColumn(tau_pos, 2, w, smoothness)
      else -Modelica.Blocks.Tables.Internal.interpolateColumn(tau_pos, 2, -w, smoothness);
    lossPower = tau*w_relfric;
  end BearingFriction;

  model Brake "Brake: Coulomb friction between the flanges and the support, normal force from an input"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialElementaryTwoFlangesAndSupport2;
    parameter Real mu_pos[:, 2] = [0, 0.5] "Sliding friction coefficient over speed [rad/s] (speed >= 0)";
    parameter Modelica.Blocks.Types.Smoothness smoothness = Modelica.Blocks.Types.Smoothness.LinearSegments
      "Interpolation in mu_pos";
    parameter Real peak(final min=1) = 1 "Static friction coefficient is peak*mu_pos[1, 2]";
    parameter Real cgeo(final min=0) = 1 "Geometry factor: friction torque = cgeo*mu*fn";
    parameter SI.Force fn_max(final min=0, start=1) "Maximum normal force";
    extends Rotational.Interfaces.PartialFriction;
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
    SI.Angle phi "Angle of the flanges relative to the support";
    SI.Torque tau "Brake friction torque";
    SI.AngularVelocity w "Angular velocity relative to the support";
    SI.AngularAcceleration a "Angular acceleration relative to the support";
    Real mu "Friction coefficient";
    SI.Force fn "Normal force (= fn_max*f_normalized)";
    Modelica.Blocks.Interfaces.RealInput f_normalized "Normalized normal force (0..1)";
  protected
    final parameter Real mu0 = Modelica.Blocks.Tables.Internal.interpolateColumn(mu_pos, 2, 0, smoothness)
      "Sliding friction coefficient at zero speed";
  equation
    assert(size(mu_pos, 1) > 0, "Brake: mu_pos is empty");
    phi = flange_a.phi - phi_support;
    flange_b.phi = flange_a.phi;
    w = der(phi);
    a = der(w);
    w_relfric = w;
    a_relfric = a;
    flange_a.tau + flange_b.tau - tau = 0;
    fn = fn_max*f_normalized;
    tau0 = mu0*cgeo*fn;
    tau0_max = peak*tau0;
    free = fn <= 0;
    mu = if startForward or (not startBackward and pre(mode) == Forward)
      then Modelica.Blocks.Tables.Internal.interpolateColumn(mu_pos, 2, w, smoothness)
      else -Modelica.Blocks.Tables.Internal.interpolateColumn(mu_pos, 2, -w, smoothness);
    tau = if locked then sa*unitTorque elseif free then 0 else mu*cgeo*fn;
    lossPower = tau*w_relfric;
  end Brake;

  model Clutch "Clutch: Coulomb friction between two flanges, normal force from an input"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialCompliantWithRelativeStates;
    parameter Real mu_pos[:, 2] = [0, 0.5] "Sliding friction coefficient over relative speed [rad/s] (>= 0)";
    parameter Modelica.Blocks.Types.Smoothness smoothness = Modelica.Blocks.Types.Smoothness.LinearSegments
      "Interpolation in mu_pos";
    parameter Real peak(final min=1) = 1 "Static friction coefficient is peak*mu_pos[1, 2]";
    parameter Real cgeo(final min=0) = 1 "Geometry factor: friction torque = cgeo*mu*fn";
    parameter SI.Force fn_max(final min=0, start=1) "Maximum normal force";
    extends Rotational.Interfaces.PartialFriction;
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
    Real mu "Friction coefficient";
    SI.Force fn "Normal force (= fn_max*f_normalized)";
    Modelica.Blocks.Interfaces.RealInput f_normalized "Normalized normal force (0..1); engaged if > 0";
  protected
    final parameter Real mu0 = Modelica.Blocks.Tables.Internal.interpolateColumn(mu_pos, 2, 0, smoothness)
      "Sliding friction coefficient at zero speed";
  equation
    assert(size(mu_pos, 1) > 0, "Clutch: mu_pos is empty");
    w_relfric = w_rel;
    a_relfric = a_rel;
    fn = fn_max*f_normalized;
    free = fn <= 0;
    tau0 = mu0*cgeo*fn;
    tau0_max = peak*tau0;
    mu = if startForward or (not startBackward and pre(mode) == Forward)
      then Modelica.Blocks.Tables.Internal.interpolateColumn(mu_pos, 2, w_rel, smoothness)
      else -Modelica.Blocks.Tables.Internal.interpolateColumn(mu_pos, 2, -w_rel, smoothness);
    tau = if locked then sa*unitTorque elseif free then 0 else mu*cgeo*fn;
    lossPower = tau*w_relfric;
  end Clutch;

  model OneWayClutch "Freewheel in parallel with a clutch: locks only for w_rel <= 0"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialCompliantWithRelativeStates;
    parameter Real mu_pos[:, 2] = [0, 0.5] "Sliding friction coefficient over relative speed [rad/s] (>= 0)";
    parameter Modelica.Blocks.Types.Smoothness smoothness = Modelica.Blocks.Types.Smoothness.LinearSegments
      "Interpolation in mu_pos";
    parameter Real peak(final min=1) = 1 "Static friction coefficient is peak*mu_pos[1, 2]";
    parameter Real cgeo(final min=0) = 1 "Geometry factor: friction torque = cgeo*mu*fn";
    parameter SI.Force fn_max(final min=0, start=1) "Maximum normal force";
    parameter SI.AngularVelocity w_small = 1e10
      "Relative speed treated as zero after a reinit of the speed (only lower it if speed jumps occur)";
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
    Real u "Normalized normal force (0..1)";
    Real mu "Friction coefficient";
    SI.Force fn "Normal force (= fn_max*u)";
    Boolean startForward(start=false) "= true: w_rel = 0 and starting to slide forward";
    Boolean locked(start=false) "= true: w_rel = 0 and locked";
    Boolean stuck(start=false) "= true: w_rel = 0 (locked or starting to slide)";
    Modelica.Blocks.Interfaces.RealInput f_normalized "Normalized normal force (0..1); clutch engaged if > 0";
  protected
    SI.Torque tau0 "Friction torque at w_rel = 0 when sliding";
    SI.Torque tau0_max "Largest torque the locked element transmits";
    final parameter Real mu0 = Modelica.Blocks.Tables.Internal.interpolateColumn(mu_pos, 2, 0, smoothness)
      "Sliding friction coefficient at zero speed";
    Boolean free "= true: clutch not engaged (freewheel alone)";
    Real sa(final unit="1") "Path parameter: torque while locked, shifted acceleration while sliding";
    constant Real eps0 = 1.0e-4 "Relative hysteresis so that the freewheel alone can still lock";
    final parameter SI.Torque tau0_max_low = eps0*mu0*cgeo*fn_max "Break-away torque of the freewheel alone";
    parameter Real peak2 = max(peak, 1 + eps0) "Peak factor with a small hysteresis";
    constant SI.AngularAcceleration unitAngularAcceleration = 1;
    constant SI.Torque unitTorque = 1;
  equation
    assert(size(mu_pos, 1) > 0, "OneWayClutch: mu_pos is empty");
    u = f_normalized;
    free = u <= 0;
    fn = if free then 0 else fn_max*u;
    tau0 = mu0*cgeo*fn;
    tau0_max = if free then tau0_max_low else peak2*tau0;
    // Only forward sliding exists: backward relative motion is blocked by the freewheel.
    startForward = pre(stuck) and (sa > tau0_max/unitTorque or pre(startForward) and sa > tau0/unitTorque
      or w_rel > w_small) or initial() and w_rel > 0;
    locked = pre(stuck) and not startForward;
    mu = Modelica.Blocks.Tables.Internal.interpolateColumn(mu_pos, 2, w_rel, smoothness);
    a_rel = unitAngularAcceleration*(if locked then 0 else sa - tau0/unitTorque);
    tau = if locked then sa*unitTorque elseif free then 0 else mu*cgeo*fn;
    stuck = locked or w_rel <= 0;
    lossPower = if stuck then 0 else tau*w_rel;
  end OneWayClutch;

  model IdealGear "Ideal gear without inertia: flange_a.phi = ratio*flange_b.phi (relative to support)"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialElementaryTwoFlangesAndSupport2;
    parameter Real ratio(start=1) "Transmission ratio (flange_a.phi/flange_b.phi)";
    SI.Angle phi_a "Angle of flange_a relative to the support";
    SI.Angle phi_b "Angle of flange_b relative to the support";
  equation
    phi_a = flange_a.phi - phi_support;
    phi_b = flange_b.phi - phi_support;
    phi_a = ratio*phi_b;
    // no losses: the power flowing in at flange_a leaves at flange_b
    0 = ratio*flange_a.tau + flange_b.tau;
  end IdealGear;

  model LossyGear "Gear with speed dependent mesh efficiency and bearing friction (stuck/rolling)"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialElementaryTwoFlangesAndSupport2;
    parameter Real ratio(start=1) "Transmission ratio (flange_a.phi/flange_b.phi)";
    parameter Real lossTable[:, 5] = [0, 1, 1, 0, 0]
      "Rows {|w_a|, eta_mf1, eta_mf2, |tau_bf1|, |tau_bf2|} (mesh efficiencies, bearing friction)";
    parameter Modelica.Blocks.Types.Smoothness smoothness = Modelica.Blocks.Types.Smoothness.LinearSegments
      "Interpolation in lossTable";
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
    SI.Angle phi_a "Angle of flange_a relative to the support";
    SI.Angle phi_b "Angle of flange_b relative to the support";
    Real sa(final unit="1") "Path parameter: torque loss while stuck, shifted acceleration while rolling";
    SI.AngularVelocity w_a "Angular velocity of flange_a relative to the support";
    SI.AngularAcceleration a_a "Angular acceleration of flange_a relative to the support";
    Real interpolation_result[1, 4] "Table values at |w_a|";
    Real eta_mf1(unit="1") "Mesh efficiency when flange_a drives";
    Real eta_mf2(unit="1") "Mesh efficiency when flange_b drives";
    SI.Torque tau_bf_a "Bearing friction torque referred to flange_a";
    SI.Torque tau_eta "Mesh torque at flange_a (decides which side drives)";
    SI.Torque tau_bf1 "Bearing friction torque when flange_a drives";
    SI.Torque tau_bf2 "Bearing friction torque when flange_b drives";
    SI.Torque quadrant1 "Torque loss for w_a > 0 and flange_a driving";
    SI.Torque quadrant2 "Torque loss for w_a > 0 and flange_b driving";
    SI.Torque quadrant3 "Torque loss for w_a < 0 and flange_a driving";
    SI.Torque quadrant4 "Torque loss for w_a < 0 and flange_b driving";
    SI.Torque quadrant1_p "quadrant1 with the table values at w = 0";
    SI.Torque quadrant2_p "quadrant2 with the table values at w = 0";
    SI.Torque quadrant3_m "quadrant3 with the table values at w = 0";
    SI.Torque quadrant4_m "quadrant4 with the table values at w = 0";
    SI.Torque tauLoss "Torque loss at flange_a";
    SI.Torque tauLossMax "Torque loss for positive speed";
    SI.Torque tauLossMin "Torque loss for negative speed";
    SI.Torque tauLossMax_p "Torque loss for positive speed, table values at w = 0";
    SI.Torque tauLossMin_m "Torque loss for negative speed, table values at w = 0";
    Boolean tau_aPos(start=true) "Same as tau_etaPos";
    Boolean tau_etaPos(start=true) "= true: tau_eta >= 0 (flange_a drives)";
    Boolean startForward(start=false) "= true: starting to roll forward";
    Boolean startBackward(start=false) "= true: starting to roll backward";
    Boolean locked(start=false) "= true: gear is stuck";
    constant Integer Unknown = 3 "Mode not known";
    constant Integer Free = 2 "Ideal gear (no losses)";
    constant Integer Forward = 1 "Rolling forward (w_a > 0)";
    constant Integer Stuck = 0 "w_a = 0 (stuck or about to roll)";
    constant Integer Backward = -1 "Rolling backward (w_a < 0)";
    Integer mode(final min=Backward, final max=Unknown, start=Free, fixed=true)
      "Gear mode (-1 backward, 0 stuck, 1 forward, 2 ideal)";
    SI.Torque tau_eta_p "tau_eta assuming positive speed";
    SI.Torque tau_eta_m "tau_eta assuming negative speed";
    final parameter Boolean ideal = isIdealTable(lossTable) "= true: lossTable describes an ideal gear"
      annotation(Evaluate=true);
  protected
    constant SI.AngularAcceleration unitAngularAcceleration = 1;
    constant SI.Torque unitTorque = 1;
    parameter Real eta_mf1_0(unit="1") = lossAt(lossTable, 2, 0, smoothness) "eta_mf1 at w = 0";
    parameter Real eta_mf2_0(unit="1") = lossAt(lossTable, 3, 0, smoothness) "eta_mf2 at w = 0";
    parameter SI.Torque tau_bf1_0 = abs(lossAt(lossTable, 4, 0, smoothness)) "tau_bf1 at w = 0";
    parameter SI.Torque tau_bf2_0 = abs(lossAt(lossTable, 5, 0, smoothness)) "tau_bf2 at w = 0";
    parameter SI.Torque tau_bf_a_0 = bearingFrictionSideA(eta_mf1_0, eta_mf2_0, tau_bf1_0, tau_bf2_0)
      "tau_bf_a at w = 0";

    function isIdealTable "True if the table is the single loss-free row {0, 1, 1, 0, 0}"
      extends Modelica.Icons.Function;
      input Real table[:, 5];
      output Boolean result;
    protected
      constant Real tol = Modelica.Constants.eps;
    algorithm
      result := size(table, 1) == 1 and abs(table[1, 1]) <= tol and abs(table[1, 2] - 1) <= tol
        and abs(table[1, 3] - 1) <= tol and abs(table[1, 4]) <= tol and abs(table[1, 5]) <= tol;
    end isIdealTable;

    function lossAt "Column icol of the loss table at speed w"
      extends Modelica.Icons.Function;
      input Real table[:, 5];
      input Integer icol;
      input Real w;
      input Modelica.Blocks.Types.Smoothness smoothness;
      output Real y;
    algorithm
      y := Modelica.Blocks.Tables.Internal.interpolateColumn(table, icol, w, smoothness);
      annotation(derivative(zeroDerivative=table) = lossAtDer);
    end lossAt;

    function lossAtDer "Derivative of lossAt with respect to w (table fixed)"
      extends Modelica.Icons.Function;
      input Real table[:, 5];
      input Integer icol;
      input Real w;
      input Modelica.Blocks.Types.Smoothness smoothness;
      input Real dw;
      output Real dy;
    algorithm
      dy := Modelica.Blocks.Tables.Internal.interpolateColumnDer(table, icol, w, smoothness,
        Modelica.Blocks.Types.Extrapolation.LastTwoPoints, dw);
    end lossAtDer;

    function bearingFrictionSideA "Split of the bearing friction: part acting on side a"
      extends Modelica.Icons.Function;
      input Real eta1;
      input Real eta2;
      input Real tau1 "Bearing friction when side a drives: eta1*tau_a + tau_b/ratio";
      input Real tau2 "Bearing friction when side b drives: tau_a/eta2 + tau_b/ratio";
      output Real tau_a;
    protected
      constant Real tol = Modelica.Constants.eps;
    algorithm
      if abs(eta1 - 1) <= tol and abs(eta2 - 1) <= tol then
        // both efficiencies one: the split is not determined, take half
        tau_a := tau1/2;
      else
        tau_a := (tau1 - tau2)/(eta1 - 1/eta2);
      end if;
      annotation(derivative(zeroDerivative=eta1, zeroDerivative=eta2) = bearingFrictionSideADer);
    end bearingFrictionSideA;

    function bearingFrictionSideADer "Derivative of bearingFrictionSideA (efficiencies fixed)"
      extends Modelica.Icons.Function;
      input Real eta1;
      input Real eta2;
      input Real tau1;
      input Real tau2;
      input Real dtau1;
      input Real dtau2;
      output Real dtau_a;
    protected
      constant Real tol = Modelica.Constants.eps;
    algorithm
      if abs(eta1 - 1) <= tol and abs(eta2 - 1) <= tol then
        dtau_a := dtau1/2;
      else
        dtau_a := (dtau1 - dtau2)/(eta1 - 1/eta2);
      end if;
    end bearingFrictionSideADer;
  equation
    assert(abs(ratio) > 0, "LossyGear: ratio must not be zero");
    if ideal then
      interpolation_result = [1, 1, 0, 0];
    else
      for i in 1:4 loop
        interpolation_result[1, i] = lossAt(lossTable, i + 1, noEvent(abs(w_a)), smoothness);
      end for;
    end if;
    eta_mf1 = interpolation_result[1, 1];
    eta_mf2 = interpolation_result[1, 2];
    tau_bf1 = noEvent(abs(interpolation_result[1, 3]));
    tau_bf2 = noEvent(abs(interpolation_result[1, 4]));
    tau_bf_a = bearingFrictionSideA(eta_mf1, eta_mf2, tau_bf1, tau_bf2);

    // kinematics and torque balance (massless gear, tauLoss acts on side a)
    phi_a = flange_a.phi - phi_support;
    phi_b = flange_b.phi - phi_support;
    phi_a = ratio*phi_b;
    0 = flange_b.tau + ratio*(flange_a.tau - tauLoss);
    w_a = der(phi_a);
    a_a = der(w_a);

    // Break-away thresholds use the table values at zero speed
    tau_eta_p = flange_a.tau - tau_bf_a_0;
    tau_eta_m = flange_a.tau + tau_bf_a_0;
    quadrant1_p = (1 - eta_mf1_0)*flange_a.tau + tau_bf1_0;
    quadrant2_p = (1 - 1/eta_mf2_0)*flange_a.tau + tau_bf2_0;
    tauLossMax_p = if noEvent(tau_eta_p > 0) then quadrant1_p else quadrant2_p;
    quadrant4_m = (1 - 1/eta_mf2_0)*flange_a.tau - tau_bf2_0;
    quadrant3_m = (1 - eta_mf1_0)*flange_a.tau - tau_bf1_0;
    tauLossMin_m = if noEvent(tau_eta_m > 0) then quadrant4_m else quadrant3_m;

    // Losses while rolling, depending on which side drives
    quadrant1 = (1 - eta_mf1)*flange_a.tau + tau_bf1;
    quadrant2 = (1 - 1/eta_mf2)*flange_a.tau + tau_bf2;
    quadrant4 = (1 - 1/eta_mf2)*flange_a.tau - tau_bf2;
    quadrant3 = (1 - eta_mf1)*flange_a.tau - tau_bf1;
    tau_eta = if ideal or locked then flange_a.tau
      elseif startForward or pre(mode) == Forward then flange_a.tau - tau_bf_a
      else flange_a.tau + tau_bf_a;
    tau_etaPos = tau_eta >= 0;
    tau_aPos = tau_etaPos;
    tauLossMax = if tau_etaPos then quadrant1 else quadrant2;
    tauLossMin = if tau_etaPos then quadrant4 else quadrant3;

    // Stuck/rolling state machine (same idea as PartialFriction, with the loss torque as friction)
    startForward = pre(mode) == Stuck and sa > tauLossMax_p/unitTorque or initial() and w_a > 0;
    startBackward = pre(mode) == Stuck and sa < tauLossMin_m/unitTorque or initial() and w_a < 0;
    locked = not (ideal or pre(mode) == Forward or startForward or pre(mode) == Backward or startBackward);
    tauLoss = if ideal then 0 elseif locked then sa*unitTorque
      elseif startForward or pre(mode) == Forward then tauLossMax else tauLossMin;
    a_a = unitAngularAcceleration*(if locked then 0 else sa - tauLoss/unitTorque);
    mode = if ideal then Free
      elseif (pre(mode) == Forward or startForward) and w_a > 0 then Forward
      elseif (pre(mode) == Backward or startBackward) and w_a < 0 then Backward
      else Stuck;
    lossPower = tauLoss*w_a;
  end LossyGear;

  model IdealPlanetary "Ideal planetary gear: (1 + ratio)*carrier = sun + ratio*ring"
    parameter Real ratio(start=100/50) "Number of ring teeth / number of sun teeth";
    Interfaces.Flange_a sun "Sun gear flange";
    Interfaces.Flange_a carrier "Carrier flange";
    Interfaces.Flange_b ring "Ring gear flange";
  equation
    // Willis equation: speeds relative to the carrier are in the ratio -ratio
    (1 + ratio)*carrier.phi = sun.phi + ratio*ring.phi;
    // massless and lossless: torques follow from the virtual work of the kinematic constraint
    ring.tau = ratio*sun.tau;
    carrier.tau = -(1 + ratio)*sun.tau;
  end IdealPlanetary;

  model Gearbox "Gearbox: LossyGear in series with an elastic element with backlash"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialTwoFlangesAndSupport;
    parameter Real ratio(start=1) "Transmission ratio (flange_a.phi/flange_b.phi)";
    parameter Real lossTable[:, 5] = [0, 1, 1, 0, 0] "Mesh efficiencies and bearing friction (see LossyGear)";
    parameter SI.RotationalSpringConstant c(final min=Modelica.Constants.small, start=1.0e5)
      "Gear elasticity (spring constant)";
    parameter SI.RotationalDampingConstant d(final min=0, start=0) "Gear damping";
    parameter SI.Angle b(final min=0) = 0 "Total backlash";
    parameter StateSelect stateSelect = StateSelect.prefer "Priority to use phi_rel and w_rel as states";
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialConditionalHeatPort(final T=293.15);
    SI.Angle phi_rel(start=0, stateSelect=stateSelect, nominal=1e-4) = flange_b.phi - lossyGear.flange_b.phi
      "Deflection of the gear elasticity";
    SI.AngularVelocity w_rel(start=0, stateSelect=stateSelect) = der(phi_rel) "der(phi_rel)";
    SI.AngularAcceleration a_rel(start=0) = der(w_rel) "der(w_rel)";
    Rotational.Components.LossyGear lossyGear(final ratio=ratio, final lossTable=lossTable,
      final useSupport=true, final useHeatPort=true) "Gear with losses";
    Rotational.Components.ElastoBacklash elastoBacklash(final b=b, final c=c, final phi_rel0=0, final d=d,
      final stateSelect=StateSelect.never, final useHeatPort=true) "Gear elasticity and backlash";
  equation
    connect(flange_a, lossyGear.flange_a);
    connect(lossyGear.flange_b, elastoBacklash.flange_a);
    connect(elastoBacklash.flange_b, flange_b);
    connect(lossyGear.support, internalSupport);
    connect(lossyGear.heatPort, internalHeatPort);
    connect(elastoBacklash.heatPort, internalHeatPort);
  end Gearbox;

  model IdealGearR2T "Ideal rack/spindle: rotation to translation, flangeR.phi = ratio*flangeT.s"
    extends Rotational.Interfaces.PartialElementaryRotationalToTranslational;
    parameter Real ratio(final unit="rad/m", start=1) "Transmission ratio (flangeR.phi/flangeT.s)";
  equation
    flangeR.phi - internalSupportR.phi = ratio*(flangeT.s - internalSupportT.s);
    // lossless: flangeR.tau*w + flangeT.f*v = 0
    0 = ratio*flangeR.tau + flangeT.f;
  end IdealGearR2T;

  model IdealRollingWheel "Wheel rolling without slip: v = radius*w"
    extends Rotational.Interfaces.PartialElementaryRotationalToTranslational;
    parameter SI.Distance radius(start=0.3) "Wheel radius";
  equation
    (flangeR.phi - internalSupportR.phi)*radius = flangeT.s - internalSupportT.s;
    // lossless: the torque at the axle equals the ground force times the radius
    0 = radius*flangeT.f + flangeR.tau;
  end IdealRollingWheel;

  model InitializeFlange "Initializes angle, speed and acceleration of a flange from input signals"
    extends Modelica.Blocks.Icons.Block;
    parameter Boolean use_phi_start = true "= true: flange angle initialized from phi_start";
    parameter Boolean use_w_start = true "= true: flange speed initialized from w_start";
    parameter Boolean use_a_start = true "= true: flange acceleration initialized from a_start";
    parameter StateSelect stateSelect = StateSelect.default "Priority to use flange angle and speed as states";
    Modelica.Blocks.Interfaces.RealInput phi_start(unit="rad") if use_phi_start "Initial angle";
    Modelica.Blocks.Interfaces.RealInput w_start(unit="rad/s") if use_w_start "Initial angular velocity";
    Modelica.Blocks.Interfaces.RealInput a_start(unit="rad/s2") if use_a_start "Initial angular acceleration";
    Interfaces.Flange_b flange "Flange that is initialized (no torque is exerted)";
    SI.Angle phi_flange(stateSelect=stateSelect) = flange.phi "Flange angle";
    SI.AngularVelocity w_flange(stateSelect=stateSelect) = der(phi_flange) "Flange speed";
  protected
    Modelica.Blocks.Interfaces.RealOutput phi_start_internal "phi_start or 0";
    Modelica.Blocks.Interfaces.RealOutput w_start_internal "w_start or 0";
    Modelica.Blocks.Interfaces.RealOutput a_start_internal "a_start or 0";
  initial equation
    if use_phi_start then
      phi_flange = phi_start_internal;
    end if;
    if use_w_start then
      w_flange = w_start_internal;
    end if;
    if use_a_start then
      der(w_flange) = a_start_internal;
    end if;
  equation
    connect(phi_start, phi_start_internal);
    connect(w_start, w_start_internal);
    connect(a_start, a_start_internal);
    if not use_phi_start then
      phi_start_internal = 0;
    end if;
    if not use_w_start then
      w_start_internal = 0;
    end if;
    if not use_a_start then
      a_start_internal = 0;
    end if;
    flange.tau = 0;
  end InitializeFlange;

  model RelativeStates "Adds relative angle and speed between two flanges as preferred states"
    extends Rotational.Interfaces.PartialTwoFlanges;
    parameter StateSelect stateSelect = StateSelect.prefer "Priority to use phi_rel and w_rel as states";
    parameter SI.Angle phi_nominal(displayUnit="rad", min=0.0) = 1.0 "Nominal value of phi_rel (scaling)";
    SI.Angle phi_rel(start=0, stateSelect=stateSelect,
      nominal=if phi_nominal >= Modelica.Constants.eps then phi_nominal else 1)
      "Relative rotation angle used as state";
    SI.AngularVelocity w_rel(start=0, stateSelect=stateSelect) "Relative angular velocity used as state";
    SI.AngularAcceleration a_rel(start=0) "Relative angular acceleration";
  equation
    phi_rel = flange_b.phi - flange_a.phi;
    w_rel = der(phi_rel);
    a_rel = der(w_rel);
    flange_a.tau = 0;
    flange_b.tau = 0;
  end RelativeStates;
end Components;
