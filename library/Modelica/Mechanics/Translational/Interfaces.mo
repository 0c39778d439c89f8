within Modelica.Mechanics.Translational;
package Interfaces "Flanges and partial models of translational components"
  extends Modelica.Icons.InterfacesPackage;

  connector Flange "Translational flange: absolute position and cut force"
    SI.Position s "Absolute position of the flange";
    flow SI.Force f "Cut force in the flange (positive into the component)";
  end Flange;

  connector Flange_a "Translational flange (filled icon in MSL)"
    extends Flange;
  end Flange_a;

  connector Flange_b "Translational flange (hollow icon in MSL)"
    extends Flange;
  end Flange_b;

  connector Support "Support (housing) of a translational component"
    extends Flange;
  end Support;

  model InternalSupport "Internal stand-in for a conditional support connector"
    input SI.Force f "Force that the component exerts on its support (set by modification)";
    SI.Position s "Position of the support (= flange.s)";
    Flange_a flange "Connected to the support connector, or to a fixed flange without support";
  equation
    flange.f = f;
    flange.s = s;
  end InternalSupport;

  partial model PartialTwoFlanges "Two flanges, no support"
    Flange_a flange_a "Left flange";
    Flange_b flange_b "Right flange";
  end PartialTwoFlanges;

  partial model PartialOneFlangeAndSupport
    "One flange and an optional support (graphical models: internalSupport is grounded without support)"
    parameter Boolean useSupport = false "= true: support flange enabled, else the housing is fixed"
      annotation(Evaluate=true);
    Flange_b flange "Flange of the component";
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
    extends Translational.Interfaces.PartialTwoFlanges;
    Support support if useSupport "Support (housing)";
  protected
    Support internalSupport "Support or fixed ground";
    Components.Fixed fixed if not useSupport "Ground used without support";
  equation
    connect(support, internalSupport);
    connect(internalSupport, fixed.flange);
  end PartialTwoFlangesAndSupport;

  partial model PartialRigid "Rigid body of length L between two flanges"
    SI.Position s "Absolute position of the centre (= flange_a.s + L/2 = flange_b.s - L/2)";
    parameter SI.Length L(start=0) "Length (from flange_a to flange_b)";
    extends Translational.Interfaces.PartialTwoFlanges;
  equation
    flange_a.s = s - L/2;
    flange_b.s = s + L/2;
  end PartialRigid;

  partial model PartialCompliant "Two flanges connected by a compliant element (spring-like)"
    extends Translational.Interfaces.PartialTwoFlanges;
    SI.Position s_rel(start=0) "Relative distance (= flange_b.s - flange_a.s)";
    SI.Force f "Force between the flanges (= flange_b.f)";
  equation
    s_rel = flange_b.s - flange_a.s;
    flange_b.f = f;
    flange_a.f = -f;
  end PartialCompliant;

  partial model PartialCompliantWithRelativeStates
    "Compliant element whose relative position and speed are preferred states"
    parameter StateSelect stateSelect = StateSelect.prefer "Priority to use s_rel and v_rel as states";
    parameter SI.Distance s_nominal = 1e-4 "Nominal value of s_rel (scaling)";
    SI.Position s_rel(start=0, stateSelect=stateSelect, nominal=s_nominal)
      "Relative distance (= flange_b.s - flange_a.s)";
    SI.Velocity v_rel(start=0, stateSelect=stateSelect) "Relative velocity (= der(s_rel))";
    SI.Acceleration a_rel(start=0) "Relative acceleration (= der(v_rel))";
    SI.Force f "Force between the flanges (= flange_b.f)";
    extends Translational.Interfaces.PartialTwoFlanges;
  equation
    s_rel = flange_b.s - flange_a.s;
    v_rel = der(s_rel);
    a_rel = der(v_rel);
    flange_b.f = f;
    flange_a.f = -f;
  end PartialCompliantWithRelativeStates;

  partial model PartialElementaryOneFlangeAndSupport2
    "One flange and an optional support (equation-based models)"
    parameter Boolean useSupport = false "= true: support flange enabled, else the housing is fixed"
      annotation(Evaluate=true);
    SI.Length s "Distance between flange and support (= flange.s - support.s)";
    Flange_b flange "Flange of the component";
    Support support(s=s_support, f=-flange.f) if useSupport "Support (housing)";
  protected
    SI.Length s_support "Absolute position of the support (0 without support)";
  equation
    s = flange.s - s_support;
    if not useSupport then
      s_support = 0;
    end if;
  end PartialElementaryOneFlangeAndSupport2;

  partial model PartialElementaryTwoFlangesAndSupport2
    "Two flanges and an optional support (equation-based models)"
    parameter Boolean useSupport = false "= true: support flange enabled, else the housing is fixed"
      annotation(Evaluate=true);
    extends Translational.Interfaces.PartialTwoFlanges;
    Support support(s=s_support, f=-flange_a.f - flange_b.f) if useSupport "Support (housing)";
    SI.Length s_a "Distance between flange_a and support";
    SI.Length s_b "Distance between flange_b and support";
  protected
    SI.Length s_support "Absolute position of the support (0 without support)";
  equation
    s_a = flange_a.s - s_support;
    s_b = flange_b.s - s_support;
    if not useSupport then
      s_support = 0;
    end if;
  end PartialElementaryTwoFlangesAndSupport2;

  partial model PartialElementaryRotationalToTranslational
    "Rotational flange and translational flange with optional supports"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialElementaryRotationalToTranslational;
  end PartialElementaryRotationalToTranslational;

  partial model PartialForce "Force source acting between flange and support"
    extends PartialElementaryOneFlangeAndSupport2;
    // As in the MSL, f is the cut force of the source's own flange: the force that pushes the
    // connected component in positive direction is -f.
    SI.Force f "Force at the flange (= flange.f; the connected component is pushed by -f)";
  equation
    f = flange.f;
  end PartialForce;

  partial model PartialAbsoluteSensor "Measures an absolute quantity of one flange"
    extends Modelica.Icons.TranslationalSensor;
    Interfaces.Flange_a flange "Measured flange";
  equation
    0 = flange.f;
  end PartialAbsoluteSensor;

  partial model PartialRelativeSensor "Measures a quantity between two flanges"
    extends Modelica.Icons.TranslationalSensor;
    extends Translational.Interfaces.PartialTwoFlanges;
  equation
    0 = flange_a.f + flange_b.f;
  end PartialRelativeSensor;

  partial model PartialFriction "Stick-slip state machine of Coulomb friction elements"
    parameter SI.Velocity v_small = 1e-3
      "Relative speed treated as zero after a reinit of the speed (only relevant if speed jumps occur)";
    // defined by the extending model:
    SI.Velocity v_relfric "Relative velocity of the friction surfaces";
    SI.Acceleration a_relfric "Relative acceleration of the friction surfaces";
    SI.Force f0 "Friction force at v_relfric = 0 when sliding";
    SI.Force f0_max "Largest friction force while stuck (static friction)";
    Boolean free "= true: friction element is not engaged";
    // defined here:
    Real sa(unit="1") "Path parameter: the stuck force while locked, else the shifted acceleration";
    Boolean startForward(start=false, fixed=true) "= true: v_relfric = 0 and starting to slide forward";
    Boolean startBackward(start=false, fixed=true) "= true: v_relfric = 0 and starting to slide backward";
    Boolean locked(start=false) "= true: v_relfric = 0 and stuck";
    constant Integer Unknown = 3 "Mode not known";
    constant Integer Free = 2 "Element not engaged";
    constant Integer Forward = 1 "Sliding forward (v_relfric > 0)";
    constant Integer Stuck = 0 "v_relfric = 0 (stuck or about to slide)";
    constant Integer Backward = -1 "Sliding backward (v_relfric < 0)";
    Integer mode(final min=Backward, final max=Unknown, start=Unknown, fixed=true)
      "Friction mode (-1 backward, 0 stuck, 1 forward, 2 free, 3 unknown)";
  protected
    constant SI.Acceleration unitAcceleration = 1;
    constant SI.Force unitForce = 1;
  equation
    // Break-away when the holding force (sa while stuck) exceeds f0_max; continue starting
    // while it stays above the sliding force f0; a velocity jump > v_small also starts sliding.
    startForward = pre(mode) == Stuck and (sa > f0_max/unitForce or pre(startForward) and sa > f0/unitForce)
      or pre(mode) == Backward and v_relfric > v_small
      or initial() and v_relfric > 0;
    startBackward = pre(mode) == Stuck and (sa < -f0_max/unitForce or pre(startBackward) and sa < -f0/unitForce)
      or pre(mode) == Forward and v_relfric < -v_small
      or initial() and v_relfric < 0;
    locked = not free and not (pre(mode) == Forward or startForward or pre(mode) == Backward or startBackward);
    // Parametrized curve: zero acceleration while locked, otherwise sa shifted by the
    // break-away force so that sa stays continuous across mode switches
    a_relfric/unitAcceleration =
      if locked then 0
      elseif free then sa
      elseif startForward then sa - f0_max/unitForce
      elseif startBackward then sa + f0_max/unitForce
      elseif pre(mode) == Forward then sa - f0_max/unitForce
      elseif pre(mode) == Backward then sa + f0_max/unitForce
      else sa - sign(v_relfric)*f0_max/unitForce;
    mode = if free then Free
      elseif (pre(mode) == Forward or pre(mode) == Free or startForward) and v_relfric > 0 then Forward
      elseif (pre(mode) == Backward or pre(mode) == Free or startBackward) and v_relfric < 0 then Backward
      else Stuck;
  end PartialFriction;
end Interfaces;
