model BouncingBallElastoGap "Ball dropped from 4 m onto the floor; the contact is an ElastoGap"
  import Modelica.Mechanics.Translational;
  parameter Modelica.Units.SI.Mass m = 0.5 "Ball mass";
  parameter Modelica.Units.SI.TranslationalSpringConstant c = 5e4 "Contact stiffness";
  parameter Modelica.Units.SI.TranslationalDampingConstant d = 10 "Contact damping";
  Translational.Components.Fixed floor(s0=0);
  // s_rel = ball position - floor position; contact (and rebound) below s_rel0 = 0.05 m
  Translational.Components.ElastoGap contact(c=c, d=d, s_rel0=0.05, s_rel(start=4.0, fixed=true),
    v_rel(start=0, fixed=true));
  Translational.Components.Mass ball(m=m, L=0);
  Translational.Sources.ConstantForce gravity(f_constant=-m*Modelica.Constants.g_n) "Weight of the ball";
equation
  connect(floor.flange, contact.flange_a);
  connect(contact.flange_b, ball.flange_a);
  connect(gravity.flange, ball.flange_b);
  annotation(experiment(StopTime=10, Interval=0.001, Tolerance=1e-8));
end BouncingBallElastoGap;
