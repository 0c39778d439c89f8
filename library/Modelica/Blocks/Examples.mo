within Modelica.Blocks;
package Examples "Runnable demonstrations of the blocks"
  extends Modelica.Icons.ExamplesPackage;

  model PID_Controller "LimPID (as PI) moving an inertia along a point-to-point reference"
    extends Modelica.Icons.Example;
    parameter SI.Angle driveAngle = 1.570796326794897 "Angle to move";
    Modelica.Blocks.Continuous.LimPID PI(k=100, Ti=0.1, yMax=12, Ni=0.1,
      initType=Modelica.Blocks.Types.Init.SteadyState,
      controllerType=Modelica.Blocks.Types.SimpleController.PI,
      limiter(u(start=0)), Td=0.1);
    Modelica.Mechanics.Rotational.Components.Inertia inertia1(phi(fixed=true, start=0), J=1,
      a(fixed=true, start=0));
    Modelica.Mechanics.Rotational.Sources.Torque torque;
    Modelica.Mechanics.Rotational.Components.SpringDamper spring(c=1e4, d=100,
      stateSelect=StateSelect.prefer, w_rel(fixed=true));
    Modelica.Mechanics.Rotational.Components.Inertia inertia2(J=2);
    Modelica.Blocks.Sources.KinematicPTP kinematicPTP(startTime=0.5, deltaq={driveAngle}, qd_max={1},
      qdd_max={1});
    Modelica.Blocks.Continuous.Integrator integrator(initType=Modelica.Blocks.Types.Init.InitialState);
    Modelica.Mechanics.Rotational.Sensors.SpeedSensor speedSensor;
    Modelica.Mechanics.Rotational.Sources.ConstantTorque loadTorque(tau_constant=10, useSupport=false);
  initial equation
    der(spring.w_rel) = 0;
  equation
    connect(kinematicPTP.y[1], integrator.u);
    connect(integrator.y, PI.u_s);
    connect(speedSensor.w, PI.u_m);
    connect(PI.y, torque.tau);
    connect(torque.flange, inertia1.flange_a);
    connect(inertia1.flange_b, spring.flange_a);
    connect(spring.flange_b, inertia2.flange_a);
    connect(speedSensor.flange, inertia1.flange_b);
    connect(loadTorque.flange, inertia2.flange_b);
    annotation(experiment(StopTime=4));
  end PID_Controller;
end Examples;
