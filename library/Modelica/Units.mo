within Modelica;
package Units "Physical quantity types and unit conversions"
  extends Modelica.Icons.Package;

  package SI "Types for SI quantities (quantity, unit, displayUnit)"
    extends Modelica.Icons.Package;

    // Space and time
    type Angle = Real(final quantity="Angle", final unit="rad", displayUnit="deg");
    type SolidAngle = Real(final quantity="SolidAngle", final unit="sr");
    type Length = Real(final quantity="Length", final unit="m");
    type PathLength = Length;
    type Position = Length;
    type Distance = Length(min=0);
    type Breadth = Length(min=0);
    type Height = Length;
    type Thickness = Length(min=0);
    type Radius = Length(min=0);
    type Diameter = Length(min=0);
    type Area = Real(final quantity="Area", final unit="m2");
    type Volume = Real(final quantity="Volume", final unit="m3");
    type Time = Real(final quantity="Time", final unit="s");
    type Duration = Time;
    type AngularVelocity = Real(final quantity="AngularVelocity", final unit="rad/s");
    type AngularAcceleration = Real(final quantity="AngularAcceleration", final unit="rad/s2");
    type AngularJerk = Real(final quantity="AngularJerk", final unit="rad/s3");
    type Velocity = Real(final quantity="Velocity", final unit="m/s");
    type Acceleration = Real(final quantity="Acceleration", final unit="m/s2");
    type Jerk = Real(final quantity="Jerk", final unit="m/s3");
    type Period = Real(final quantity="Time", final unit="s");
    type Frequency = Real(final quantity="Frequency", final unit="Hz");
    type AngularFrequency = Real(final quantity="AngularFrequency", final unit="rad/s");
    type Damping = Real(final quantity="Damping", final unit="s-1");
    type DampingCoefficient = Damping;

    // Mechanics
    type Mass = Real(quantity="Mass", final unit="kg", min=0);
    type Density = Real(final quantity="Density", final unit="kg/m3", displayUnit="g/cm3", min=0);
    type MomentOfInertia = Real(final quantity="MomentOfInertia", final unit="kg.m2");
    type Inertia = MomentOfInertia;
    type Momentum = Real(final quantity="Momentum", final unit="kg.m/s");
    type AngularMomentum = Real(final quantity="AngularMomentum", final unit="kg.m2/s");
    type Force = Real(final quantity="Force", final unit="N");
    type TranslationalSpringConstant = Real(final quantity="TranslationalSpringConstant", final unit="N/m");
    type TranslationalDampingConstant = Real(final quantity="TranslationalDampingConstant", final unit="N.s/m");
    type Weight = Force;
    type Torque = Real(final quantity="Torque", final unit="N.m");
    type ElectricalTorqueConstant = Real(final quantity="ElectricalTorqueConstant", final unit="N.m/A");
    type MomentOfForce = Torque;
    type RotationalSpringConstant = Real(final quantity="RotationalSpringConstant", final unit="N.m/rad");
    type RotationalDampingConstant = Real(final quantity="RotationalDampingConstant", final unit="N.m.s/rad");
    type Pressure = Real(final quantity="Pressure", final unit="Pa", displayUnit="bar");
    type AbsolutePressure = Pressure(min=0.0, nominal=1e5);
    type PressureDifference = Pressure;
    type Stress = Real(final unit="Pa");
    type CoefficientOfFriction = Real(final quantity="CoefficientOfFriction", final unit="1");
    type Work = Real(final quantity="Work", final unit="J");
    type Energy = Real(final quantity="Energy", final unit="J");
    type EnergyDensity = Real(final quantity="EnergyDensity", final unit="J/m3");
    type PotentialEnergy = Energy;
    type KineticEnergy = Energy;
    type Power = Real(final quantity="Power", final unit="W");
    type EnergyFlowRate = Power;
    type Efficiency = Real(final quantity="Efficiency", final unit="1", min=0);
    type Impulse = Real(final quantity="Impulse", final unit="N.s");

    // Heat
    type ThermodynamicTemperature = Real(final quantity="ThermodynamicTemperature", final unit="K",
      min=0.0, start=288.15, nominal=300, displayUnit="degC") annotation(absoluteValue=true);
    type Temperature = ThermodynamicTemperature;
    type TemperatureDifference = Real(final quantity="ThermodynamicTemperature", final unit="K")
      annotation(absoluteValue=false);
    type TemperatureSlope = Real(final quantity="TemperatureSlope", final unit="K/s");
    type LinearTemperatureCoefficient = Real(final quantity="LinearTemperatureCoefficient", final unit="1/K");
    type Heat = Real(final quantity="Energy", final unit="J");
    type HeatFlowRate = Real(final quantity="Power", final unit="W");
    type HeatFlux = Real(final quantity="HeatFlux", final unit="W/m2");
    type ThermalConductivity = Real(final quantity="ThermalConductivity", final unit="W/(m.K)");
    type CoefficientOfHeatTransfer = Real(final quantity="CoefficientOfHeatTransfer", final unit="W/(m2.K)");
    type ThermalResistance = Real(final quantity="ThermalResistance", final unit="K/W");
    type ThermalConductance = Real(final quantity="ThermalConductance", final unit="W/K");
    type HeatCapacity = Real(final quantity="HeatCapacity", final unit="J/K");
    type SpecificHeatCapacity = Real(final quantity="SpecificHeatCapacity", final unit="J/(kg.K)");

    // Electricity (only the basics)
    type ElectricCurrent = Real(final quantity="ElectricCurrent", final unit="A");
    type Current = ElectricCurrent;
    type ElectricPotential = Real(final quantity="ElectricPotential", final unit="V");
    type Voltage = ElectricPotential;
    type Resistance = Real(final quantity="Resistance", final unit="Ohm");
    type Inductance = Real(final quantity="Inductance", final unit="H");
    type Capacitance = Real(final quantity="Capacitance", final unit="F", min=0);

    type ElectricCharge = Real(final quantity="ElectricCharge", final unit="C");
    type Conductance = Real(final quantity="Conductance", final unit="S");
    type MagneticFlux = Real(final quantity="MagneticFlux", final unit="Wb");

    // Flow
    type MassFlowRate = Real(quantity="MassFlowRate", final unit="kg/s");
    type VolumeFlowRate = Real(final quantity="VolumeFlowRate", final unit="m3/s");
    type SpecificEnergy = Real(final quantity="SpecificEnergy", final unit="J/kg");
    type SpecificEnthalpy = SpecificEnergy;
    type Wavelength = Real(final quantity="Wavelength", final unit="m");

    // Dimensionless
    type PerUnit = Real(unit="1");
    type DimensionlessRatio = Real(final unit="1");
  end SI;

  package NonSI "Types for frequently used non-SI units"
    extends Modelica.Icons.Package;
    type Temperature_degC = Real(final quantity="ThermodynamicTemperature", final unit="degC")
      annotation(absoluteValue=true);
    type Angle_deg = Real(final quantity="Angle", final unit="deg");
    type AngularVelocity_rpm = Real(final quantity="AngularVelocity", final unit="rev/min");
    type Velocity_kmh = Real(final quantity="Velocity", final unit="km/h");
    type Time_day = Real(final quantity="Time", final unit="d");
    type Time_hour = Real(final quantity="Time", final unit="h");
    type Time_minute = Real(final quantity="Time", final unit="min");
    type Pressure_bar = Real(final quantity="Pressure", final unit="bar");
  end NonSI;

  package Conversions "Conversion functions between SI and non-SI units"
    extends Modelica.Icons.Package;

    function to_degC "Kelvin to degree Celsius"
      extends Modelica.Icons.Function;
      input SI.Temperature Kelvin;
      output NonSI.Temperature_degC Celsius;
    algorithm
      Celsius := Kelvin - 273.15;
      annotation(Inline=true);
    end to_degC;

    function from_degC "Degree Celsius to Kelvin"
      extends Modelica.Icons.Function;
      input NonSI.Temperature_degC Celsius;
      output SI.Temperature Kelvin;
    algorithm
      Kelvin := Celsius + 273.15;
      annotation(Inline=true);
    end from_degC;

    function to_deg "Radian to degree"
      extends Modelica.Icons.Function;
      input SI.Angle radian;
      output NonSI.Angle_deg degree;
    algorithm
      degree := radian*(180.0/Modelica.Constants.pi);
      annotation(Inline=true);
    end to_deg;

    function from_deg "Degree to radian"
      extends Modelica.Icons.Function;
      input NonSI.Angle_deg degree;
      output SI.Angle radian;
    algorithm
      radian := degree*(Modelica.Constants.pi/180.0);
      annotation(Inline=true);
    end from_deg;

    function to_rpm "Radian per second to revolutions per minute"
      extends Modelica.Icons.Function;
      input SI.AngularVelocity rs;
      output NonSI.AngularVelocity_rpm rpm;
    algorithm
      rpm := rs*(30/Modelica.Constants.pi);
      annotation(Inline=true);
    end to_rpm;

    function from_rpm "Revolutions per minute to radian per second"
      extends Modelica.Icons.Function;
      input NonSI.AngularVelocity_rpm rpm;
      output SI.AngularVelocity rs;
    algorithm
      rs := rpm*(Modelica.Constants.pi/30);
      annotation(Inline=true);
    end from_rpm;

    function to_kmh "Metre per second to kilometre per hour"
      extends Modelica.Icons.Function;
      input SI.Velocity ms;
      output NonSI.Velocity_kmh kmh;
    algorithm
      kmh := ms*3.6;
      annotation(Inline=true);
    end to_kmh;

    function from_kmh "Kilometre per hour to metre per second"
      extends Modelica.Icons.Function;
      input NonSI.Velocity_kmh kmh;
      output SI.Velocity ms;
    algorithm
      ms := kmh/3.6;
      annotation(Inline=true);
    end from_kmh;
  end Conversions;
end Units;
