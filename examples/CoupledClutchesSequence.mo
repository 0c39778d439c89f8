model CoupledClutchesSequence
  "A spinning flywheel is coupled to three initially resting inertias by clutches that close one after another"
  import Modelica.Mechanics.Rotational;
  Rotational.Components.Inertia flywheel(J=2, phi(start=0, fixed=true), w(start=100, fixed=true));
  Rotational.Components.Clutch clutch1(fn_max=200, peak=1.1);
  Rotational.Components.Inertia J1(J=0.5, phi(start=0, fixed=true), w(start=0, fixed=true));
  Rotational.Components.Clutch clutch2(fn_max=200, peak=1.1);
  Rotational.Components.Inertia J2(J=0.5, phi(start=0, fixed=true), w(start=0, fixed=true));
  Rotational.Components.Clutch clutch3(fn_max=200, peak=1.1);
  Rotational.Components.Inertia J3(J=0.5, phi(start=0, fixed=true), w(start=0, fixed=true));
  Modelica.Blocks.Sources.Ramp engage1(height=1, duration=0.05, startTime=0.2) "Clutch 1 closes at 0.2 s";
  Modelica.Blocks.Sources.Ramp engage2(height=1, duration=0.05, startTime=0.8) "Clutch 2 closes at 0.8 s";
  Modelica.Blocks.Sources.Ramp engage3(height=1, duration=0.05, startTime=1.4) "Clutch 3 closes at 1.4 s";
equation
  connect(flywheel.flange_b, clutch1.flange_a);
  connect(clutch1.flange_b, J1.flange_a);
  connect(J1.flange_b, clutch2.flange_a);
  connect(clutch2.flange_b, J2.flange_a);
  connect(J2.flange_b, clutch3.flange_a);
  connect(clutch3.flange_b, J3.flange_a);
  connect(engage1.y, clutch1.f_normalized);
  connect(engage2.y, clutch2.f_normalized);
  connect(engage3.y, clutch3.f_normalized);
  annotation(experiment(StopTime=2.5, Interval=0.001));
end CoupledClutchesSequence;
