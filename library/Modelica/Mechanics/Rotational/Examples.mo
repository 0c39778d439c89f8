within Modelica.Mechanics.Rotational;
package Examples "Runnable demonstrations (same structure and parameters as the MSL examples)"
  extends Modelica.Icons.ExamplesPackage;

  model First "Motor inertia drives a load through a gear and an elastic shaft"
    extends Modelica.Icons.Example;
    parameter SI.Torque amplitude = 10 "Amplitude of the driving torque";
    parameter SI.Frequency f = 5 "Frequency of the driving torque";
    parameter SI.Inertia Jmotor(min=0) = 0.1 "Motor inertia";
    parameter SI.Inertia Jload(min=0) = 2 "Load inertia";
    parameter Real ratio = 10 "Gear ratio";
    parameter Real damping = 10 "Damping in the gear bearing";
    Rotational.Components.Fixed fixed;
    Rotational.Sources.Torque torque(useSupport=true);
    Rotational.Components.Inertia inertia1(J=Jmotor);
    Rotational.Components.IdealGear idealGear(ratio=ratio, useSupport=true);
    Rotational.Components.Inertia inertia2(J=2, phi(fixed=true, start=0), w(fixed=true, start=0));
    Rotational.Components.Spring spring(c=1.e4, phi_rel(fixed=true));
    Rotational.Components.Inertia inertia3(J=Jload, w(fixed=true, start=0));
    Rotational.Components.Damper damper(d=damping);
    Modelica.Blocks.Sources.Sine sine(amplitude=amplitude, f=f);
  equation
    connect(sine.y, torque.tau);
    connect(torque.flange, inertia1.flange_a);
    connect(torque.support, fixed.flange);
    connect(inertia1.flange_b, idealGear.flange_a);
    connect(idealGear.support, fixed.flange);
    connect(idealGear.flange_b, inertia2.flange_a);
    connect(inertia2.flange_b, spring.flange_a);
    connect(spring.flange_b, inertia3.flange_a);
    connect(damper.flange_a, inertia2.flange_b);
    connect(damper.flange_b, fixed.flange);
    annotation(experiment(StopTime=1.0, Interval=0.001));
  end First;

  model Backlash "Inertias swinging on a spring-damper, an ElastoBacklash and an ElastoBacklash2"
    extends Modelica.Icons.Example;
    Rotational.Components.Fixed fixed1;
    Rotational.Components.SpringDamper springDamper(c=20E3, d=50, phi_nominal=1);
    Rotational.Components.Inertia inertia1(J=5, w(fixed=true, start=0),
      phi(fixed=true, displayUnit="deg", start=1.570796326794897));
    Rotational.Components.Fixed fixed2;
    Rotational.Components.ElastoBacklash elastoBacklash(c=20E3, d=50, b(displayUnit="deg") = 0.7853981633974483,
      phi_nominal=1);
    Rotational.Components.Inertia inertia2(J=5, w(fixed=true, start=0),
      phi(fixed=true, start=1.570796326794897, displayUnit="deg"));
    Rotational.Components.Fixed fixed3;
    Rotational.Components.ElastoBacklash2 elastoBacklash2(c=20E3, d=50, phi_nominal=1,
      b(displayUnit="deg") = 0.78539816339745);
    Rotational.Components.Inertia inertia3(J=5, w(fixed=true, start=0),
      phi(fixed=true, start=1.570796326794897, displayUnit="deg"));
  equation
    connect(fixed1.flange, springDamper.flange_a);
    connect(springDamper.flange_b, inertia1.flange_a);
    connect(fixed2.flange, elastoBacklash.flange_a);
    connect(elastoBacklash.flange_b, inertia2.flange_a);
    connect(fixed3.flange, elastoBacklash2.flange_a);
    connect(elastoBacklash2.flange_b, inertia3.flange_a);
    annotation(experiment(StopTime=1.0, Interval=0.001));
  end Backlash;

  model CoupledClutches "Four inertias coupled by three clutches that engage one after another"
    extends Modelica.Icons.Example;
    parameter SI.Frequency f = 0.2 "Frequency of the normal force signal of clutch1";
    parameter SI.Time T2 = 0.4 "Time when clutch2 engages";
    parameter SI.Time T3 = 0.9 "Time when clutch3 engages";
    Rotational.Components.Inertia J1(J=1, phi(fixed=true, start=0), w(start=10, fixed=true));
    Rotational.Sources.Torque torque(useSupport=true);
    Rotational.Components.Clutch clutch1(peak=1.1, fn_max=20);
    Modelica.Blocks.Sources.Sine sin1(amplitude=10, f=5);
    Modelica.Blocks.Sources.Step step1(startTime=T2);
    Rotational.Components.Inertia J2(J=1, phi(fixed=true, start=0), w(fixed=true, start=0));
    Rotational.Components.Clutch clutch2(peak=1.1, fn_max=20);
    Rotational.Components.Inertia J3(J=1, phi(fixed=true, start=0), w(fixed=true, start=0));
    Rotational.Components.Clutch clutch3(peak=1.1, fn_max=20);
    Rotational.Components.Inertia J4(J=1, phi(fixed=true, start=0), w(fixed=true, start=0));
    Modelica.Blocks.Sources.Sine sin2(amplitude=1, f=f, phase=1.570796326794897);
    Modelica.Blocks.Sources.Step step2(startTime=T3);
    Rotational.Components.Fixed fixed;
  equation
    connect(sin1.y, torque.tau);
    connect(fixed.flange, torque.support);
    connect(torque.flange, J1.flange_a);
    connect(J1.flange_b, clutch1.flange_a);
    connect(clutch1.flange_b, J2.flange_a);
    connect(J2.flange_b, clutch2.flange_a);
    connect(clutch2.flange_b, J3.flange_a);
    connect(J3.flange_b, clutch3.flange_a);
    connect(clutch3.flange_b, J4.flange_a);
    connect(sin2.y, clutch1.f_normalized);
    connect(step1.y, clutch2.f_normalized);
    connect(step2.y, clutch3.f_normalized);
    annotation(experiment(StopTime=1.5, Interval=0.001));
  end CoupledClutches;

  model ElasticBearing "Gear whose housing is mounted elastically (use of the support flange)"
    extends Modelica.Icons.Example;
    Rotational.Components.Inertia shaft(phi(fixed=true, start=0), J=1, w(fixed=true, start=0));
    Rotational.Components.Inertia load(J=50, w(fixed=true, start=0));
    Rotational.Components.Spring spring(c=1e3, phi_rel(fixed=true));
    Rotational.Components.Fixed fixed;
    Rotational.Components.SpringDamper springDamper(c=1e5, d=5, phi_rel(fixed=true),
      w_rel(fixed=true, nominal=1e-4));
    Rotational.Sources.Torque torque(useSupport=true);
    Modelica.Blocks.Sources.Ramp ramp(duration=5, height=100);
    Rotational.Components.IdealGear idealGear(ratio=3, useSupport=true);
    Rotational.Components.Inertia housing(J=5);
    Rotational.Sensors.MultiSensor multiSensor;
  equation
    connect(ramp.y, torque.tau);
    connect(fixed.flange, torque.support);
    connect(torque.flange, shaft.flange_a);
    connect(shaft.flange_b, idealGear.flange_a);
    connect(idealGear.flange_b, spring.flange_a);
    connect(spring.flange_b, load.flange_a);
    connect(idealGear.support, housing.flange_b);
    connect(housing.flange_a, multiSensor.flange_b);
    connect(multiSensor.flange_a, springDamper.flange_b);
    connect(springDamper.flange_a, fixed.flange);
    annotation(experiment(StopTime=10, Interval=0.01));
  end ElasticBearing;

  model Friction "Drive train with a clutch and a brake"
    import Modelica.Constants.pi;
    extends Modelica.Icons.Example;
    parameter SI.Time startTime = 0.5 "Time when the drive torque stops and the brake engages";
    output SI.Torque tMotor = torque.tau "Driving torque of inertia3";
    output SI.Torque tClutch = clutch.tau "Friction torque of the clutch";
    output SI.Torque tBrake = brake.tau "Friction torque of the brake";
    output SI.Torque tSpring = spring.tau "Spring torque";
    Rotational.Sources.Torque torque(useSupport=true);
    Rotational.Components.Inertia inertia3(J=1, phi(start=0, fixed=true, displayUnit="deg"),
      w(start=100, fixed=true, displayUnit="rad/s"));
    Rotational.Components.Clutch clutch(fn_max=160);
    Rotational.Components.Inertia inertia2(J=0.05, phi(start=0, fixed=true), w(start=90, fixed=true));
    Rotational.Components.SpringDamper spring(c=160, d=1);
    Rotational.Components.Inertia inertia1(J=1, phi(start=0, fixed=true), w(start=90, fixed=true));
    Rotational.Components.Brake brake(fn_max=1600, useSupport=true);
    Modelica.Blocks.Sources.Constant const(k=1);
    Modelica.Blocks.Sources.Step step(startTime=startTime);
    Modelica.Blocks.Sources.Step step2(height=-1, offset=1, startTime=startTime);
    Modelica.Blocks.Sources.Sine sine(amplitude=200, f=50/pi);
    Modelica.Blocks.Math.Product product;
    Rotational.Components.Fixed fixed;
  equation
    connect(sine.y, product.u1);
    connect(step2.y, product.u2);
    connect(product.y, torque.tau);
    connect(torque.support, fixed.flange);
    connect(torque.flange, inertia3.flange_a);
    connect(inertia3.flange_b, clutch.flange_a);
    connect(clutch.flange_b, inertia2.flange_a);
    connect(inertia2.flange_b, spring.flange_a);
    connect(spring.flange_b, brake.flange_a);
    connect(brake.flange_b, inertia1.flange_a);
    connect(brake.support, fixed.flange);
    connect(const.y, clutch.f_normalized);
    connect(step.y, brake.f_normalized);
    annotation(experiment(StopTime=3.0, Interval=0.001));
  end Friction;

  model LossyGearDemo1 "Gear efficiency makes the drive stick"
    extends Modelica.Icons.Example;
    SI.Power PowerLoss = gear.flange_a.tau*der(gear.flange_a.phi) + gear.flange_b.tau*der(gear.flange_b.phi)
      "Power dissipated in the gear";
    Rotational.Components.LossyGear gear(ratio=2, lossTable=[0, 0.5, 0.5, 0, 0], useSupport=true);
    Rotational.Components.Inertia Inertia1(J=1);
    Rotational.Components.Inertia Inertia2(J=1.5, phi(fixed=true, start=0, nominal=0.001),
      w(fixed=true, start=0, nominal=0.01));
    Rotational.Sources.Torque torque1(useSupport=true);
    Rotational.Sources.Torque torque2(useSupport=true);
    Modelica.Blocks.Sources.Sine DriveSine(amplitude=10, f=1);
    Modelica.Blocks.Sources.Ramp load(height=5, duration=2, offset=-10);
    Rotational.Components.Fixed fixed;
  equation
    connect(DriveSine.y, torque1.tau);
    connect(load.y, torque2.tau);
    connect(torque1.flange, Inertia1.flange_a);
    connect(Inertia1.flange_b, gear.flange_a);
    connect(gear.flange_b, Inertia2.flange_a);
    connect(torque2.flange, Inertia2.flange_b);
    connect(fixed.flange, gear.support);
    connect(fixed.flange, torque1.support);
    connect(fixed.flange, torque2.support);
    annotation(experiment(StopTime=0.5, Interval=0.001));
  end LossyGearDemo1;

  model OneWayClutch "Drive train with an actively engaged one-way clutch"
    extends Modelica.Icons.Example;
    Modelica.Mechanics.Rotational.Components.Inertia inertiaIn(J=1, phi(fixed=true, start=0),
      w(fixed=true, start=-0.5));
    Modelica.Mechanics.Rotational.Components.Inertia inertiaOut(J=1, phi(fixed=true, start=0),
      w(fixed=true, start=0));
    Modelica.Mechanics.Rotational.Components.OneWayClutch oneWayClutch(peak=25, fn_max=3,
      startForward(fixed=true), stuck(fixed=true));
    Modelica.Mechanics.Rotational.Sources.Torque torque;
    Modelica.Blocks.Sources.Sine signalTorque(amplitude=10, f=3);
    Modelica.Blocks.Sources.Pulse signalEngagement(amplitude=1, width=50, period=1.3, startTime=0.3);
  equation
    connect(signalTorque.y, torque.tau);
    connect(torque.flange, inertiaIn.flange_a);
    connect(inertiaIn.flange_b, oneWayClutch.flange_a);
    connect(oneWayClutch.flange_b, inertiaOut.flange_a);
    connect(signalEngagement.y, oneWayClutch.f_normalized);
    annotation(experiment(StopTime=2, Interval=0.001));
  end OneWayClutch;

  model RollingWheel "Wheel driven by a torque step pushes a mass against quadratic drag"
    extends Modelica.Icons.Example;
    Rotational.Components.IdealRollingWheel idealRollingWheel(radius=1);
    Rotational.Components.Inertia inertia(J=1, phi(fixed=true, start=0), w(fixed=true, start=0));
    Rotational.Sources.TorqueStep torqueStep(stepTorque=10, offsetTorque=0, startTime=0.1, useSupport=false);
    Translational.Components.Mass mass(L=0, m=1);
    Translational.Sources.QuadraticSpeedDependentForce quadraticSpeedDependentForce(f_nominal=-10,
      ForceDirection=false, v_nominal=5);
  equation
    connect(torqueStep.flange, inertia.flange_a);
    connect(inertia.flange_b, idealRollingWheel.flangeR);
    connect(idealRollingWheel.flangeT, mass.flange_a);
    connect(quadraticSpeedDependentForce.flange, mass.flange_b);
    annotation(experiment(StopTime=5.0, Interval=0.001));
  end RollingWheel;
end Examples;
