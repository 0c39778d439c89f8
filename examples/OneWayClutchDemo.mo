model OneWayClutchDemo
  "Freewheel: the input drives the output only forward and the output overruns when the input slows down; after 3 s the clutch pack closes"
  import Modelica.Mechanics.Rotational;
  Modelica.Blocks.Sources.Sine driveSignal(amplitude=10, f=0.5, offset=2) "Drive torque [N.m]";
  Rotational.Sources.Torque drive;
  Rotational.Components.Inertia inputShaft(J=0.2, phi(start=0, fixed=true), w(start=0, fixed=true));
  Rotational.Components.Damper inputBearing(d=1) "Losses at the input side";
  Rotational.Components.OneWayClutch freewheel(fn_max=100, peak=1.1, startForward(fixed=true),
    stuck(fixed=true)) "Locks when the output would run slower than the input; with the clutch pack closed it also transmits up to 50 N.m while overrunning";
  Rotational.Components.Inertia outputShaft(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Rotational.Components.Damper outputLoad(d=0.5) "Speed proportional load at the output";
  Rotational.Components.Fixed fixed;
  Modelica.Blocks.Sources.Step engaged(startTime=3) "Clutch pack open (pure freewheel) until 3 s, then closed";
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
