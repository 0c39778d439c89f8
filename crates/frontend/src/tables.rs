//! The MSL's external table objects (`ExternalCombiTable1D`, `ExternalCombiTimeTable`) are
//! implemented in C. moss cannot call that C code, so calls of the table functions are
//! lowered to the Modelica functions of [`TABLES_SOURCE`], with the table matrix and
//! options taken from the object's constructor call. The object itself becomes no variable.

use crate::ctx::Flattener;
use crate::expand::Val;
use crate::flat::Expr;
use crate::fold;
use crate::inst::{err, Res};
use crate::loader::ClassId;
use moss_syntax::ast::{ClassSpecifier, Element};
use moss_syntax::Span;
use std::sync::Arc;

/// Marker field of the record value standing for an external object.
pub const EXTOBJ: &str = "$extobj";

/// Interpolation functions used in place of the C table code (options as Integers, the
/// positions in `Modelica.Blocks.Types`: smoothness 1 = LinearSegments, 2 = Akima
/// (ContinuousDerivative), 3 = ConstantSegments, 4 = Fritsch-Butland, 5 = Steffen,
/// 6 = modified Akima; extrapolation 1 = HoldLastPoint, 2 = LastTwoPoints, 3 = Periodic,
/// 4 = NoExtrapolation).
///
/// The four splines are cubic Hermite interpolants whose node slopes come from the local
/// divided differences, as the MSL's tables define them: Akima (1970) with two extrapolated
/// differences at either end, its modified form (Akima weights plus half the absolute sums),
/// Fritsch-Butland (1984) and Steffen (1990), both with one-sided end slopes and zero slope
/// at local extrema. A table of two rows interpolates linearly; LastTwoPoints extrapolates
/// along the end slope. Treating them as linear segments shifted every result computed from
/// a smooth characteristic (a battery's open-circuit voltage over its state of charge).
pub const TABLES_SOURCE: &str = r#"package MossTables "Table interpolation used in place of external table objects"
  function interpolate "Interpolate column col of table at abscissa u"
    input Real table[:, :];
    input Integer col;
    input Real u;
    input Integer smoothness;
    input Integer extrapolation;
    output Real y;
  protected
    Integer n = size(table, 1);
    Integer i = 1;
    Real x = u;
    Real span;
  algorithm
    if n == 1 then
      y := table[1, col];
      return;
    end if;
    span := table[n, 1] - table[1, 1];
    if extrapolation == 3 and span > 0 then
      x := u - span*floor((u - table[1, 1])/span);
    end if;
    if extrapolation == 4 then
      assert(x >= table[1, 1] and x <= table[n, 1], "Extrapolation of the table is not allowed");
    end if;
    if x <= table[1, 1] then
      if extrapolation == 2 then
        i := 1;
      else
        y := table[1, col];
        return;
      end if;
    elseif x >= table[n, 1] then
      if extrapolation == 2 then
        i := n - 1;
      else
        y := table[n, col];
        return;
      end if;
    else
      while i < n - 1 and x >= table[i + 1, 1] loop
        i := i + 1;
      end while;
    end if;
    if isSpline(smoothness, n) then
      if x < table[1, 1] then
        y := table[1, col] + nodeSlope(table, col, 1, smoothness)*(x - table[1, 1]);
      elseif x > table[n, 1] then
        y := table[n, col] + nodeSlope(table, col, n, smoothness)*(x - table[n, 1]);
      else
        y := hermite(table, col, i, x - table[i, 1], smoothness, false);
      end if;
    elseif smoothness == 3 then
      y := if x >= table[i + 1, 1] then table[i + 1, col] else table[i, col];
    elseif table[i + 1, 1] - table[i, 1] <= 0 then
      y := table[i + 1, col];
    else
      y := table[i, col] + (table[i + 1, col] - table[i, col])*(x - table[i, 1])/(table[i + 1, 1] - table[i, 1]);
    end if;
    annotation(derivative(zeroDerivative=table) = interpolateDer);
  end interpolate;

  function interpolateDer "Derivative of interpolate with respect to u (the table fixed)"
    input Real table[:, :];
    input Integer col;
    input Real u;
    input Integer smoothness;
    input Integer extrapolation;
    input Real du;
    output Real dy = 0;
  protected
    Integer n = size(table, 1);
    Integer i = 1;
    Real x = u;
    Real span;
  algorithm
    if n == 1 or smoothness == 3 then
      return;
    end if;
    span := table[n, 1] - table[1, 1];
    if extrapolation == 3 and span > 0 then
      x := u - span*floor((u - table[1, 1])/span);
    end if;
    if x <= table[1, 1] then
      if extrapolation <> 2 then
        return;
      end if;
    elseif x >= table[n, 1] then
      if extrapolation <> 2 then
        return;
      end if;
      i := n - 1;
    else
      while i < n - 1 and x >= table[i + 1, 1] loop
        i := i + 1;
      end while;
    end if;
    if isSpline(smoothness, n) then
      if x < table[1, 1] then
        dy := nodeSlope(table, col, 1, smoothness)*du;
      elseif x > table[n, 1] then
        dy := nodeSlope(table, col, n, smoothness)*du;
      else
        dy := hermite(table, col, i, x - table[i, 1], smoothness, true)*du;
      end if;
    elseif table[i + 1, 1] - table[i, 1] > 0 then
      dy := (table[i + 1, col] - table[i, col])/(table[i + 1, 1] - table[i, 1])*du;
    end if;
  end interpolateDer;

  function isSpline "Whether the smoothness is one of the cubic Hermite splines (a table of two rows is linear)"
    input Integer smoothness;
    input Integer n;
    output Boolean spline = n > 2 and (smoothness == 2 or smoothness >= 4);
  end isSpline;

  function difference "Divided difference of interval k (rows k, k + 1); outside 1 .. n - 1 extrapolated linearly from the two end ones (Akima's end conditions)"
    input Real table[:, :];
    input Integer col;
    input Integer k;
    output Real d;
  protected
    Integer n = size(table, 1);
  algorithm
    if k < 1 then
      d := (2 - k)*inInterval(table, col, 1) - (1 - k)*inInterval(table, col, 2);
    elseif k > n - 1 then
      d := (k - n + 2)*inInterval(table, col, n - 1) - (k - n + 1)*inInterval(table, col, n - 2);
    else
      d := inInterval(table, col, k);
    end if;
  end difference;

  function inInterval "Divided difference of interval k (rows k, k + 1)"
    input Real table[:, :];
    input Integer col;
    input Integer k;
    output Real d = (table[k + 1, col] - table[k, col])/(table[k + 1, 1] - table[k, 1]);
  end inInterval;

  function nodeSlope "Slope of the spline at row m"
    input Real table[:, :];
    input Integer col;
    input Integer m;
    input Integer smoothness;
    output Real t;
  protected
    Integer n = size(table, 1);
    Real dm2;
    Real dm1;
    Real d0;
    Real dp1;
    Real w;
    Real a;
    Real h0;
    Real h1;
  algorithm
    if smoothness == 2 or smoothness == 6 then
      dm2 := difference(table, col, m - 2);
      dm1 := difference(table, col, m - 1);
      d0 := difference(table, col, m);
      dp1 := difference(table, col, m + 1);
      if smoothness == 2 then
        w := abs(dp1 - d0) + abs(dm1 - dm2);
        if w > 0 then
          a := abs(dm1 - dm2)/w;
          t := (1 - a)*dm1 + a*d0;
        else
          t := 0.5*dm1 + 0.5*d0;
        end if;
      else
        w := abs(dp1 - d0) + abs(dm1 - dm2);
        w := w + (0.5*abs(dp1 + d0) + 0.5*abs(dm1 + dm2));
        if w > 0 then
          a := (abs(dm1 - dm2) + 0.5*abs(dm1 + dm2))/w;
          t := (1 - a)*dm1 + a*d0;
        else
          t := 0;
        end if;
      end if;
    elseif m == 1 then
      t := difference(table, col, 1);
    elseif m == n then
      t := difference(table, col, n - 1);
    else
      dm1 := difference(table, col, m - 1);
      d0 := difference(table, col, m);
      if dm1 == 0 or d0 == 0 or (dm1 < 0 and d0 > 0) or (dm1 > 0 and d0 < 0) then
        t := 0;
      else
        h0 := table[m, 1] - table[m - 1, 1];
        h1 := table[m + 1, 1] - table[m, 1];
        if smoothness == 4 then
          t := 3*(h0 + h1)/((h0 + 2*h1)/dm1 + (h1 + 2*h0)/d0);
        else
          t := (dm1*h1 + d0*h0)/(h0 + h1);
          if 0.5*abs(t) > abs(dm1) or 0.5*abs(t) > abs(d0) then
            t := (if dm1 > 0 then 2 else -2)*min(abs(dm1), abs(d0));
          end if;
        end if;
      end if;
    end if;
  end nodeSlope;

  function hermite "The spline on interval i at v = u - table[i, 1], or its slope there"
    input Real table[:, :];
    input Integer col;
    input Integer i;
    input Real v;
    input Integer smoothness;
    input Boolean slope;
    output Real y;
  protected
    Real dx = table[i + 1, 1] - table[i, 1];
    Real d = (table[i + 1, col] - table[i, col])/dx;
    Real t0 = nodeSlope(table, col, i, smoothness);
    Real t1 = nodeSlope(table, col, i + 1, smoothness);
    Real c1 = (3*d - 2*t0 - t1)/dx;
    Real c0 = (t0 + t1 - 2*d)/(dx*dx);
  algorithm
    if slope then
      y := (3*c0*v + 2*c1)*v + t0;
    else
      y := table[i, col] + ((c0*v + c1)*v + t0)*v;
    end if;
  end hermite;

  function nextEvent "Next abscissa of the table after t (a large value if none)"
    input Real table[:, :];
    input Real t;
    input Real shiftTime;
    output Real next = 1e60;
  protected
    Integer n = size(table, 1);
  algorithm
    for i in 1:n loop
      if table[i, 1] + shiftTime > t then
        next := table[i, 1] + shiftTime;
        break;
      end if;
    end for;
  end nextEvent;
