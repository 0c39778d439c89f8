within Modelica.Mechanics.Translational;
package Sensors "Ideal sensors for translational quantities"
  extends Modelica.Icons.SensorsPackage;

  model PositionSensor "Absolute position of a flange"
    extends Translational.Interfaces.PartialAbsoluteSensor;
    Modelica.Blocks.Interfaces.RealOutput s(unit="m") "Absolute position";
  equation
    s = flange.s;
  end PositionSensor;

  model SpeedSensor "Absolute velocity of a flange"
    extends Translational.Interfaces.PartialAbsoluteSensor;
    Modelica.Blocks.Interfaces.RealOutput v(unit="m/s") "Absolute velocity";
  equation
    v = der(flange.s);
  end SpeedSensor;

  model AccSensor "Absolute acceleration of a flange"
    extends Translational.Interfaces.PartialAbsoluteSensor;
    SI.Velocity v "Absolute velocity";
    Modelica.Blocks.Interfaces.RealOutput a(unit="m/s2") "Absolute acceleration";
  equation
    v = der(flange.s);
    a = der(v);
  end AccSensor;

  model RelPositionSensor "Relative position flange_b.s - flange_a.s"
    extends Translational.Interfaces.PartialRelativeSensor;
    Modelica.Blocks.Interfaces.RealOutput s_rel(unit="m") "Relative position";
  equation
    s_rel = flange_b.s - flange_a.s;
    0 = flange_a.f;
  end RelPositionSensor;

  model RelSpeedSensor "Relative velocity der(flange_b.s - flange_a.s)"
    extends Translational.Interfaces.PartialRelativeSensor;
    SI.Position s_rel "Relative position";
    Modelica.Blocks.Interfaces.RealOutput v_rel(unit="m/s") "Relative velocity";
  equation
    s_rel = flange_b.s - flange_a.s;
    v_rel = der(s_rel);
    0 = flange_a.f;
  end RelSpeedSensor;

  model RelAccSensor "Relative acceleration"
    extends Translational.Interfaces.PartialRelativeSensor;
    SI.Position s_rel "Relative position";
    SI.Velocity v_rel "Relative velocity";
    Modelica.Blocks.Interfaces.RealOutput a_rel(unit="m/s2") "Relative acceleration";
  equation
    s_rel = flange_b.s - flange_a.s;
    v_rel = der(s_rel);
    a_rel = der(v_rel);
    0 = flange_a.f;
  end RelAccSensor;

  model ForceSensor "Force transmitted from flange_a to flange_b"
    extends Translational.Interfaces.PartialRelativeSensor;
    Modelica.Blocks.Interfaces.RealOutput f(unit="N") "Force (= flange_a.f = -flange_b.f)";
  equation
    flange_a.s = flange_b.s;
    flange_a.f = f;
  end ForceSensor;

  model PowerSensor "Power flowing from flange_a to flange_b"
    extends Translational.Interfaces.PartialRelativeSensor;
    Modelica.Blocks.Interfaces.RealOutput power(unit="W") "Power (= flange_a.f*v)";
  equation
    flange_a.s = flange_b.s;
    power = flange_a.f*der(flange_a.s);
  end PowerSensor;

  model MultiSensor "Velocity, force and power between two flanges"
    extends Translational.Interfaces.PartialRelativeSensor;
    Modelica.Blocks.Interfaces.RealOutput power(unit="W") "Power (= f*v)";
    Modelica.Blocks.Interfaces.RealOutput f(unit="N") "Force (= flange_a.f = -flange_b.f)";
    Modelica.Blocks.Interfaces.RealOutput v(unit="m/s") "Absolute velocity of the flanges";
  equation
    flange_a.s = flange_b.s;
    v = der(flange_a.s);
    f = flange_a.f;
    power = f*v;
  end MultiSensor;
end Sensors;
