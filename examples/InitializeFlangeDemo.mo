model InitializeFlangeDemo
  "InitializeFlange sets the initial angle and speed of an oscillating inertia from signals"
  import Modelica.Mechanics.Rotational;
  Rotational.Components.InitializeFlange initializeFlange(use_a_start=false)
    "Acceleration follows from the spring, so only angle and speed are prescribed";
  Modelica.Blocks.Sources.Constant phiStart(k=0.5) "Initial angle [rad]";
  Modelica.Blocks.Sources.Constant wStart(k=2) "Initial speed [rad/s]";
  Rotational.Components.Inertia inertia(J=0.1);
  Rotational.Components.SpringDamper spring(c=10, d=0.2, stateSelect=StateSelect.default);
  Rotational.Components.Fixed fixed;
equation
  connect(phiStart.y, initializeFlange.phi_start);
  connect(wStart.y, initializeFlange.w_start);
  connect(initializeFlange.flange, inertia.flange_a);
  connect(inertia.flange_b, spring.flange_a);
  connect(spring.flange_b, fixed.flange);
  annotation(experiment(StopTime=5, Interval=0.001));
end InitializeFlangeDemo;
