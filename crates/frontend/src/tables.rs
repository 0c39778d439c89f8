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

/// Interpolation functions used in place of the C table code (options as Integers:
/// smoothness 1 = LinearSegments, 3 = ConstantSegments; extrapolation 1 = HoldLastPoint,
/// 2 = LastTwoPoints, 3 = Periodic, 4 = NoExtrapolation).
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
    if smoothness == 3 then
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
    if table[i + 1, 1] - table[i, 1] > 0 then
      dy := (table[i + 1, col] - table[i, col])/(table[i + 1, 1] - table[i, 1])*du;
    end if;
  end interpolateDer;

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
                    vec![table.to_expr(), col, t, smoothness, extrapolation],
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
