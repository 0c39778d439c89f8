within Modelica.Mechanics.Translational;
package Examples "Runnable demonstrations (same structure and parameters as the MSL examples)"
  extends Modelica.Icons.ExamplesPackage;

  package Utilities "Helpers for the examples"
    extends Modelica.Icons.UtilitiesPackage;

    function GenerateStribeckFrictionTable "Friction force table F(v) = F_Coulomb + F_prop*v + F_Stribeck*exp(-fexp*v)"
      extends Modelica.Icons.Function;
      input Real F_prop(final unit="N.s/m", final min=0) "Viscous friction coefficient";
      input SI.Force F_Coulomb "Coulomb friction force";
      input SI.Force F_Stribeck "Stribeck force at zero speed";
      input Real fexp(final unit="s/m", final min=0) "Decay rate of the Stribeck force";
      input Real v_max "Table covers 0 .. v_max";
      input Integer nTable(min=2) = 100 "Number of rows";
      output Real table[nTable, 2] "Rows {v, F}";
    protected
      Real v "Speed of the current row";
    algorithm
      for i in 1:nTable loop
        v := v_max*(i - 1)/(nTable - 1);
        table[i, 1] := v;
        table[i, 2] := F_Coulomb + F_prop*v + F_Stribeck*exp(-fexp*v);
      end for;
    end GenerateStribeckFrictionTable;
  end Utilities;

  model SignConvention "Force directions: a positive force pushes in the direction of the force arrow"
    extends Modelica.Icons.Example;
    Translational.Components.Mass mass1(L=1, s(fixed=true), v(fixed=true), m=1);
    Translational.Sources.Force force1;
    Modelica.Blocks.Sources.Constant constant1(k=1);
    Translational.Components.Mass mass2(L=1, s(fixed=true), v(fixed=true), m=1);
    Translational.Sources.Force force2;
    Modelica.Blocks.Sources.Constant constant2(k=1);
    Translational.Components.Mass mass3(L=1, s(fixed=true), v(fixed=true), m=1);
    Translational.Sources.Force force3(useSupport=false);
    Modelica.Blocks.Sources.Constant constant3(k=1);
    Translational.Components.Fixed fixed;
  equation
    connect(constant1.y, force1.f);
    connect(constant2.y, force2.f);
    connect(constant3.y, force3.f);
    connect(force1.flange, mass1.flange_a);
    connect(force2.flange, mass2.flange_b);
    connect(mass3.flange_b, force3.flange);
    // force3 has no support (useSupport=false): this connection is removed
    connect(fixed.flange, force3.support);
    annotation(experiment(StopTime=1.0, Interval=0.001));
  end SignConvention;

  model Accelerate "Mass driven by a prescribed acceleration"
    extends Modelica.Icons.Example;
    Translational.Sources.Accelerate accelerate;
    Translational.Components.Mass mass(L=1, m=1);
    Modelica.Blocks.Sources.Constant constantAcc(k=1);
  equation
    connect(constantAcc.y, accelerate.a_ref);
    connect(accelerate.flange, mass.flange_a);
    annotation(experiment(StopTime=1.0, Interval=0.001));
  end Accelerate;

  model Damper "Moving masses stopped by a damper, a damper parallel to a spring, and a SpringDamper"
    extends Modelica.Icons.Example;
    Translational.Components.Mass mass1(L=1, s(start=3, fixed=true), v(start=10, fixed=true), m=1);
    Translational.Components.Damper damper1(d=25);
    Translational.Components.Fixed fixed1(s0=4.5);
    Translational.Components.Mass mass2(L=1, s(start=3, fixed=true), v(start=10, fixed=true), m=1);
    Translational.Components.Damper damper2(d=25);
    Translational.Components.Fixed fixed2(s0=4.5);
    Translational.Components.Mass mass3(L=1, s(start=3, fixed=true), v(start=10, fixed=true), m=1);
    Translational.Components.Fixed fixed3(s0=4.5);
    Translational.Components.Spring spring2(s_rel0=1, c=1);
    Translational.Components.SpringDamper springDamper3(s_rel0=1, d=25, c=1);
  equation
    connect(mass1.flange_b, damper1.flange_a);
    connect(damper1.flange_b, fixed1.flange);
    connect(mass2.flange_b, damper2.flange_a);
    connect(damper2.flange_b, spring2.flange_b);
    connect(damper2.flange_a, spring2.flange_a);
    connect(damper2.flange_b, fixed2.flange);
    connect(mass3.flange_b, springDamper3.flange_a);
    connect(springDamper3.flange_b, fixed3.flange);
    annotation(experiment(StopTime=1.0, Interval=0.001));
  end Damper;

  model Oscillator "Undamped and damped spring-mass oscillators driven at their resonance"
    extends Modelica.Icons.Example;
    Translational.Components.Mass mass1(L=1, s(start=-0.5, fixed=true), v(start=0, fixed=true), m=1);
    Translational.Components.Spring spring1(s_rel0=1, c=10000);
    Translational.Components.Fixed fixed1(s0=1);
    Translational.Sources.Force force1;
    Modelica.Blocks.Sources.Sine sine1(f=15.9155);
    Translational.Components.Mass mass2(L=1, s(start=-0.5, fixed=true), v(start=0, fixed=true), m=1);
    Translational.Components.Spring spring2(s_rel0=1, c=10000);
    Translational.Components.Fixed fixed2(s0=1);
    Translational.Sources.Force force2;
    Modelica.Blocks.Sources.Sine sine2(f=15.9155);
    Translational.Components.Damper damper1(d=10);
  equation
    connect(sine1.y, force1.f);
    connect(force1.flange, mass1.flange_a);
    connect(mass1.flange_b, spring1.flange_a);
    connect(spring1.flange_b, fixed1.flange);
    connect(sine2.y, force2.f);
    connect(force2.flange, mass2.flange_a);
    connect(mass2.flange_b, spring2.flange_a);
    connect(spring2.flange_a, damper1.flange_a);
    connect(damper1.flange_b, spring2.flange_b);
    connect(spring2.flange_b, fixed2.flange);
    annotation(experiment(StopTime=1.0, Interval=0.001));
  end Oscillator;

  model ElastoGap "Mass between two springs compared with a mass between two ElastoGaps"
    extends Modelica.Icons.Example;
    Components.Fixed fixed;
    Components.Rod rod1(L=2);
    Components.Rod rod2(L=2);
    Components.SpringDamper springDamper1(c=10, s_rel0=1, s_rel(fixed=false, start=1), d=1.5);
    Components.SpringDamper springDamper2(c=10, s_rel0=1, s_rel(fixed=false, start=1), d=1.5);
    Components.Mass mass1(s(fixed=true, start=2), L=0, m=1, v(fixed=true));
    Components.ElastoGap elastoGap1(c=10, s_rel(fixed=false, start=1.5), s_rel0=1.5, d=1.5);
    Components.ElastoGap elastoGap2(c=10, s_rel(fixed=false, start=1.5), s_rel0=1.5, d=1.5);
    Components.Mass mass2(s(fixed=true, start=2), L=0, m=1, v(fixed=true));
    parameter SI.TranslationalDampingConstant d = 1.5 "Damping constant";
  equation
    connect(rod1.flange_b, fixed.flange);
    connect(fixed.flange, rod2.flange_a);
    connect(springDamper1.flange_a, rod1.flange_a);
    connect(springDamper1.flange_b, mass1.flange_a);
    connect(mass1.flange_b, springDamper2.flange_a);
    connect(springDamper2.flange_b, rod2.flange_b);
    connect(rod1.flange_a, elastoGap1.flange_a);
    connect(elastoGap1.flange_b, mass2.flange_a);
    connect(mass2.flange_b, elastoGap2.flange_a);
    connect(rod2.flange_b, elastoGap2.flange_b);
    annotation(experiment(StopTime=5, Interval=0.01));
  end ElastoGap;

  model Brake "Braking a moving mass, without and with the brake support"
    extends Modelica.Icons.Example;
    Modelica.Mechanics.Translational.Components.Brake brake(fn_max=1, useSupport=false);
    Modelica.Mechanics.Translational.Components.Mass mass1(m=1, s(fixed=true), v(start=1, fixed=true));
    Modelica.Blocks.Sources.Step step(startTime=0.1, height=2);
    Modelica.Mechanics.Translational.Components.Brake brake1(fn_max=1, useSupport=true);
    Modelica.Mechanics.Translational.Components.Mass mass2(m=1, s(fixed=true), v(start=1, fixed=true));
    Modelica.Mechanics.Translational.Components.Fixed fixed;
  equation
    connect(mass1.flange_b, brake.flange_a);
    connect(step.y, brake.f_normalized);
    connect(mass2.flange_b, brake1.flange_a);
    connect(step.y, brake1.f_normalized);
    connect(fixed.flange, brake1.support);
    annotation(experiment(StopTime=2.0, Interval=0.001));
  end Brake;

  model Friction "Masses with stops and Stribeck friction; SupportFriction with an equivalent table"
    extends Modelica.Icons.Example;
    Modelica.Mechanics.Translational.Components.MassWithStopAndFriction stop1(L=1, s(fixed=true), v(fixed=true),
      smax=25, smin=-25, m=1, F_prop=1, F_Coulomb=5, F_Stribeck=10, fexp=2);
    Translational.Sources.Force force;
    Modelica.Blocks.Sources.Sine sineForce(amplitude=25, f=0.25);
    Modelica.Mechanics.Translational.Components.MassWithStopAndFriction stop2(L=1, smax=0.9, smin=-0.9,
      F_Coulomb=3, F_Stribeck=5, s(start=0, fixed=true), m=1, F_prop=1, fexp=2, v(start=-5, fixed=true));
    Translational.Components.Spring spring(s_rel0=1, c=500);
    Translational.Components.Fixed fixed2(s0=-1.75);
    Translational.Sources.Force force2;
    Components.Mass mass(m=1, L=1, s(fixed=true), v(fixed=true));
    Components.SupportFriction supportFriction(f_pos=Examples.Utilities.GenerateStribeckFrictionTable(
      F_prop=1, F_Coulomb=5, F_Stribeck=10, fexp=2, v_max=12, nTable=50));
  equation
    connect(sineForce.y, force.f);
    connect(force.flange, stop1.flange_a);
    connect(spring.flange_a, fixed2.flange);
    connect(spring.flange_b, stop2.flange_a);
    connect(sineForce.y, force2.f);
    connect(force2.flange, mass.flange_a);
    connect(mass.flange_b, supportFriction.flange_a);
    annotation(experiment(StopTime=5.0, Interval=0.001));
  end Friction;

  model PreLoad "Spool pre-loaded by a spring between two plates, with contacts modelled by ElastoGaps"
    extends Modelica.Icons.Example;
    Translational.Components.ElastoGap innerContactA(c=1000e3, d=250, s_rel0=0.001);
    Translational.Components.ElastoGap innerContactB(c=1000e3, d=250, s_rel0=0.001);
    Translational.Components.Mass spool(L=0.19, m=0.150, s(start=0.01475, fixed=true), v(fixed=true));
    Translational.Components.Fixed fixedLe(s0=-0.0955);
    Translational.Components.Mass springPlateA(m=10e-3, L=0.002, s(start=-0.093, fixed=true), v(fixed=true));
    Translational.Components.Mass springPlateB(m=10e-3, s(start=-0.06925, fixed=true), L=0.002, v(fixed=true));
    Translational.Components.Spring spring(c=20e3, s_rel0=0.025);
    Translational.Components.ElastoGap outerContactA(c=1000e3, d=250, s_rel0=0.0015);
    Translational.Components.ElastoGap outerContactB(c=1000e3, d=250, s_rel0=0.0015);
    Translational.Components.Rod rod1(L=0.007);
    Translational.Components.Damper friction(d=2500);
    Translational.Sources.Force force;
    Translational.Components.Rod housing(L=0.0305);
    Translational.Components.Rod rod3(L=0.00575);
    Translational.Components.Rod rod4(L=0.00575);
    Translational.Components.Rod rod2(L=0.007);
    Modelica.Blocks.Sources.Sine sineForce(amplitude=150, f=0.01);
  equation
    connect(outerContactA.flange_b, springPlateA.flange_a);
    connect(springPlateA.flange_b, spring.flange_a);
    connect(spring.flange_b, springPlateB.flange_a);
    connect(springPlateB.flange_b, outerContactB.flange_a);
    connect(outerContactB.flange_b, housing.flange_b);
    connect(springPlateA.flange_b, rod1.flange_a);
    connect(innerContactA.flange_a, rod3.flange_a);
    connect(innerContactA.flange_b, rod1.flange_b);
    connect(rod2.flange_a, innerContactB.flange_a);
    connect(rod4.flange_b, innerContactB.flange_b);
    connect(friction.flange_b, rod3.flange_a);
    connect(rod3.flange_b, rod4.flange_a);
    connect(rod2.flange_b, springPlateB.flange_a);
    connect(spool.flange_a, rod4.flange_a);
    connect(sineForce.y, force.f);
    connect(force.flange, spool.flange_a);
    connect(outerContactA.flange_a, fixedLe.flange);
    connect(housing.flange_a, fixedLe.flange);
    connect(friction.flange_a, fixedLe.flange);
    annotation(experiment(StopTime=100, Interval=0.1));
  end PreLoad;
end Examples;
