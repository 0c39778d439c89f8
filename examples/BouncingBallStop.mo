model BouncingBallStop
  "The ball of BouncingBallElastoGap with a rigid stop: on impact the speed is reversed and scaled by e"
  import Modelica.Mechanics.Translational;

  model MassWithBouncingStop "Sliding mass with a lower stop at smin (impact: v := -e*v)"
    extends Translational.Interfaces.PartialRigid(s(start=0, stateSelect=StateSelect.always));
    parameter Modelica.Units.SI.Mass m(start=1) "Mass";
    parameter Modelica.Units.SI.Position smin "Stop for the left end (flange_a) of the mass";
    parameter Real e(min=0, max=1) "Coefficient of restitution";
    Modelica.Units.SI.Velocity v(start=0, stateSelect=StateSelect.always) "Velocity";
  equation
    v = der(s);
    m*der(v) = flange_a.f + flange_b.f;
    // impact: the mass is put on the stop and bounces back with e times its impact speed
    when s <= smin + L/2 then
      reinit(s, smin + L/2);
      reinit(v, -e*pre(v));
    end when;
  end MassWithBouncingStop;

  parameter Modelica.Units.SI.Mass m = 0.5 "Ball mass (as in BouncingBallElastoGap)";
  // e derived from the ElastoGap contact law with c = 5e4 N/m, d = 10 N.s/m, m = 0.5 kg
  // (see examples/README.md and examples/tools/restitution.py)
  parameter Real e = 0.9086 "Coefficient of restitution of the ElastoGap contact";
  MassWithBouncingStop ball(m=m, smin=0.05, e=e, s(start=4.0, fixed=true), v(start=0, fixed=true));
  Translational.Sources.ConstantForce gravity(f_constant=-m*Modelica.Constants.g_n) "Weight of the ball";
equation
  connect(gravity.flange, ball.flange_b);
  annotation(experiment(StopTime=10, Interval=0.001, Tolerance=1e-8));
end BouncingBallStop;
