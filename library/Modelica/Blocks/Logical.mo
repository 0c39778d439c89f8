within Modelica.Blocks;
package Logical "Boolean logic and comparisons"
  extends Modelica.Icons.Package;

  block And "y = u1 and u2"
    extends Blocks.Interfaces.partialBooleanSI2SO;
  equation
    y = u1 and u2;
  end And;

  block Or "y = u1 or u2"
    extends Blocks.Interfaces.partialBooleanSI2SO;
  equation
    y = u1 or u2;
  end Or;

  block Xor "y = u1 xor u2"
    extends Blocks.Interfaces.partialBooleanSI2SO;
  equation
    y = u1 <> u2;
  end Xor;

  block Not "y = not u"
    extends Blocks.Interfaces.partialBooleanSISO;
  equation
    y = not u;
  end Not;

  block Pre "y = pre(u)"
    parameter Boolean pre_u_start = false "pre(u) at the initial time";
    extends Blocks.Interfaces.partialBooleanSISO;
  initial equation
    pre(u) = pre_u_start;
  equation
    y = pre(u);
  end Pre;

  block Edge "y = true at a rising edge of u"
    parameter Boolean pre_u_start = false "pre(u) at the initial time";
    extends Blocks.Interfaces.partialBooleanSISO;
  initial equation
    pre(u) = pre_u_start;
  equation
    y = edge(u);
  end Edge;

  block GreaterThreshold "y = u > threshold"
    extends Blocks.Interfaces.partialBooleanThresholdComparison;
  equation
    y = u > threshold;
  end GreaterThreshold;

  block GreaterEqualThreshold "y = u >= threshold"
    extends Blocks.Interfaces.partialBooleanThresholdComparison;
  equation
    y = u >= threshold;
  end GreaterEqualThreshold;

  block LessThreshold "y = u < threshold"
    extends Blocks.Interfaces.partialBooleanThresholdComparison;
  equation
    y = u < threshold;
  end LessThreshold;

  block LessEqualThreshold "y = u <= threshold"
    extends Blocks.Interfaces.partialBooleanThresholdComparison;
  equation
    y = u <= threshold;
  end LessEqualThreshold;

  block Greater "y = u1 > u2"
    extends Blocks.Interfaces.partialBooleanComparison;
  equation
    y = u1 > u2;
  end Greater;

  block Less "y = u1 < u2"
    extends Blocks.Interfaces.partialBooleanComparison;
  equation
    y = u1 < u2;
  end Less;

  block Hysteresis "Switches to true above uHigh and back to false below uLow"
    extends Modelica.Blocks.Icons.PartialBooleanBlock;
    parameter Real uLow(start=0) "Switch to false when u falls below uLow";
    parameter Real uHigh(start=1) "Switch to true when u rises above uHigh";
    parameter Boolean pre_y_start = false "pre(y) at the initial time";
    Blocks.Interfaces.RealInput u "Input signal";
    Blocks.Interfaces.BooleanOutput y "Output signal";
  initial equation
    pre(y) = pre_y_start;
  equation
    assert(uHigh > uLow, "Hysteresis: uHigh must be larger than uLow");
    y = not pre(y) and u > uHigh or pre(y) and u >= uLow;
  end Hysteresis;

  block Switch "y = if u2 then u1 else u3"
    extends Modelica.Blocks.Icons.PartialBooleanBlock;
    Blocks.Interfaces.RealInput u1 "Output when u2 is true";
    Blocks.Interfaces.BooleanInput u2 "Selector";
    Blocks.Interfaces.RealInput u3 "Output when u2 is false";
    Blocks.Interfaces.RealOutput y "Selected signal";
  equation
    y = if u2 then u1 else u3;
  end Switch;

  block LogicalSwitch "y = if u2 then u1 else u3 (Boolean signals)"
    extends Blocks.Interfaces.partialBooleanSI3SO;
  equation
    y = if u2 then u1 else u3;
  end LogicalSwitch;

  block Timer "Time elapsed since u became true (0 while u is false)"
    extends Modelica.Blocks.Icons.PartialBooleanBlock;
    Blocks.Interfaces.BooleanInput u "Timer runs while u is true";
    Blocks.Interfaces.RealOutput y "Elapsed time";
  protected
    discrete SI.Time entryTime(start=0, fixed=true) "Time when u last became true";
  equation
    when u then
      entryTime = time;
    end when;
    y = if u then time - entryTime else 0.0;
  end Timer;
end Logical;
