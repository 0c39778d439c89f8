within Modelica.Blocks;
package Tables "Table look-up (moss: pure Modelica linear interpolation)"
  extends Modelica.Icons.Package;

  package Internal "Pure Modelica table helpers used by the time tables"
    extends Modelica.Icons.InternalPackage;

    function findSegment "Index i of the table segment [i, i+1] to use for abscissa x"
      extends Modelica.Icons.Function;
      input Real table[:, :] "First column: non-decreasing abscissa";
      input Real x "Abscissa value";
      output Integer i "Lower row of the segment (1 .. nrow-1)";
    protected
      Integer n = size(table, 1);
    algorithm
      // At a duplicated abscissa (a jump) the right-hand segment is taken,
      // so the value at the jump time is the value after the jump.
      i := 1;
      while i < n - 1 and x >= table[i + 1, 1] loop
        i := i + 1;
      end while;
    end findSegment;

    function interpolateColumn "Value of column icol of a table at abscissa x"
      extends Modelica.Icons.Function;
      input Real table[:, :] "First column: non-decreasing abscissa";
      input Integer icol "Column to interpolate";
      input Real x "Abscissa value";
      input Modelica.Blocks.Types.Smoothness smoothness = Modelica.Blocks.Types.Smoothness.LinearSegments;
      input Modelica.Blocks.Types.Extrapolation extrapolation = Modelica.Blocks.Types.Extrapolation.LastTwoPoints;
      output Real y "Interpolated value";
    protected
      Integer n = size(table, 1);
      Integer i;
      Real xa "Abscissa after periodic wrapping";
      Real x0;
      Real x1;
      Real span;
    algorithm
      if n == 1 then
        y := table[1, icol];
      else
        x0 := table[1, 1];
        x1 := table[n, 1];
        xa := x;
        if extrapolation == Modelica.Blocks.Types.Extrapolation.Periodic then
          span := x1 - x0;
          if span > 0 then
            xa := x0 + (x - x0) - span*floor((x - x0)/span);
          end if;
        elseif extrapolation == Modelica.Blocks.Types.Extrapolation.NoExtrapolation then
          assert(x >= x0 and x <= x1, "Table abscissa " + String(x) + " is outside the table range");
        elseif extrapolation == Modelica.Blocks.Types.Extrapolation.HoldLastPoint then
          xa := min(max(x, x0), x1);
        end if;
        i := findSegment(table, xa);
        if smoothness == Modelica.Blocks.Types.Smoothness.ConstantSegments then
          y := if xa >= table[i + 1, 1] then table[i + 1, icol] else table[i, icol];
        elseif table[i + 1, 1] - table[i, 1] <= 0 then
          y := table[i + 1, icol];
        else
          y := table[i, icol] + (table[i + 1, icol] - table[i, icol])*(xa - table[i, 1])
            /(table[i + 1, 1] - table[i, 1]);
        end if;
      end if;
      annotation(derivative(zeroDerivative=table) = interpolateColumnDer);
    end interpolateColumn;

    function interpolateColumnDer "Derivative of interpolateColumn with respect to x (table fixed)"
      extends Modelica.Icons.Function;
      input Real table[:, :] "First column: non-decreasing abscissa";
      input Integer icol "Column to interpolate";
      input Real x "Abscissa value";
      input Modelica.Blocks.Types.Smoothness smoothness = Modelica.Blocks.Types.Smoothness.LinearSegments;
      input Modelica.Blocks.Types.Extrapolation extrapolation = Modelica.Blocks.Types.Extrapolation.LastTwoPoints;
      input Real dx "Derivative of x";
      output Real dy "Derivative of the interpolated value";
    protected
      Integer n = size(table, 1);
      Integer i;
      Real xa "Abscissa after periodic wrapping";
      Real x0;
      Real x1;
      Real span;
      Boolean held "Outside the table with HoldLastPoint: the value does not change";
    algorithm
      dy := 0;
      if n > 1 and smoothness <> Modelica.Blocks.Types.Smoothness.ConstantSegments then
        x0 := table[1, 1];
        x1 := table[n, 1];
        xa := x;
        held := false;
        if extrapolation == Modelica.Blocks.Types.Extrapolation.Periodic then
          span := x1 - x0;
          if span > 0 then
            xa := x0 + (x - x0) - span*floor((x - x0)/span);
          end if;
        elseif extrapolation == Modelica.Blocks.Types.Extrapolation.HoldLastPoint then
          held := x < x0 or x > x1;
        end if;
        i := findSegment(table, xa);
        if not held and table[i + 1, 1] - table[i, 1] > 0 then
          dy := (table[i + 1, icol] - table[i, icol])/(table[i + 1, 1] - table[i, 1])*dx;
        end if;
      end if;
    end interpolateColumnDer;

    function nextAbscissa "Smallest table abscissa strictly greater than x (inf if none)"
      extends Modelica.Icons.Function;
      input Real table[:, :] "First column: non-decreasing abscissa";
      input Real x "Current abscissa";
      output Real xNext "Next table point";
    protected
      Integer n = size(table, 1);
      Integer i = 1;
    algorithm
      xNext := Modelica.Constants.inf;
      while i <= n loop
        if table[i, 1] > x then
          xNext := table[i, 1];
          break;
        end if;
        i := i + 1;
      end while;
    end nextAbscissa;
  end Internal;

  block CombiTable1Ds "Table look-up of several columns for one input (table given as parameter)"
    extends Modelica.Blocks.Interfaces.SIMO(final nout=size(columns, 1));
    parameter Boolean tableOnFile = false "moss: tables on file are not supported";
    parameter Real table[:, :] = fill(0.0, 0, 2) "Rows {u, values...}, u increasing";
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
    parameter Boolean verboseExtrapolation = false "Not used";
    final parameter Real u_min = table[1, 1] "Smallest abscissa in the table";
    final parameter Real u_max = table[size(table, 1), 1] "Largest abscissa in the table";
  equation
    assert(not tableOnFile, "CombiTable1Ds: tableOnFile = true is not supported by the moss library");
    assert(size(table, 1) > 0 and size(table, 2) > 0, "CombiTable1Ds: the table is empty");
    for i in 1:nout loop
      y[i] = Internal.interpolateColumn(table, columns[i], u, smoothness, extrapolation);
    end for;
  end CombiTable1Ds;

  block CombiTable1Dv "Table look-up: column columns[i] at input u[i] (table given as parameter)"
    extends Modelica.Blocks.Interfaces.MIMOs(final n=size(columns, 1));
    parameter Boolean tableOnFile = false "moss: tables on file are not supported";
    parameter Real table[:, :] = fill(0.0, 0, 2) "Rows {u, values...}, u increasing";
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
    parameter Boolean verboseExtrapolation = false "Not used";
    final parameter Real u_min = table[1, 1] "Smallest abscissa in the table";
    final parameter Real u_max = table[size(table, 1), 1] "Largest abscissa in the table";
  equation
    assert(not tableOnFile, "CombiTable1Dv: tableOnFile = true is not supported by the moss library");
    assert(size(table, 1) > 0 and size(table, 2) > 0, "CombiTable1Dv: the table is empty");
    for i in 1:n loop
      y[i] = Internal.interpolateColumn(table, columns[i], u[i], smoothness, extrapolation);
    end for;
  end CombiTable1Dv;
end Tables;
