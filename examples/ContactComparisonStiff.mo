model ContactComparisonStiff
  "ContactComparison with ten times stiffer and more strongly damped ElastoGaps (c = 10000 N/m, d = 1000 N.s/m)"
  import Modelica.Mechanics.Translational;
  parameter Modelica.Units.SI.Mass m = 1 "Mass of both sliders";
  parameter Modelica.Units.SI.TranslationalSpringConstant c = 10000 "Contact stiffness of the ElastoGaps";
  parameter Modelica.Units.SI.TranslationalDampingConstant d = 1000 "Contact damping of the ElastoGaps";
  parameter Modelica.Units.SI.Distance gap = 7 "Free travel to each wall";

  Modelica.Blocks.Sources.Sine sineForce(amplitude=10, f=0.1) "Driving force [N]";

  // (a) penalty contact: two ElastoGaps, both oriented from left to right.
  // Initially both ends of each gap coincide (s_rel = 0); contact starts at s_rel < -gap.
  Translational.Components.Fixed wallLeft(s0=0);
  Translational.Components.ElastoGap gapLeft(c=c, d=d, s_rel0=-gap, s_rel(start=0));
  Translational.Components.Mass massGap(m=m, L=0, s(start=0, fixed=true), v(start=0, fixed=true));
  Translational.Components.ElastoGap gapRight(c=c, d=d, s_rel0=-gap, s_rel(start=0));
  Translational.Components.Fixed wallRight(s0=0);
  Translational.Sources.Force forceGap;

  // (b) hard stops: the mass is put on the stop and its speed set to zero on impact.
  // Friction is switched off explicitly (the defaults would add Stribeck friction).
  Translational.Components.MassWithStopAndFriction massStop(m=m, L=0, smax=gap, smin=-gap,
    F_prop=0, F_Coulomb=0, F_Stribeck=0, fexp=0, s(start=0, fixed=true), v(start=0, fixed=true));
  Translational.Sources.Force forceStop;
equation
  connect(wallLeft.flange, gapLeft.flange_a);
  connect(gapLeft.flange_b, massGap.flange_a);
  connect(massGap.flange_b, gapRight.flange_a);
  connect(gapRight.flange_b, wallRight.flange);
  connect(sineForce.y, forceGap.f);
  connect(forceGap.flange, massGap.flange_a);
  connect(sineForce.y, forceStop.f);
  connect(forceStop.flange, massStop.flange_a);
  annotation(experiment(StopTime=20, Interval=0.01));
end ContactComparisonStiff;
