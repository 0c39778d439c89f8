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
    if n > 2 and (smoothness == 2 or smoothness >= 4) then
      y := spline(table, col, i, x, smoothness, false);
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
    if n > 2 and (smoothness == 2 or smoothness >= 4) then
      dy := spline(table, col, i, x, smoothness, true)*du;
    elseif table[i + 1, 1] - table[i, 1] > 0 then
      dy := (table[i + 1, col] - table[i, col])/(table[i + 1, 1] - table[i, 1])*du;
    end if;
  end interpolateDer;

  function spline "Cubic Hermite spline on interval i (rows i, i + 1) at x, or its slope; before the first row and after the last along the end slope"
    input Real table[:, :];
    input Integer col;
    input Integer i;
    input Real x;
    input Integer smoothness;
    input Boolean derivative;
    output Real y;
  protected
    Integer n = size(table, 1);
    Real d[5] "Divided differences of intervals i - 2 .. i + 2";
    Real first = (table[2, col] - table[1, col])/(table[2, 1] - table[1, 1]);
    Real second = (table[3, col] - table[2, col])/(table[3, 1] - table[2, 1]);
    Real last = (table[n, col] - table[n - 1, col])/(table[n, 1] - table[n - 1, 1]);
    Real beforeLast = (table[n - 1, col] - table[n - 2, col])/(table[n - 1, 1] - table[n - 2, 1]);
    Integer j;
    Real dx = table[i + 1, 1] - table[i, 1];
    Real t0;
    Real t1;
    Real c0;
    Real c1;
    Real v;
  algorithm
    // Akima's end conditions: differences beyond the table extrapolated linearly
    for k in 1:5 loop
      j := i - 3 + k;
      if j < 1 then
        d[k] := (2 - j)*first - (1 - j)*second;
      elseif j > n - 1 then
        d[k] := (j - n + 2)*last - (j - n + 1)*beforeLast;
      else
        d[k] := (table[j + 1, col] - table[j, col])/(table[j + 1, 1] - table[j, 1]);
      end if;
    end for;
    if smoothness == 2 or smoothness == 6 then
      t0 := akimaSlope(d[1], d[2], d[3], d[4], smoothness == 6);
      t1 := akimaSlope(d[2], d[3], d[4], d[5], smoothness == 6);
    else
      t0 := if i == 1 then d[3] else monotoneSlope(d[2], d[3], table[i, 1] - table[i - 1, 1], dx, smoothness == 5);
      t1 := if i == n - 1 then d[3] else monotoneSlope(d[3], d[4], dx, table[i + 2, 1] - table[i + 1, 1], smoothness == 5);
    end if;
    if x < table[1, 1] then
      y := if derivative then t0 else table[1, col] + t0*(x - table[1, 1]);
    elseif x > table[n, 1] then
      y := if derivative then t1 else table[n, col] + t1*(x - table[n, 1]);
    else
      c1 := (3*d[3] - 2*t0 - t1)/dx;
      c0 := (t0 + t1 - 2*d[3])/(dx*dx);
      v := x - table[i, 1];
      y := if derivative then (3*c0*v + 2*c1)*v + t0 else table[i, col] + ((c0*v + c1)*v + t0)*v;
    end if;
  end spline;

  function akimaSlope "Akima's slope at a row from the differences of the two intervals on either side (modified: plus half the absolute sums in the weights)"
    input Real dm2;
    input Real dm1;
    input Real d0;
    input Real dp1;
    input Boolean modified;
    output Real t;
  protected
    Real w;
    Real a;
  algorithm
    if modified then
      w := abs(dp1 - d0) + abs(dm1 - dm2);
      w := w + (0.5*abs(dp1 + d0) + 0.5*abs(dm1 + dm2));
      if w > 0 then
        a := (abs(dm1 - dm2) + 0.5*abs(dm1 + dm2))/w;
        t := (1 - a)*dm1 + a*d0;
      else
        t := 0;
      end if;
    else
      w := abs(dp1 - d0) + abs(dm1 - dm2);
      if w > 0 then
        a := abs(dm1 - dm2)/w;
        t := (1 - a)*dm1 + a*d0;
      else
        t := 0.5*dm1 + 0.5*d0;
      end if;
    end if;
  end akimaSlope;

  function monotoneSlope "Slope at an interior row of the Fritsch-Butland or (steffen) Steffen spline, from the differences and widths of the intervals before and after it; zero at a local extremum"
    input Real dm1;
    input Real d0;
    input Real h0;
    input Real h1;
    input Boolean steffen;
    output Real t;
  algorithm
    if dm1 == 0 or d0 == 0 or (dm1 < 0 and d0 > 0) or (dm1 > 0 and d0 < 0) then
      t := 0;
    elseif steffen then
      t := (dm1*h1 + d0*h0)/(h0 + h1);
      if 0.5*abs(t) > abs(dm1) or 0.5*abs(t) > abs(d0) then
        t := (if dm1 > 0 then 2 else -2)*min(abs(dm1), abs(d0));
      end if;
    else
      t := 3*(h0 + h1)/((h0 + 2*h1)/dm1 + (h1 + 2*h0)/d0);
    end if;
  end monotoneSlope;

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

