within Modelica.Thermal.HeatTransfer;
package Sources "Thermal boundary conditions"
  extends Modelica.Icons.SourcesPackage;

  model FixedTemperature "Port held at a fixed temperature"
    parameter SI.Temperature T(displayUnit="degC") "Port temperature";
    Interfaces.HeatPort_b port "Heat port";
  equation
    port.T = T;
  end FixedTemperature;

  model PrescribedTemperature "Port temperature given by an input signal (in K)"
    Interfaces.HeatPort_b port "Heat port";
    Modelica.Blocks.Interfaces.RealInput T(unit="K", displayUnit="degC") "Port temperature";
  equation
    port.T = T;
  end PrescribedTemperature;

  model FixedHeatFlow "Fixed heat flow into the connected component"
    parameter SI.HeatFlowRate Q_flow "Heat flow rate at T = T_ref";
    parameter SI.Temperature T_ref = 293.15 "Reference temperature";
    parameter SI.LinearTemperatureCoefficient alpha = 0 "Temperature coefficient of the heat flow";
    Interfaces.HeatPort_b port "Heat port";
  equation
    // heat leaves this source and enters the connected component
    port.Q_flow = -Q_flow*(1 + alpha*(port.T - T_ref));
  end FixedHeatFlow;

  model PrescribedHeatFlow "Heat flow into the connected component given by an input signal"
    parameter SI.Temperature T_ref = 293.15 "Reference temperature";
    parameter SI.LinearTemperatureCoefficient alpha = 0 "Temperature coefficient of the heat flow";
    Modelica.Blocks.Interfaces.RealInput Q_flow(unit="W") "Heat flow rate at T = T_ref";
    Interfaces.HeatPort_b port "Heat port";
  equation
    port.Q_flow = -Q_flow*(1 + alpha*(port.T - T_ref));
  end PrescribedHeatFlow;
end Sources;
