model BrakeStop "A driven shaft is braked to standstill and then stays stuck because the drive torque is below the static brake torque"
  import Modelica.Mechanics.Rotational;
  Rotational.Components.Inertia shaft(J=1, phi(start=0, fixed=true), w(start=20, fixed=true));
  Rotational.Sources.ConstantTorque drive(tau_constant=5) "Drive torque, smaller than the static brake torque";
  Rotational.Components.Brake brake(fn_max=40, mu_pos=[0, 0.5], peak=1.2, cgeo=1)
    "Sliding torque 0.5*40 = 20 N.m, static torque 24 N.m";
  Modelica.Blocks.Sources.Step engage(startTime=0.5) "Brake applied at 0.5 s";
equation
  connect(drive.flange, shaft.flange_a);
  connect(shaft.flange_b, brake.flange_a);
  connect(engage.y, brake.f_normalized);
  annotation(experiment(StopTime=3, Interval=0.001));
end BrakeStop;
