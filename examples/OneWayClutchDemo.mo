model OneWayClutchDemo
  "Freewheel: an alternating torque drives the output only forward; the output overruns when the input slows down"
  import Modelica.Mechanics.Rotational;
  Modelica.Blocks.Sources.Sine driveSignal(amplitude=10, f=0.5, offset=2) "Drive torque [N.m]";
  Rotational.Sources.Torque drive;
  Rotational.Components.Inertia inputShaft(J=0.2, phi(start=0, fixed=true), w(start=0, fixed=true));
  Rotational.Components.Damper inputBearing(d=1) "Losses at the input side";
  Rotational.Components.OneWayClutch freewheel(fn_max=100, peak=1.1, startForward(fixed=true),
    stuck(fixed=true)) "Transmits torque only while the input does not run slower than the output";
  Rotational.Components.Inertia outputShaft(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Rotational.Components.Damper outputLoad(d=0.5) "Speed proportional load at the output";
  Rotational.Components.Fixed fixed;
  Modelica.Blocks.Sources.Constant engaged(k=1) "Clutch pack always closed";
equation
  connect(driveSignal.y, drive.tau);
  connect(drive.flange, inputShaft.flange_a);
  connect(inputShaft.flange_b, freewheel.flange_a);
  connect(freewheel.flange_b, outputShaft.flange_a);
  connect(engaged.y, freewheel.f_normalized);
  connect(inputShaft.flange_a, inputBearing.flange_a);
  connect(inputBearing.flange_b, fixed.flange);
  connect(outputShaft.flange_b, outputLoad.flange_a);
  connect(outputLoad.flange_b, fixed.flange);
  annotation(experiment(StopTime=6, Interval=0.001));
end OneWayClutchDemo;
