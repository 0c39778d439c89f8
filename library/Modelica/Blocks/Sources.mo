within Modelica.Blocks;
package Sources "Signal sources (output depends only on time and parameters)"
  extends Modelica.Icons.SourcesPackage;
  import Modelica.Constants.pi;

  block RealExpression "Output an arbitrary Real expression"
    Modelica.Blocks.Interfaces.RealOutput y = 0.0 "Value of the expression";
  end RealExpression;

  block BooleanExpression "Output an arbitrary Boolean expression"
    Modelica.Blocks.Interfaces.BooleanOutput y = false "Value of the expression";
  end BooleanExpression;

  block IntegerExpression "Output an arbitrary Integer expression"
    Modelica.Blocks.Interfaces.IntegerOutput y = 0 "Value of the expression";
  end IntegerExpression;

  block ContinuousClock "Time since startTime, plus offset"
    extends Interfaces.SignalSource;
  equation
    y = offset + (if time < startTime then 0 else time - startTime);
  end ContinuousClock;

  block Constant "Constant output"
    parameter Real k(start=1) "Output value";
    extends Interfaces.SO;
  equation
    y = k;
  end Constant;

  block Step "Step of given height at startTime"
    parameter Real height = 1 "Height of the step";
    extends Interfaces.SignalSource;
  equation
    y = offset + (if time < startTime then 0 else height);
  end Step;

  block Ramp "Linear rise of given height over a duration"
    parameter Real height = 1 "Height of the ramp";
    parameter SI.Time duration(min=0.0, start=2) "Time the ramp takes";
    extends Interfaces.SignalSource;
  equation
    y = offset + (if time < startTime then 0
      elseif time < startTime + duration then height*(time - startTime)/duration
      else height);
  end Ramp;

  block Sine "Sine wave"
    parameter Real amplitude = 1 "Amplitude";
    parameter SI.Frequency f(start=1) "Frequency";
    parameter SI.Angle phase = 0 "Phase at startTime";
    parameter Boolean continuous = false "= true: output offset + amplitude*sin(phase) before startTime";
    extends Interfaces.SignalSource;
  equation
    if continuous then
      y = offset + amplitude*sin(2*pi*f*smooth(0, if time < startTime then 0 else time - startTime) + phase);
    else
      y = offset + (if time < startTime then 0 else amplitude*sin(2*pi*f*(time - startTime) + phase));
    end if;
  end Sine;

  block Cosine "Cosine wave"
    parameter Real amplitude = 1 "Amplitude";
    parameter SI.Frequency f(start=1) "Frequency";
    parameter SI.Angle phase = 0 "Phase at startTime";
    parameter Boolean continuous = false "= true: output offset + amplitude*cos(phase) before startTime";
    extends Interfaces.SignalSource;
  equation
    if continuous then
      y = offset + amplitude*cos(2*pi*f*smooth(0, if time < startTime then 0 else time - startTime) + phase);
    else
      y = offset + (if time < startTime then 0 else amplitude*cos(2*pi*f*(time - startTime) + phase));
    end if;
  end Cosine;

  block ExpSine "Exponentially decaying sine wave"
    parameter Real amplitude = 1 "Amplitude at startTime";
    parameter SI.Frequency f(start=2) "Frequency";
    parameter SI.Angle phase = 0 "Phase at startTime";
    parameter SI.Damping damping(start=1) "Decay rate of the envelope";
    extends Interfaces.SignalSource;
  equation
    y = offset + (if time < startTime then 0
      else amplitude*exp(-damping*(time - startTime))*sin(2*pi*f*(time - startTime) + phase));
  end ExpSine;

  block Exponentials "Rise and fall with exponential shape"
    parameter Real outMax = 1 "Height the rise tends to";
    parameter SI.Time riseTime(min=0, start=0.5) "Duration of the rise";
    parameter SI.Time riseTimeConst(min=Modelica.Constants.small) = 0.1 "Time constant of the rise";
    parameter SI.Time fallTimeConst(min=Modelica.Constants.small) = riseTimeConst "Time constant of the fall";
    extends Interfaces.SignalSource;
  protected
    Real y_riseTime "Value reached at the end of the rise";
  equation
    y_riseTime = outMax*(1 - exp(-riseTime/riseTimeConst));
    y = offset + (if time < startTime then 0
      elseif time < startTime + riseTime then outMax*(1 - exp(-(time - startTime)/riseTimeConst))
      else y_riseTime*exp(-(time - startTime - riseTime)/fallTimeConst));
  end Exponentials;

  block Pulse "Periodic rectangular pulse"
    parameter Real amplitude = 1 "Pulse height";
    parameter Real width(final min=Modelica.Constants.small, final max=100) = 50 "Pulse width in % of the period";
    parameter SI.Time period(final min=Modelica.Constants.small, start=1) "Period";
    parameter Integer nperiod = -1 "Number of periods (< 0: unlimited)";
    extends Interfaces.SignalSource;
  protected
    parameter SI.Time T_width = period*width/100 "Time the pulse is high in each period";
    discrete SI.Time T_start(start=startTime, fixed=true) "Start of the current period";
    discrete Integer count(start=0, fixed=true) "Number of periods started before the current one";
  equation
    // a new period starts one period after the previous one
    when time >= pre(T_start) + period then
      T_start = pre(T_start) + period;
      count = pre(count) + 1;
    end when;
    y = offset + (if time < startTime or nperiod == 0 or (nperiod > 0 and count >= nperiod) then 0
      elseif time < T_start + T_width then amplitude else 0);
  end Pulse;

  block SawTooth "Periodic saw tooth"
    parameter Real amplitude = 1 "Height reached at the end of each period";
    parameter SI.Time period(final min=Modelica.Constants.small, start=1) "Period";
    parameter Integer nperiod = -1 "Number of periods (< 0: unlimited)";
    extends Interfaces.SignalSource;
  protected
    discrete SI.Time T_start(start=startTime, fixed=true) "Start of the current period";
    discrete Integer count(start=0, fixed=true) "Number of periods started before the current one";
  equation
    when time >= pre(T_start) + period then
      T_start = pre(T_start) + period;
      count = pre(count) + 1;
    end when;
    y = offset + (if time < startTime or nperiod == 0 or (nperiod > 0 and count >= nperiod) then 0
      else amplitude*(time - T_start)/period);
  end SawTooth;

  block Trapezoid "Periodic trapezoid"
    parameter Real amplitude = 1 "Height of the plateau";
    parameter SI.Time rising(final min=0) = 0 "Duration of the rise";
    parameter SI.Time width(final min=0) = 0.5 "Duration of the plateau";
    parameter SI.Time falling(final min=0) = 0 "Duration of the fall";
    parameter SI.Time period(final min=Modelica.Constants.small, start=1) "Period";
    parameter Integer nperiod = -1 "Number of periods (< 0: unlimited)";
    extends Interfaces.SignalSource;
  protected
    parameter SI.Time T_rising = rising "End of the rise within a period";
    parameter SI.Time T_width = T_rising + width "End of the plateau within a period";
    parameter SI.Time T_falling = T_width + falling "End of the fall within a period";
    discrete SI.Time T_start(start=startTime, fixed=true) "Start of the current period";
    discrete Integer count(start=0, fixed=true) "Number of periods started before the current one";
  equation
    when time >= pre(T_start) + period then
      T_start = pre(T_start) + period;
      count = pre(count) + 1;
    end when;
    y = offset + (if time < startTime or nperiod == 0 or (nperiod > 0 and count >= nperiod) then 0
      elseif time < T_start + T_rising then amplitude*(time - T_start)/T_rising
      elseif time < T_start + T_width then amplitude
      elseif time < T_start + T_falling then amplitude*(T_start + T_falling - time)/(T_falling - T_width)
      else 0);
  end Trapezoid;

  block KinematicPTP "Acceleration profile of a time-optimal point-to-point motion"
    parameter Real deltaq[:] = {1} "Distances to move";
    parameter Real qd_max[:](each final min=Modelica.Constants.small) = {1} "Maximum speeds";
    parameter Real qdd_max[:](each final min=Modelica.Constants.small) = {1} "Maximum accelerations";
    parameter SI.Time startTime = 0 "Start of the motion";
    extends Interfaces.MO(final nout=max([size(deltaq, 1); size(qd_max, 1); size(qdd_max, 1)]));
  protected
    parameter Real p_deltaq[nout] = if size(deltaq, 1) == 1 then fill(deltaq[1], nout) else deltaq;
    parameter Real p_qd_max[nout] = if size(qd_max, 1) == 1 then fill(qd_max[1], nout) else qd_max;
    parameter Real p_qdd_max[nout] = if size(qdd_max, 1) == 1 then fill(qdd_max[1], nout) else qdd_max;
    // All axes follow one normalized path s(t) in [0, 1]; the slowest axis sets its limits.
    parameter Real sd_max = 1/max({abs(p_deltaq[i])/p_qd_max[i] for i in 1:nout}) "Path speed limit";
    parameter Real sdd_max = 1/max({abs(p_deltaq[i])/p_qdd_max[i] for i in 1:nout}) "Path acceleration limit";
    parameter SI.Time Ta = if sd_max*sd_max/sdd_max >= 1 then sqrt(1/sdd_max) else sd_max/sdd_max
      "Duration of the acceleration phase";
    parameter SI.Time Tv = if sd_max*sd_max/sdd_max >= 1 then 0 else 1/sd_max - sd_max/sdd_max
      "Duration of the constant speed phase";
    Real sdd "Path acceleration";
  equation
    sdd = if time < startTime then 0
      elseif time < startTime + Ta then sdd_max
      elseif time < startTime + Ta + Tv then 0
      elseif time < startTime + 2*Ta + Tv then -sdd_max
      else 0;
    y = p_deltaq*sdd;
  end KinematicPTP;

  block TimeTable "Linear interpolation in a table with time in the first column"
    parameter Real table[:, 2] = fill(0.0, 0, 2) "Rows {time, value}; duplicated times give jumps";
    parameter SI.Time timeScale(min=Modelica.Constants.eps) = 1 "Unit of the time column";
    extends Interfaces.SignalSource;
    parameter SI.Time shiftTime = startTime "Time shift of the table";
  protected
    discrete SI.Time nextEvent(start=0, fixed=true) "Next table point (time event)";
  equation
    assert(size(table, 1) > 0, "TimeTable: the table is empty");
    when {initial(), time >= pre(nextEvent)} then
      nextEvent = shiftTime + timeScale*Modelica.Blocks.Tables.Internal.nextAbscissa(table, (time - shiftTime)/timeScale);
    end when;
    y = offset + (if time < startTime then 0
      else Modelica.Blocks.Tables.Internal.interpolateColumn(table, 2, (time - shiftTime)/timeScale));
  end TimeTable;

  block CombiTimeTable "Interpolation of several table columns over time (table given as parameter)"
    extends Modelica.Blocks.Interfaces.MO(final nout=max([size(columns, 1); size(offset, 1)]));
    parameter Boolean tableOnFile = false "moss: tables on file are not supported";
    parameter Real table[:, :] = fill(0.0, 0, 2) "Rows {time, values...}; duplicated times give jumps";
    parameter String tableName = "NoName" "Not used (tables on file are not supported)";
    parameter String fileName = "NoName" "Not used (tables on file are not supported)";
    parameter String delimiter = "," "Not used";
    parameter Integer nHeaderLines = 0 "Not used";
    parameter Boolean verboseRead = true "Not used";
    parameter Integer columns[:] = 2:size(table, 2) "Columns of the table that are output";
    parameter Modelica.Blocks.Types.Smoothness smoothness = Modelica.Blocks.Types.Smoothness.LinearSegments
      "Interpolation (LinearSegments or ConstantSegments; others treated as linear)";
    parameter Modelica.Blocks.Types.Extrapolation extrapolation = Modelica.Blocks.Types.Extrapolation.LastTwoPoints
      "Behaviour outside the table range";
    parameter SI.Time timeScale(min=Modelica.Constants.eps) = 1 "Unit of the time column";
    parameter Real offset[:] = {0} "Offsets added to the outputs";
    parameter SI.Time startTime = 0 "Output = offset for time < startTime";
    parameter SI.Time shiftTime = startTime "Time shift of the table";
    parameter Modelica.Blocks.Types.TimeEvents timeEvents = Modelica.Blocks.Types.TimeEvents.Always
      "Time events at table points";
    parameter Boolean verboseExtrapolation = false "Not used";
    final parameter SI.Time t_min = t_minScaled*timeScale "First time in the table";
    final parameter SI.Time t_max = t_maxScaled*timeScale "Last time in the table";
    final parameter Real t_minScaled = table[1, 1] "First (scaled) time in the table";
    final parameter Real t_maxScaled = table[size(table, 1), 1] "Last (scaled) time in the table";
  protected
    final parameter Real p_offset[nout] = if size(offset, 1) == 1 then fill(offset[1], nout) else offset
      "Offset of each output";
    discrete SI.Time nextTimeEvent(start=0, fixed=true) "Next table point (time event)";
    Real timeScaled "Table time";
  equation
    assert(not tableOnFile, "CombiTimeTable: tableOnFile = true is not supported by the moss library");
    assert(size(table, 1) > 0 and size(table, 2) > 0, "CombiTimeTable: the table is empty");
    timeScaled = (time - shiftTime)/timeScale;
    when {initial(), time >= pre(nextTimeEvent)} then
      nextTimeEvent = if timeEvents == Modelica.Blocks.Types.TimeEvents.NoTimeEvents then Modelica.Constants.inf
        else shiftTime + timeScale*Modelica.Blocks.Tables.Internal.nextAbscissa(table, timeScaled);
    end when;
    for i in 1:nout loop
      y[i] = p_offset[i] + (if time < startTime then 0
        else Modelica.Blocks.Tables.Internal.interpolateColumn(table, columns[i], timeScaled, smoothness, extrapolation));
    end for;
  end CombiTimeTable;

  block BooleanConstant "Constant Boolean output"
    parameter Boolean k = true "Output value";
    extends Interfaces.partialBooleanSource;
  equation
    y = k;
  end BooleanConstant;

  block BooleanStep "Boolean step at startTime"
    parameter SI.Time startTime = 0 "Time of the step";
    parameter Boolean startValue = false "Output before startTime";
    extends Interfaces.partialBooleanSource;
  equation
    y = if time >= startTime then not startValue else startValue;
  end BooleanStep;

  block BooleanPulse "Periodic Boolean pulse"
    parameter Real width(final min=Modelica.Constants.small, final max=100) = 50 "Width in % of the period";
    parameter SI.Time period(final min=Modelica.Constants.small, start=1) "Period";
    parameter SI.Time startTime = 0 "Start of the first pulse";
    extends Interfaces.partialBooleanSource;
  protected
    parameter SI.Time Twidth = period*width/100 "Time the pulse is true in each period";
    discrete SI.Time T_start(start=startTime, fixed=true) "Start of the current period";
  equation
    when time >= pre(T_start) + period then
      T_start = pre(T_start) + period;
    end when;
    y = time >= startTime and time < T_start + Twidth;
  end BooleanPulse;

  block IntegerConstant "Constant Integer output"
    parameter Integer k(start=1) "Output value";
    extends Interfaces.IntegerSO;
  equation
    y = k;
  end IntegerConstant;

  block IntegerStep "Integer step at startTime"
    parameter Integer height = 1 "Height of the step";
    extends Interfaces.IntegerSignalSource;
  equation
    y = offset + (if time < startTime then 0 else height);
  end IntegerStep;
end Sources;
