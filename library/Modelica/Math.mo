within Modelica;
package Math "Mathematical functions and small vector/table helpers"
  extends Modelica.Icons.Package;
  import Modelica.Units.SI;

  function sin "Sine (the built-in function)"
    extends Modelica.Icons.Function;
    input SI.Angle u;
    output Real y;
  external "builtin" y = sin(u);
  end sin;

  function cos "Cosine (the built-in function)"
    extends Modelica.Icons.Function;
    input SI.Angle u;
    output Real y;
  external "builtin" y = cos(u);
  end cos;

  function tan "Tangent (the built-in function)"
    extends Modelica.Icons.Function;
    input SI.Angle u;
    output Real y;
  external "builtin" y = tan(u);
  end tan;

  function asin "Inverse sine (the built-in function)"
    extends Modelica.Icons.Function;
    input Real u;
    output SI.Angle y;
  external "builtin" y = asin(u);
  end asin;

  function acos "Inverse cosine (the built-in function)"
    extends Modelica.Icons.Function;
    input Real u;
    output SI.Angle y;
  external "builtin" y = acos(u);
  end acos;

  function atan "Inverse tangent (the built-in function)"
    extends Modelica.Icons.Function;
    input Real u;
    output SI.Angle y;
  external "builtin" y = atan(u);
  end atan;

  function sinh "Hyperbolic sine (the built-in function)"
    extends Modelica.Icons.Function;
    input Real u;
    output Real y;
  external "builtin" y = sinh(u);
  end sinh;

  function cosh "Hyperbolic cosine (the built-in function)"
    extends Modelica.Icons.Function;
    input Real u;
    output Real y;
  external "builtin" y = cosh(u);
  end cosh;

  function tanh "Hyperbolic tangent (the built-in function)"
    extends Modelica.Icons.Function;
    input Real u;
    output Real y;
  external "builtin" y = tanh(u);
  end tanh;

  function exp "Exponential, base e (the built-in function)"
    extends Modelica.Icons.Function;
    input Real u;
    output Real y;
  external "builtin" y = exp(u);
  end exp;

  function log "Natural logarithm (the built-in function)"
    extends Modelica.Icons.Function;
    input Real u;
    output Real y;
  external "builtin" y = log(u);
  end log;

  function log10 "Base 10 logarithm (the built-in function)"
    extends Modelica.Icons.Function;
    input Real u;
    output Real y;
  external "builtin" y = log10(u);
  end log10;

  function atan2 "Four quadrant inverse tangent (the built-in function)"
    extends Modelica.Icons.Function;
    input Real u1 "Numerator (sine side)";
    input Real u2 "Denominator (cosine side)";
    output SI.Angle y;
  external "builtin" y = atan2(u1, u2);
  end atan2;

  function atan3 "Four quadrant inverse tangent, result closest to a given angle y0"
    extends Modelica.Icons.Function;
    input Real u1;
    input Real u2;
    input SI.Angle y0 = 0 "Result is in the range y0-pi .. y0+pi";
    output SI.Angle y;
  protected
    constant Real pi = Modelica.Constants.pi;
    Real base;
  algorithm
    base := atan2(u1, u2);
    y := base + 2*pi*floor((y0 - base + pi)/(2*pi));
  end atan3;

  function asinh "Inverse of sinh"
    extends Modelica.Icons.Function;
    input Real u;
    output Real y;
  algorithm
    // log(u + sqrt(u^2+1)) loses precision for large negative u; use odd symmetry
    y := if u >= 0 then log(u + sqrt(u*u + 1)) else -log(-u + sqrt(u*u + 1));
  end asinh;

  function acosh "Inverse of cosh (u >= 1)"
    extends Modelica.Icons.Function;
    input Real u;
    output Real y;
  algorithm
    assert(u >= 1.0, "acosh requires u >= 1");
    y := log(u + sqrt(u*u - 1));
  end acosh;

  function atanh "Inverse of tanh (|u| < 1)"
    extends Modelica.Icons.Function;
    input Real u;
    output Real y;
  algorithm
    assert(abs(u) < 1.0, "atanh requires |u| < 1");
    y := 0.5*log((1 + u)/(1 - u));
  end atanh;

  function isEqual "True if two reals differ by at most eps"
    extends Modelica.Icons.Function;
    input Real s1 "First value";
    input Real s2 "Second value";
    input Real eps(min=0) = 0.0 "Accepted absolute difference";
    output Boolean result;
  algorithm
    result := abs(s1 - s2) <= eps;
  end isEqual;

  function tempInterpol1 "Linear interpolation in column icol of a table whose first column is the abscissa"
    extends Modelica.Icons.Function;
    input Real u "Abscissa value";
    input Real table[:, :] "Rows {x, y1, y2, ...} with strictly increasing x";
    input Integer icol "Column to interpolate";
    output Real y "Interpolated (or linearly extrapolated) value";
  protected
    Integer n = size(table, 1);
    Integer i;
  algorithm
    if n == 1 then
      y := table[1, icol];
    else
      // find the segment [i, i+1] that contains u, end segments extrapolate
      i := 1;
      while i < n - 1 and u >= table[i + 1, 1] loop
        i := i + 1;
      end while;
      y := table[i, icol] + (table[i + 1, icol] - table[i, icol])
        *(u - table[i, 1])/(table[i + 1, 1] - table[i, 1]);
    end if;
  end tempInterpol1;

  function tempInterpol2 "Linear interpolation of several columns of a table (first column is the abscissa)"
    extends Modelica.Icons.Function;
    input Real u "Abscissa value";
    input Real table[:, :] "Rows {x, y1, y2, ...} with strictly increasing x";
    input Integer icol[:] "Columns to interpolate";
    output Real y[1, size(icol, 1)] "Interpolated values";
  algorithm
    for k in 1:size(icol, 1) loop
      y[1, k] := tempInterpol1(u, table, icol[k]);
    end for;
  end tempInterpol2;

  package Vectors "Functions on vectors"
    extends Modelica.Icons.Package;

    function interpolate "Linear interpolation in a vector table y(x)"
      extends Modelica.Icons.Function;
      input Real x[:] "Abscissa values, non-decreasing";
      input Real y[size(x, 1)] "Ordinate values";
      input Real xi "Point of interpolation";
      input Integer iLast = 1 "Index of the segment used last time (search start)";
      output Real yi "Interpolated value";
      output Integer iNew = 1 "Index of the segment used now";
    protected
      Integer n = size(x, 1);
      Integer i;
      Real dx;
    algorithm
      if n == 1 then
        yi := y[1];
        iNew := 1;
      else
        i := max(1, min(iLast, n - 1));
        // walk left or right from the last position until x[i] <= xi < x[i+1]
        while i > 1 and xi < x[i] loop
          i := i - 1;
        end while;
        while i < n - 1 and xi >= x[i + 1] loop
          i := i + 1;
        end while;
        dx := x[i + 1] - x[i];
        if dx > 0 then
          yi := y[i] + (y[i + 1] - y[i])*(xi - x[i])/dx;
        else
          yi := y[i + 1];
        end if;
        iNew := i;
      end if;
    end interpolate;

    function norm "p-norm of a vector (p=2 Euclidean)"
      extends Modelica.Icons.Function;
      input Real v[:];
      input Real p(min=1) = 2;
      output Real result;
    algorithm
      if p == 2 then
        result := sqrt(v*v);
      elseif p >= Modelica.Constants.inf then
        result := max(abs(v));
      elseif p == 1 then
        result := sum(abs(v));
      else
        result := sum(abs(v[i])^p for i in 1:size(v, 1))^(1/p);
      end if;
    end norm;

    function length "Euclidean length of a vector"
      extends Modelica.Icons.Function;
      input Real v[:];
      output Real result;
    algorithm
      result := sqrt(v*v);
    end length;
  end Vectors;
end Math;
