within Modelica.Thermal.HeatTransfer;
package Components "Lumped thermal elements"
  extends Modelica.Icons.Package;

  model HeatCapacitor "Lumped heat capacity: C*der(T) = heat flowing in"
    parameter SI.HeatCapacity C "Heat capacity (specific heat capacity times mass)";
    SI.Temperature T(start=293.15, displayUnit="degC") "Temperature of the element";
    SI.TemperatureSlope der_T(start=0) "der(T)";
    Interfaces.HeatPort_a port "Heat port";
  equation
    T = port.T;
    der_T = der(T);
    C*der_T = port.Q_flow;
  end HeatCapacitor;

  model ThermalConductor "Conduction: Q_flow = G*(port_a.T - port_b.T)"
    extends Interfaces.Element1D;
    parameter SI.ThermalConductance G "Thermal conductance";
  equation
    Q_flow = G*dT;
  end ThermalConductor;

  model ThermalResistor "Conduction: dT = R*Q_flow"
    extends Interfaces.Element1D;
    parameter SI.ThermalResistance R "Thermal resistance";
  equation
    dT = R*Q_flow;
  end ThermalResistor;

  model Convection "Convection: Q_flow = Gc*(solid.T - fluid.T)"
    SI.HeatFlowRate Q_flow "Heat flow rate from solid to fluid";
    SI.TemperatureDifference dT "solid.T - fluid.T";
    Modelica.Blocks.Interfaces.RealInput Gc(unit="W/K") "Convective thermal conductance";
    Interfaces.HeatPort_a solid "Solid side";
    Interfaces.HeatPort_b fluid "Fluid side";
  equation
    dT = solid.T - fluid.T;
    solid.Q_flow = Q_flow;
    fluid.Q_flow = -Q_flow;
    Q_flow = Gc*dT;
  end Convection;
end Components;
