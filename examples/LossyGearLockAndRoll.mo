model LossyGearLockAndRoll
  "Gear with 60-70 % mesh efficiency between a sinusoidal drive and a constant load: it sticks whenever the drive cannot overcome the losses"
  import Modelica.Mechanics.Rotational;
  Modelica.Blocks.Sources.Sine driveSignal(amplitude=8, f=1) "Drive torque [N.m]";
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
  annotation(experiment(StopTime=3, Interval=0.001));
end LossyGearLockAndRoll;
