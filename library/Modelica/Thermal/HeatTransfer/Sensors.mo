within Modelica.Thermal.HeatTransfer;
package Sensors "Thermal sensors"
  extends Modelica.Icons.SensorsPackage;

  model TemperatureSensor "Absolute temperature of a port (K)"
    Modelica.Blocks.Interfaces.RealOutput T(unit="K", displayUnit="degC") "Port temperature";
    Interfaces.HeatPort_a port "Measured port";
  equation
    T = port.T;
    port.Q_flow = 0;
  end TemperatureSensor;

  model RelTemperatureSensor "Temperature difference port_a.T - port_b.T"
    Interfaces.HeatPort_a port_a "First port";
    Interfaces.HeatPort_b port_b "Second port";
    Modelica.Blocks.Interfaces.RealOutput T_rel(unit="K") "port_a.T - port_b.T";
  equation
    T_rel = port_a.T - port_b.T;
    port_a.Q_flow = 0;
    port_b.Q_flow = 0;
  end RelTemperatureSensor;

  model HeatFlowSensor "Heat flow from port_a to port_b"
    Modelica.Blocks.Interfaces.RealOutput Q_flow(unit="W") "Heat flow rate from port_a to port_b";
    Interfaces.HeatPort_a port_a "Inlet";
    Interfaces.HeatPort_b port_b "Outlet";
  equation
    port_a.T = port_b.T;
    port_a.Q_flow + port_b.Q_flow = 0;
    Q_flow = port_a.Q_flow;
  end HeatFlowSensor;
end Sensors;
