model LossyGearLockAndRoll
  "Gear with 70 %/60 % mesh efficiency and bearing friction between a stepwise drive torque and a constant load: it rolls forward, locks, rolls backward and locks again"
  import Modelica.Mechanics.Rotational;
  // Drive torque [N.m] in steps (repeated times give jumps): 3 N.m rolls the gear forward,
  // 1 N.m is inside the band where the gear cannot move (self-locking by the losses),
  // 0 N.m lets the load drive the gear backward.
  Modelica.Blocks.Sources.TimeTable driveSignal(table=[0, 3; 0.5, 3; 0.5, 1; 2.5, 1; 2.5, 0; 3.5, 0; 3.5, 1; 5, 1]);
  Rotational.Sources.Torque drive;
  Rotational.Components.Inertia inputShaft(J=0.5, phi(start=0, fixed=true), w(start=0, fixed=true));
  Rotational.Components.LossyGear gear(ratio=3, lossTable=[0, 0.7, 0.6, 0.2, 0.2])
    "eta_mf1 = 0.7 (input drives), eta_mf2 = 0.6 (output drives), bearing friction 0.2 N.m";
  Rotational.Components.Inertia outputShaft(J=2);
  Rotational.Sources.ConstantTorque load(tau_constant=-3) "Load torque at the output";
equation
  connect(driveSignal.y, drive.tau);
  connect(drive.flange, inputShaft.flange_a);
  connect(inputShaft.flange_b, gear.flange_a);
  connect(gear.flange_b, outputShaft.flange_a);
  connect(outputShaft.flange_b, load.flange);
  annotation(experiment(StopTime=5, Interval=0.001));
end LossyGearLockAndRoll;
