within Modelica.Mechanics.Rotational;
package Interfaces "Flanges and partial models of rotational components"
  extends Modelica.Icons.InterfacesPackage;

  connector Flange "Rotational flange: absolute angle and cut torque"
    SI.Angle phi "Absolute rotation angle of the flange";
    flow SI.Torque tau "Cut torque in the flange (positive into the component)";
  end Flange;

  connector Flange_a "Rotational flange (filled icon in MSL)"
    extends Flange;
  end Flange_a;

  connector Flange_b "Rotational flange (hollow icon in MSL)"
    extends Flange;
  end Flange_b;

  connector Support "Support (housing) of a rotational component"
    extends Flange;
  end Support;

  model InternalSupport "Internal stand-in for a conditional support connector"
    input SI.Torque tau "Torque that the component exerts on its support (set by modification)";
    SI.Angle phi "Angle of the support (= flange.phi)";
    Flange_a flange "Connected to the support connector, or to a fixed flange without support";
  equation
    flange.tau = tau;
    flange.phi = phi;
  end InternalSupport;

  partial model PartialTwoFlanges "Two flanges, no support"
    Flange_a flange_a "Flange of left shaft";
    Flange_b flange_b "Flange of right shaft";
  end PartialTwoFlanges;

  partial model PartialOneFlangeAndSupport
    "One flange and an optional support (graphical models: internalSupport is grounded without support)"
    parameter Boolean useSupport = false "= true: support flange enabled, else the housing is fixed"
      annotation(Evaluate=true);
    Flange_b flange "Flange of shaft";
    Support support if useSupport "Support (housing)";
  protected
    Support internalSupport "Support or fixed ground";
    Components.Fixed fixed if not useSupport "Ground used without support";
  equation
    connect(support, internalSupport);
    connect(internalSupport, fixed.flange);
  end PartialOneFlangeAndSupport;

  partial model PartialTwoFlangesAndSupport
    "Two flanges and an optional support (graphical models: internalSupport is grounded without support)"
    parameter Boolean useSupport = false "= true: support flange enabled, else the housing is fixed"
      annotation(Evaluate=true);
    Flange_a flange_a "Flange of left shaft";
    Flange_b flange_b "Flange of right shaft";
    Support support if useSupport "Support (housing)";
  protected
    Support internalSupport "Support or fixed ground";
    Components.Fixed fixed if not useSupport "Ground used without support";
  equation
    connect(support, internalSupport);
    connect(internalSupport, fixed.flange);
  end PartialTwoFlangesAndSupport;

  partial model PartialCompliant "Two flanges connected by a compliant element (spring-like)"
    SI.Angle phi_rel(start=0) "Relative rotation angle (= flange_b.phi - flange_a.phi)";
    SI.Torque tau "Torque between the flanges (= flange_b.tau)";
    Flange_a flange_a "Left flange";
    Flange_b flange_b "Right flange";
  equation
    phi_rel = flange_b.phi - flange_a.phi;
    flange_b.tau = tau;
    flange_a.tau = -tau;
  end PartialCompliant;

  partial model PartialCompliantWithRelativeStates
    "Compliant element whose relative angle and speed are preferred states"
    parameter StateSelect stateSelect = StateSelect.prefer "Priority to use phi_rel and w_rel as states";
    parameter SI.Angle phi_nominal(displayUnit="rad", min=0.0) = 1e-4 "Nominal value of phi_rel (scaling)";
    SI.Angle phi_rel(start=0, stateSelect=stateSelect,
      nominal=if phi_nominal >= Modelica.Constants.eps then phi_nominal else 1)
      "Relative rotation angle (= flange_b.phi - flange_a.phi)";
    SI.AngularVelocity w_rel(start=0, stateSelect=stateSelect) "Relative angular velocity (= der(phi_rel))";
    SI.AngularAcceleration a_rel(start=0) "Relative angular acceleration (= der(w_rel))";
    SI.Torque tau "Torque between the flanges (= flange_b.tau)";
    Flange_a flange_a "Left flange";
    Flange_b flange_b "Right flange";
  equation
    phi_rel = flange_b.phi - flange_a.phi;
    w_rel = der(phi_rel);
    a_rel = der(w_rel);
    flange_b.tau = tau;
    flange_a.tau = -tau;
  end PartialCompliantWithRelativeStates;

  partial model PartialElementaryOneFlangeAndSupport2
    "One flange and an optional support (equation-based models)"
    parameter Boolean useSupport = false "= true: support flange enabled, else the housing is fixed"
      annotation(Evaluate=true);
    Flange_b flange "Flange of shaft";
    Support support(phi=phi_support, tau=-flange.tau) if useSupport "Support (housing)";
  protected
    SI.Angle phi_support "Absolute angle of the support (0 without support)";
  equation
    if not useSupport then
      phi_support = 0;
    end if;
  end PartialElementaryOneFlangeAndSupport2;

  partial model PartialElementaryTwoFlangesAndSupport2
    "Two flanges and an optional support (equation-based models)"
    parameter Boolean useSupport = false "= true: support flange enabled, else the housing is fixed"
      annotation(Evaluate=true);
    Flange_a flange_a "Flange of left shaft";
    Flange_b flange_b "Flange of right shaft";
    Support support(phi=phi_support, tau=-flange_a.tau - flange_b.tau) if useSupport "Support (housing)";
  protected
    SI.Angle phi_support "Absolute angle of the support (0 without support)";
  equation
    if not useSupport then
      phi_support = 0;
    end if;
  end PartialElementaryTwoFlangesAndSupport2;

  partial model PartialElementaryRotationalToTranslational
    "Rotational flange and translational flange with optional supports"
    parameter Boolean useSupportR = false "= true: rotational support enabled, else fixed"
      annotation(Evaluate=true);
    parameter Boolean useSupportT = false "= true: translational support enabled, else fixed"
      annotation(Evaluate=true);
    Rotational.Interfaces.Flange_a flangeR "Rotational flange";
    Modelica.Mechanics.Translational.Interfaces.Flange_b flangeT "Translational flange";
    Rotational.Interfaces.Support supportR if useSupportR "Rotational support";
    Translational.Interfaces.Support supportT if useSupportT "Translational support";
  protected
    Rotational.Interfaces.InternalSupport internalSupportR(tau=-flangeR.tau) "Rotational support or ground";
    Translational.Interfaces.InternalSupport internalSupportT(f=-flangeT.f) "Translational support or ground";
    Rotational.Components.Fixed fixedR if not useSupportR "Rotational ground without support";
    Translational.Components.Fixed fixedT if not useSupportT "Translational ground without support";
  equation
    connect(internalSupportR.flange, supportR);
    connect(internalSupportR.flange, fixedR.flange);
    connect(internalSupportT.flange, supportT);
    connect(internalSupportT.flange, fixedT.flange);
  end PartialElementaryRotationalToTranslational;

  partial model PartialTorque "Torque source acting between flange and support"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialElementaryOneFlangeAndSupport2;
    SI.Angle phi "Angle of flange relative to the support";
  equation
    phi = flange.phi - phi_support;
  end PartialTorque;

  partial model PartialAbsoluteSensor "Measures an absolute quantity of one flange"
    extends Modelica.Icons.RoundSensor;
    Flange_a flange "Measured flange";
  equation
    0 = flange.tau;
  end PartialAbsoluteSensor;

  partial model PartialRelativeSensor "Measures a quantity between two flanges"
    extends Modelica.Icons.RoundSensor;
    Flange_a flange_a "Left flange";
    Flange_b flange_b "Right flange";
  equation
    0 = flange_a.tau + flange_b.tau;
  end PartialRelativeSensor;

  partial model PartialFriction "Stick-slip state machine of Coulomb friction elements"
    parameter SI.AngularVelocity w_small = 1.0e10
      "Relative speed treated as zero after a reinit of the speed (only lower it if speed jumps occur)";
    // defined by the extending model:
    SI.AngularVelocity w_relfric "Relative angular velocity of the friction surfaces";
    SI.AngularAcceleration a_relfric "Relative angular acceleration of the friction surfaces";
    SI.Torque tau0 "Friction torque at w_relfric = 0 when sliding";
    SI.Torque tau0_max "Largest friction torque while stuck (static friction)";
    Boolean free "= true: friction element is not engaged";
    // defined here:
    Real sa(final unit="1") "Path parameter: the stuck torque while locked, else the shifted acceleration";
    Boolean startForward(start=false, fixed=true) "= true: w_relfric = 0 and starting to slide forward";
    Boolean startBackward(start=false, fixed=true) "= true: w_relfric = 0 and starting to slide backward";
    Boolean locked(start=false) "= true: w_relfric = 0 and stuck";
    constant Integer Unknown = 3 "Mode not known";
    constant Integer Free = 2 "Element not engaged";
    constant Integer Forward = 1 "Sliding forward (w_relfric > 0)";
    constant Integer Stuck = 0 "w_relfric = 0 (stuck or about to slide)";
    constant Integer Backward = -1 "Sliding backward (w_relfric < 0)";
    Integer mode(final min=Backward, final max=Unknown, start=Unknown, fixed=true)
      "Friction mode (-1 backward, 0 stuck, 1 forward, 2 free, 3 unknown)";
  protected
    constant SI.AngularAcceleration unitAngularAcceleration = 1;
    constant SI.Torque unitTorque = 1;
    Boolean slidingForward "Forward sliding continues or starts";
    Boolean slidingBackward "Backward sliding continues or starts";
  equation
    // Leaving the stuck state: the torque needed to hold (sa while stuck) must exceed the static
    // limit tau0_max; once breaking away started it continues while above the sliding value tau0.
    // A velocity jump (reinit) larger than w_small out of the opposite sliding mode also starts.
    startForward = pre(mode) == Stuck and (sa > tau0_max/unitTorque or pre(startForward) and sa > tau0/unitTorque)
      or pre(mode) == Backward and w_relfric > w_small
      or initial() and w_relfric > 0;
    startBackward = pre(mode) == Stuck and (sa < -tau0_max/unitTorque or pre(startBackward) and sa < -tau0/unitTorque)
      or pre(mode) == Forward and w_relfric < -w_small
      or initial() and w_relfric < 0;
    slidingForward = pre(mode) == Forward or startForward;
    slidingBackward = pre(mode) == Backward or startBackward;
    locked = not free and not (slidingForward or slidingBackward);
    // Parametrized friction curve: while locked the acceleration is zero and sa is the
    // torque; while sliding sa is the acceleration shifted by the break-away torque,
    // so that sa is continuous when the element switches between stuck and sliding.
    a_relfric/unitAngularAcceleration =
      if locked then 0
      elseif free then sa
      elseif startForward then sa - tau0_max/unitTorque
      elseif startBackward then sa + tau0_max/unitTorque
      elseif pre(mode) == Forward then sa - tau0_max/unitTorque
      elseif pre(mode) == Backward then sa + tau0_max/unitTorque
      else sa - sign(w_relfric)*tau0_max/unitTorque;
    // New mode, decided only from pre(mode) and the start flags (no algebraic loop on mode)
    mode = if free then Free
      elseif (pre(mode) == Forward or pre(mode) == Free or startForward) and w_relfric > 0 then Forward
      elseif (pre(mode) == Backward or pre(mode) == Free or startBackward) and w_relfric < 0 then Backward
      else Stuck;
  end PartialFriction;
end Interfaces;
