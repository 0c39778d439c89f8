within Modelica.Mechanics.Rotational;
package Sensors "Ideal sensors for rotational quantities"
  extends Modelica.Icons.SensorsPackage;

  model AngleSensor "Absolute angle of a flange"
    extends Rotational.Interfaces.PartialAbsoluteSensor;
    Modelica.Blocks.Interfaces.RealOutput phi(unit="rad", displayUnit="deg") "Absolute angle";
  equation
    phi = flange.phi;
  end AngleSensor;

  model SpeedSensor "Absolute angular velocity of a flange"
    extends Rotational.Interfaces.PartialAbsoluteSensor;
    Modelica.Blocks.Interfaces.RealOutput w(unit="rad/s") "Absolute angular velocity";
  equation
    w = der(flange.phi);
  end SpeedSensor;

  model AccSensor "Absolute angular acceleration of a flange"
    extends Rotational.Interfaces.PartialAbsoluteSensor;
    SI.AngularVelocity w "Absolute angular velocity";
    Modelica.Blocks.Interfaces.RealOutput a(unit="rad/s2") "Absolute angular acceleration";
  equation
    w = der(flange.phi);
    a = der(w);
  end AccSensor;

  model RelAngleSensor "Relative angle flange_b.phi - flange_a.phi"
    extends Rotational.Interfaces.PartialRelativeSensor;
    Modelica.Blocks.Interfaces.RealOutput phi_rel(unit="rad", displayUnit="deg") "Relative angle";
  equation
    phi_rel = flange_b.phi - flange_a.phi;
    0 = flange_a.tau;
  end RelAngleSensor;

  model RelSpeedSensor "Relative angular velocity der(flange_b.phi - flange_a.phi)"
    extends Rotational.Interfaces.PartialRelativeSensor;
    SI.Angle phi_rel(start=0) "Relative angle";
    Modelica.Blocks.Interfaces.RealOutput w_rel(unit="rad/s") "Relative angular velocity";
  equation
    phi_rel = flange_b.phi - flange_a.phi;
    w_rel = der(phi_rel);
    0 = flange_a.tau;
  end RelSpeedSensor;

  model RelAccSensor "Relative angular acceleration"
    extends Rotational.Interfaces.PartialRelativeSensor;
    SI.Angle phi_rel(start=0) "Relative angle";
    SI.AngularVelocity w_rel(start=0) "Relative angular velocity";
    Modelica.Blocks.Interfaces.RealOutput a_rel(unit="rad/s2") "Relative angular acceleration";
  equation
    phi_rel = flange_b.phi - flange_a.phi;
    w_rel = der(phi_rel);
    a_rel = der(w_rel);
    0 = flange_a.tau;
  end RelAccSensor;

  model TorqueSensor "Torque transmitted from flange_a to flange_b"
    extends Rotational.Interfaces.PartialRelativeSensor;
    Modelica.Blocks.Interfaces.RealOutput tau(unit="N.m") "Torque (= flange_a.tau = -flange_b.tau)";
  equation
    flange_a.phi = flange_b.phi;
    flange_a.tau = tau;
  end TorqueSensor;

  model PowerSensor "Power flowing from flange_a to flange_b"
    extends Rotational.Interfaces.PartialRelativeSensor;
    Modelica.Blocks.Interfaces.RealOutput power(unit="W") "Power (= flange_a.tau*w)";
  equation
    flange_a.phi = flange_b.phi;
    power = flange_a.tau*der(flange_a.phi);
  end PowerSensor;

  model MultiSensor "Speed, torque and power between two flanges"
    extends Modelica.Mechanics.Rotational.Interfaces.PartialRelativeSensor;
    Modelica.Blocks.Interfaces.RealOutput power(unit="W") "Power (= tau*w)";
    Modelica.Blocks.Interfaces.RealOutput w(unit="rad/s") "Absolute angular velocity of the flanges";
    Modelica.Blocks.Interfaces.RealOutput tau(unit="N.m") "Torque (= flange_a.tau = -flange_b.tau)";
  equation
    flange_a.phi = flange_b.phi;
    w = der(flange_a.phi);
    tau = flange_a.tau;
    power = tau*w;
  end MultiSensor;
end Sensors;
