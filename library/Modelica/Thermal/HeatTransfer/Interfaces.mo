within Modelica.Thermal.HeatTransfer;
package Interfaces "Heat ports and partial models"
  extends Modelica.Icons.InterfacesPackage;

  partial connector HeatPort "Thermal port: temperature and heat flow into the component"
    SI.Temperature T "Port temperature";
    flow SI.HeatFlowRate Q_flow "Heat flow rate, positive into the component";
  end HeatPort;

  connector HeatPort_a "Heat port (filled icon in MSL)"
    extends HeatPort;
  end HeatPort_a;

  connector HeatPort_b "Heat port (hollow icon in MSL)"
    extends HeatPort;
  end HeatPort_b;

  partial model Element1D "Two heat ports, no stored energy"
    SI.HeatFlowRate Q_flow "Heat flow rate from port_a to port_b";
    SI.TemperatureDifference dT "port_a.T - port_b.T";
    HeatPort_a port_a "Port on side a";
    HeatPort_b port_b "Port on side b";
  equation
    dT = port_a.T - port_b.T;
    port_a.Q_flow = Q_flow;
    port_b.Q_flow = -Q_flow;
  end Element1D;

  partial model PartialElementaryConditionalHeatPort
    "Optional heat port through which the component's loss power leaves (fixed temperature T without it)"
    parameter Boolean useHeatPort = false "= true: heatPort is enabled" annotation(Evaluate=true);
    parameter SI.Temperature T = 293.15 "Device temperature used when useHeatPort = false";
    Modelica.Thermal.HeatTransfer.Interfaces.HeatPort_a heatPort(final T=TheatPort, final Q_flow=-lossPower)
      if useHeatPort "Optional port for the dissipated power";
    SI.Power lossPower "Dissipated power (leaves through heatPort)";
    SI.Temperature TheatPort "Temperature of the heat port";
  equation
    if not useHeatPort then
      TheatPort = T;
    end if;
  end PartialElementaryConditionalHeatPort;

  partial model PartialElementaryConditionalHeatPortWithoutT
    "Optional heat port through which the component's loss power leaves"
    parameter Boolean useHeatPort = false "= true: heatPort is enabled" annotation(Evaluate=true);
    Modelica.Thermal.HeatTransfer.Interfaces.HeatPort_a heatPort(final Q_flow=-lossPower)
      if useHeatPort "Optional port for the dissipated power";
    SI.Power lossPower "Dissipated power (leaves through heatPort)";
  end PartialElementaryConditionalHeatPortWithoutT;

  partial model PartialConditionalHeatPort
    "Optional heat port; without it the heat goes to a fixed temperature T (internalHeatPort is always present)"
    parameter Boolean useHeatPort = false "= true: heatPort is enabled" annotation(Evaluate=true);
    parameter SI.Temperature T = 293.15 "Device temperature used when useHeatPort = false";
    HeatTransfer.Interfaces.HeatPort_a heatPort if useHeatPort "Optional port for the dissipated power";
    HeatTransfer.Sources.FixedTemperature fixedTemperature(final T=T) if not useHeatPort
      "Ambient used when there is no heat port";
  protected
    HeatPort_a internalHeatPort "Connected to heatPort or to the fixed temperature";
  equation
    connect(heatPort, internalHeatPort);
    connect(fixedTemperature.port, internalHeatPort);
  end PartialConditionalHeatPort;
end Interfaces;
