within Modelica.Blocks;
package Interfaces "Signal connectors and partial blocks"
  extends Modelica.Icons.InterfacesPackage;

  connector RealInput = input Real "Real input signal";
  connector RealOutput = output Real "Real output signal";
  connector BooleanInput = input Boolean "Boolean input signal";
  connector BooleanOutput = output Boolean "Boolean output signal";
  connector IntegerInput = input Integer "Integer input signal";
  connector IntegerOutput = output Integer "Integer output signal";
  connector RealVectorInput = input Real "Real input signal (vector use)";
  connector RealVectorOutput = output Real "Real output signal (vector use)";
  connector IntegerVectorInput = input Integer "Integer input signal (vector use)";
  connector BooleanVectorInput = input Boolean "Boolean input signal (vector use)";

  partial block SO "One Real output"
    extends Modelica.Blocks.Icons.Block;
    RealOutput y "Output signal";
  end SO;

  partial block MO "Vector of Real outputs"
    extends Modelica.Blocks.Icons.Block;
    parameter Integer nout(min=1) = 1 "Number of outputs";
    RealOutput y[nout] "Output signals";
  end MO;

  partial block SISO "One Real input, one Real output"
    extends Modelica.Blocks.Icons.Block;
    RealInput u "Input signal";
    RealOutput y "Output signal";
  end SISO;

  partial block SI2SO "Two Real inputs, one Real output"
    extends Modelica.Blocks.Icons.Block;
    RealInput u1 "First input signal";
    RealInput u2 "Second input signal";
    RealOutput y "Output signal";
  end SI2SO;

  partial block SIMO "One Real input, vector of Real outputs"
    extends Modelica.Blocks.Icons.Block;
    parameter Integer nout = 1 "Number of outputs";
    RealInput u "Input signal";
    RealOutput y[nout] "Output signals";
  end SIMO;

  partial block MISO "Vector of Real inputs, one Real output"
    extends Modelica.Blocks.Icons.Block;
    parameter Integer nin = 1 "Number of inputs";
    RealInput u[nin] "Input signals";
    RealOutput y "Output signal";
  end MISO;

  partial block MIMO "Vectors of Real inputs and outputs"
    extends Modelica.Blocks.Icons.Block;
    parameter Integer nin = 1 "Number of inputs";
    parameter Integer nout = 1 "Number of outputs";
    RealInput u[nin] "Input signals";
    RealOutput y[nout] "Output signals";
  end MIMO;

  partial block MIMOs "Equally many Real inputs and outputs"
    extends Modelica.Blocks.Icons.Block;
    parameter Integer n = 1 "Number of inputs (= number of outputs)";
    RealInput u[n] "Input signals";
    RealOutput y[n] "Output signals";
  end MIMOs;

  partial block MI2MO "Two input vectors, one output vector of the same size"
    extends Modelica.Blocks.Icons.Block;
    parameter Integer n = 1 "Size of the vectors";
    RealInput u1[n] "First input vector";
    RealInput u2[n] "Second input vector";
    RealOutput y[n] "Output vector";
  end MI2MO;

  partial block SignalSource "Real source with offset and start time"
    extends SO;
    parameter Real offset = 0 "Output before startTime (and added afterwards)";
    parameter SI.Time startTime = 0 "Output y = offset for time < startTime";
  end SignalSource;

  partial block SVcontrol "Single-variable controller: set point, measurement, actuator signal"
    extends Modelica.Blocks.Icons.Block;
    RealInput u_s "Set point";
    RealInput u_m "Measurement";
    RealOutput y "Actuator signal";
  end SVcontrol;

  partial block MVcontrol "Multi-variable controller"
    extends Modelica.Blocks.Icons.Block;
    parameter Integer nu_s = 1 "Number of set points";
    parameter Integer nu_m = 1 "Number of measurements";
    parameter Integer ny = 1 "Number of actuator signals";
    RealInput u_s[nu_s] "Set points";
    RealInput u_m[nu_m] "Measurements";
    RealOutput y[ny] "Actuator signals";
  end MVcontrol;

  partial block BooleanSISO "One Boolean input, one Boolean output"
    extends Modelica.Blocks.Icons.BooleanBlock;
    BooleanInput u "Input signal";
    BooleanOutput y "Output signal";
  end BooleanSISO;

  partial block BooleanMIMOs "Equally many Boolean inputs and outputs"
    extends Modelica.Blocks.Icons.BooleanBlock;
    parameter Integer n = 1 "Number of inputs (= number of outputs)";
    BooleanInput u[n] "Input signals";
    BooleanOutput y[n] "Output signals";
  end BooleanMIMOs;

  partial block SI2BooleanSO "Two Real inputs, one Boolean output"
    extends Modelica.Blocks.Icons.BooleanBlock;
    RealInput u1 "First input signal";
    RealInput u2 "Second input signal";
    BooleanOutput y "Output signal";
  end SI2BooleanSO;

  partial block BooleanSignalSource "Boolean source"
    extends Modelica.Blocks.Icons.BooleanBlock;
    BooleanOutput y "Output signal";
  end BooleanSignalSource;

  partial block IntegerSO "One Integer output"
    extends Modelica.Blocks.Icons.IntegerBlock;
    IntegerOutput y "Output signal";
  end IntegerSO;

  partial block IntegerMO "Vector of Integer outputs"
    extends Modelica.Blocks.Icons.IntegerBlock;
    parameter Integer nout(final min=1) = 1 "Number of outputs";
    IntegerOutput y[nout] "Output signals";
  end IntegerMO;

  partial block IntegerSignalSource "Integer source with offset and start time"
    extends IntegerSO;
    parameter Integer offset = 0 "Output before startTime (and added afterwards)";
    parameter SI.Time startTime = 0 "Output y = offset for time < startTime";
  end IntegerSignalSource;

  partial block IntegerSIBooleanSO "One Integer input, one Boolean output"
    extends Modelica.Blocks.Icons.BooleanBlock;
    IntegerInput u "Input signal";
    BooleanOutput y "Output signal";
  end IntegerSIBooleanSO;

  partial block PartialIntegerSISO "One Integer input, one Integer output"
    extends Modelica.Blocks.Icons.IntegerBlock;
    IntegerInput u "Input signal";
    IntegerOutput y "Output signal";
  end PartialIntegerSISO;

  partial block partialBooleanSI "One Boolean input"
    extends Modelica.Blocks.Icons.PartialBooleanBlock;
    Blocks.Interfaces.BooleanInput u "Input signal";
  end partialBooleanSI;

  partial block partialBooleanSO "One Boolean output"
    Blocks.Interfaces.BooleanOutput y "Output signal";
    extends Modelica.Blocks.Icons.PartialBooleanBlock;
  end partialBooleanSO;

  partial block partialBooleanSISO "One Boolean input, one Boolean output"
    extends Modelica.Blocks.Icons.PartialBooleanBlock;
    Blocks.Interfaces.BooleanInput u "Input signal";
    Blocks.Interfaces.BooleanOutput y "Output signal";
  end partialBooleanSISO;

  partial block partialBooleanSI2SO "Two Boolean inputs, one Boolean output"
    extends Modelica.Blocks.Icons.PartialBooleanBlock;
    Blocks.Interfaces.BooleanInput u1 "First input signal";
    Blocks.Interfaces.BooleanInput u2 "Second input signal";
    Blocks.Interfaces.BooleanOutput y "Output signal";
  end partialBooleanSI2SO;

  partial block partialBooleanSource "Boolean source block"
    extends Modelica.Blocks.Icons.PartialBooleanBlock;
    Blocks.Interfaces.BooleanOutput y "Output signal";
  end partialBooleanSource;

  partial block partialBooleanSI3SO "Three Boolean inputs, one Boolean output"
    extends Modelica.Blocks.Icons.PartialBooleanBlock;
    Blocks.Interfaces.BooleanInput u1 "First input signal";
    Blocks.Interfaces.BooleanInput u2 "Second input signal";
    Blocks.Interfaces.BooleanInput u3 "Third input signal";
    Blocks.Interfaces.BooleanOutput y "Output signal";
  end partialBooleanSI3SO;

  partial block partialBooleanThresholdComparison "Compares a Real input with a threshold"
    parameter Real threshold = 0 "Comparison threshold";
    Blocks.Interfaces.RealInput u "Input signal";
    Blocks.Interfaces.BooleanOutput y "Result of the comparison";
    extends Modelica.Blocks.Icons.PartialBooleanBlock;
  end partialBooleanThresholdComparison;

  partial block partialBooleanComparison "Compares two Real inputs"
    extends Modelica.Blocks.Icons.PartialBooleanBlock;
    Blocks.Interfaces.RealInput u1 "First input signal";
    Blocks.Interfaces.RealInput u2 "Second input signal";
    Blocks.Interfaces.BooleanOutput y "Result of the comparison";
  end partialBooleanComparison;
end Interfaces;