end MossTables;
"#;

/// Time tables keep linear segments for the spline options: their abscissa may repeat (a
/// jump), where the C code splits the table into separately splined pieces, which the
/// interpolation functions above do not do.
fn time_table_smoothness(smoothness: Expr) -> Expr {
    match smoothness {
        Expr::Integer(3) => Expr::Integer(3),
        Expr::Integer(_) => Expr::Integer(1),
        other => other,
    }
}

/// Does class `id` extend the predefined `ExternalObject`?
pub fn is_external_object(f: &Flattener, id: ClassId) -> bool {
    let entry = f.lib().get(f.lk.follow_short_class(id));
    let Some(c) = entry.def.specifier.composition() else {
        return false;
    };
    if !matches!(entry.def.specifier, ClassSpecifier::Long { .. }) {
        return false;
    }
    let found = c.elements().any(|(_, e)| {
        matches!(e, Element::Extends(x) if x.base.parts.len() == 1 && x.base.parts[0].as_str() == "ExternalObject")
    });
    found
}

fn field<'v>(obj: &'v [(Arc<str>, Val)], name: &str) -> Option<&'v Val> {
    obj.iter().find(|(n, _)| &**n == name).map(|(_, v)| v)
}

fn enum_index(v: Option<&Val>, default: i64) -> Expr {
    match v.and_then(Val::scalar) {
        Some(Expr::Enum { index, .. }) => Expr::Integer(*index as i64),
        Some(e) => Expr::Call {
            func: "Integer".into(),
            args: vec![e.clone()],
        },
        None => Expr::Integer(default),
    }
}

