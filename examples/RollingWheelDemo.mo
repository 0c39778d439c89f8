model RollingWheelDemo "Car-like vehicle: wheel torque accelerates a mass against rolling resistance and air drag"
  import Modelica.Mechanics.Rotational;
  import Modelica.Mechanics.Translational;
  Modelica.Blocks.Sources.Ramp wheelTorque(height=300, duration=2, startTime=0.5) "Drive torque [N.m]";
  Rotational.Sources.Torque drive;
  Rotational.Components.Inertia wheel(J=1.5, phi(start=0, fixed=true), w(start=0, fixed=true));
  Rotational.Components.IdealRollingWheel rollingWheel(radius=0.3);
  Translational.Components.Mass vehicle(m=1000, L=0);
  Translational.Sources.QuadraticSpeedDependentForce airDrag(f_nominal=-400, ForceDirection=false,
    v_nominal=30) "400 N at 30 m/s, always against the motion";
  Translational.Components.Damper rolling(d=10) "Speed proportional rolling losses";
  Translational.Components.Fixed ground;
equation
  connect(wheelTorque.y, drive.tau);
  connect(drive.flange, wheel.flange_a);
  connect(wheel.flange_b, rollingWheel.flangeR);
  connect(rollingWheel.flangeT, vehicle.flange_a);
  connect(airDrag.flange, vehicle.flange_b);
  connect(vehicle.flange_b, rolling.flange_a);
  connect(rolling.flange_b, ground.flange);
  annotation(experiment(StopTime=30, Interval=0.01));
end RollingWheelDemo;