/// Is `id` one of the MSL's table object classes (`Modelica.Blocks.Types.External...`)?
pub fn is_msl_table_class(f: &Flattener, id: ClassId) -> bool {
    f.lk.name_of(id)
        .starts_with("Modelica.Blocks.Types.External")
}

/// The constructor arguments of a table object that say which file to read: evaluated when
/// the object is built, since the table is read at translation time.
pub const FILE_ARGUMENTS: [&str; 4] = ["tableName", "fileName", "delimiter", "nHeaderLines"];

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
    /// The table of a table object: its `table` argument, or (`tableOnFile = true`, which
    /// passes a file name other than "NoName") the matrix `tableName` read from the file
    /// now: a MAT file (v4, "6", "7"), a text file in the MSL's table format, or (`.csv`)
    /// a CSV file with the object's `delimiter` and `nHeaderLines`.
    fn table_of(&self, obj: &[(Arc<str>, Val)], span: Span) -> Res<Val> {
        let text = |name: &str| match field(obj, name).and_then(Val::scalar) {
            Some(Expr::String(s)) => Some(s.clone()),
            _ => None,
        };
        let file = text("fileName").filter(|f| f != "NoName" && !f.trim().is_empty());
        let Some(file) = file else {
            return Ok(field(obj, "table").cloned().unwrap_or(Val::A(Vec::new())));
        };
        let read = if file.to_ascii_lowercase().ends_with(".csv") {
            let delimiter = text("delimiter").unwrap_or_else(|| ",".to_string());
            let header_lines = field(obj, "nHeaderLines")
                .and_then(Val::scalar)
                .and_then(fold::as_i64)
                .unwrap_or(0)
                .max(0) as usize;
            moss_matio::read_csv(&file, &delimiter, header_lines)
        } else {
            let name = text("tableName").unwrap_or_default();
            if name == "NoName" || name.trim().is_empty() {
                return err(
                    span,
                    format!("the table is read from `{file}`, but no `tableName` is given"),
                );
            }
            moss_matio::read_matrix(&file, &name)
        };
        let m = read.or_else(|e| err(span, e))?;
        Ok(Val::A(
            (0..m.rows)
                .map(|r| {
                    Val::A(
                        (0..m.cols)
                            .map(|c| Val::S(Expr::Real(m.at(r, c))))
                            .collect(),
                    )
                })
                .collect(),
        ))
    }

    /// Lower a call of an MSL table function whose first argument is an external object.
    pub fn lower_table_call(&self, func: &str, args: &[Val], span: Span) -> Res<Val> {
        let Some(Val::R(obj)) = args.first() else {
            return err(span, "internal error: expected an external object");
        };
        let short = func.rsplit('.').next().unwrap_or(func);
        let table = self.table_of(obj, span)?;
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
