within Modelica.Thermal.HeatTransfer;
package Celsius "Sources, sensors and converters with temperatures in degree Celsius"
  extends Modelica.Icons.Package;

  model ToKelvin "Converts a temperature signal from degC to K"
    Modelica.Blocks.Interfaces.RealInput Celsius(unit="degC") "Temperature in degC";
    Modelica.Blocks.Interfaces.RealOutput Kelvin(unit="K") "Temperature in K";
  equation
    Kelvin = Modelica.Units.Conversions.from_degC(Celsius);
  end ToKelvin;

  model FromKelvin "Converts a temperature signal from K to degC"
    Modelica.Blocks.Interfaces.RealInput Kelvin(unit="K") "Temperature in K";
    Modelica.Blocks.Interfaces.RealOutput Celsius(unit="degC") "Temperature in degC";
  equation
    Celsius = Modelica.Units.Conversions.to_degC(Kelvin);
  end FromKelvin;

  model FixedTemperature "Port held at a fixed temperature given in degC"
    parameter Modelica.Units.NonSI.Temperature_degC T "Port temperature";
    Interfaces.HeatPort_b port "Heat port";
  equation
    port.T = Modelica.Units.Conversions.from_degC(T);
  end FixedTemperature;

  model PrescribedTemperature "Port temperature given by an input signal in degC"
    Interfaces.HeatPort_b port "Heat port";
    Modelica.Blocks.Interfaces.RealInput T(unit="degC") "Port temperature";
  equation
    port.T = Modelica.Units.Conversions.from_degC(T);
  end PrescribedTemperature;

  model TemperatureSensor "Temperature of a port in degC"
    Modelica.Blocks.Interfaces.RealOutput T(unit="degC") "Port temperature";
    Interfaces.HeatPort_a port "Measured port";
  equation
    T = Modelica.Units.Conversions.to_degC(port.T);
    port.Q_flow = 0;
  end TemperatureSensor;
end Celsius;
