model PlanetaryGear "Planetary gear with fixed ring: sun drives, carrier turns 1/(1 + ratio) as fast"
  import Modelica.Mechanics.Rotational;
  Rotational.Components.IdealPlanetary planetary(ratio=100/50) "Ring has twice as many teeth as the sun";
  Rotational.Sources.Torque drive;
  Modelica.Blocks.Sources.Step driveTorque(height=10, startTime=0.1) "Sun torque [N.m]";
  Rotational.Components.Inertia sun(J=0.01, phi(start=0, fixed=true), w(start=0, fixed=true));
  Rotational.Components.Inertia carrier(J=1);
  Rotational.Components.Damper load(d=2) "Speed proportional load on the carrier";
  Rotational.Components.Fixed ringFixed "Ring held in the housing";
  Rotational.Components.Fixed fixed;
  Rotational.Sensors.SpeedSensor sunSpeed;
  Rotational.Sensors.SpeedSensor carrierSpeed;
  Rotational.Sensors.TorqueSensor ringTorque "Reaction torque in the housing";
equation
  connect(driveTorque.y, drive.tau);
  connect(drive.flange, sun.flange_a);
  connect(sun.flange_b, planetary.sun);
  connect(planetary.carrier, carrier.flange_a);
  connect(carrier.flange_b, load.flange_a);
  connect(load.flange_b, fixed.flange);
  connect(planetary.ring, ringTorque.flange_a);
  connect(ringTorque.flange_b, ringFixed.flange);
  connect(sunSpeed.flange, sun.flange_b);
  connect(carrierSpeed.flange, carrier.flange_b);
  annotation(experiment(StopTime=5, Interval=0.001));
end PlanetaryGear;