impl<'a> Flattener<'a> {
    /// Lower a call of an MSL table function whose first argument is an external object.
    pub fn lower_table_call(&self, func: &str, args: &[Val], span: Span) -> Res<Val> {
        let Some(Val::R(obj)) = args.first() else {
            return err(span, "internal error: expected an external object");
        };
        let short = func.rsplit('.').next().unwrap_or(func);
        let table = field(obj, "table").cloned().unwrap_or(Val::A(Vec::new()));
        let column = |icol: &Val| -> Res<Expr> {
            let cols = field(obj, "columns").map(Val::scalars).unwrap_or_default();
            match icol.scalar().and_then(fold::as_i64) {
                Some(k) if k >= 1 && (k as usize) <= cols.len() => Ok(cols[k as usize - 1].clone()),
                _ => err(
                    span,
                    format!("`{func}`: the column index must be known at translation time"),
                ),
            }
        };
        let smoothness = enum_index(field(obj, "smoothness"), 1);
        let extrapolation = enum_index(field(obj, "extrapolation"), 2);
        let rows = match &table {
            Val::A(r) => r.len(),
            _ => 0,
        };
        let cell = |r: usize, c: usize| -> Val {
            match &table {
                Val::A(rs) => match rs.get(r) {
                    Some(Val::A(cs)) => cs.get(c).cloned().unwrap_or(Val::S(Expr::Real(0.0))),
                    _ => Val::S(Expr::Real(0.0)),
                },
                _ => Val::S(Expr::Real(0.0)),
            }
        };
        let call = |name: &str, a: Vec<Expr>| -> Res<Val> {
            let id = self
                .lib()
                .lookup_qualified(&["MossTables", name])
                .ok_or_else(|| {
                    Box::new(moss_syntax::Diagnostic::error(
                        span,
                        "internal table functions are missing",
                    ))
                })?;
            let full = self.lk.name_of(id);
            self.functions.borrow_mut().insert(full.clone(), id);
            Ok(Val::S(Expr::Call {
                func: full,
                args: a,
            }))
        };
        match short {
            "getTable1DValue" | "getTable1DValueNoDer" | "getTable1DValueNoDer2"
                if args.len() == 3 =>
            {
                let col = column(&args[1])?;
                call(
                    "interpolate",
                    vec![
                        table.to_expr(),
                        col,
                        args[2].to_expr(),
                        smoothness,
                        extrapolation,
                    ],
                )
            }
            "getTimeTableValue" | "getTimeTableValueNoDer" | "getTimeTableValueNoDer2"
                if args.len() >= 3 =>
            {
                let col = column(&args[1])?;
                let shift = field(obj, "shiftTime")
                    .map(Val::to_expr)
                    .unwrap_or(Expr::Real(0.0));
                let t = fold::binary(crate::flat::BinaryOp::Sub, args[2].to_expr(), shift);
                call(
                    "interpolate",
                    vec![
                        table.to_expr(),
                        col,
                        t,
                        time_table_smoothness(smoothness),
                        extrapolation,
                    ],
                )
            }
            "getNextTimeEvent" if args.len() == 2 => {
                let shift = field(obj, "shiftTime")
                    .map(Val::to_expr)
                    .unwrap_or(Expr::Real(0.0));
                call("nextEvent", vec![table.to_expr(), args[1].to_expr(), shift])
            }
            "getTable1DAbscissaUmin" | "getTimeTableTmin" => Ok(cell(0, 0)),
            "getTable1DAbscissaUmax" | "getTimeTableTmax" => Ok(cell(rows.saturating_sub(1), 0)),
            _ => err(
                span,
                format!("`{func}` uses an external object, which moss cannot execute"),
            ),
        }
    }
}
