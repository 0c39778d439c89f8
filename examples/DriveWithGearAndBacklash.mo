model DriveWithGearAndBacklash
  "Motor inertia drives a load through an ideal gear and a shaft with backlash (ElastoBacklash)"
  import Modelica.Mechanics.Rotational;
  Modelica.Blocks.Sources.Sine torqueSignal(amplitude=20, f=1) "Alternating motor torque [N.m]";
  Rotational.Sources.Torque motorTorque;
  Rotational.Components.Inertia motor(J=0.05, phi(start=0, fixed=true), w(start=0, fixed=true));
  Rotational.Components.IdealGear gear(ratio=5) "Speed reduction 5:1";
  Rotational.Components.ElastoBacklash shaft(c=1e4, d=20, b=0.05, phi_rel(start=0, fixed=true),
    w_rel(start=0, fixed=true)) "Elastic shaft with 0.05 rad total backlash";
  Rotational.Components.Inertia load(J=2);
  Rotational.Components.Damper bearing(d=5) "Viscous bearing losses of the load";
  Rotational.Components.Fixed fixed;
equation
  connect(torqueSignal.y, motorTorque.tau);
  connect(motorTorque.flange, motor.flange_a);
  connect(motor.flange_b, gear.flange_a);
  connect(gear.flange_b, shaft.flange_a);
  connect(shaft.flange_b, load.flange_a);
  connect(load.flange_b, bearing.flange_a);
  connect(bearing.flange_b, fixed.flange);
  annotation(experiment(StopTime=3, Interval=0.001));
end DriveWithGearAndBacklash;
