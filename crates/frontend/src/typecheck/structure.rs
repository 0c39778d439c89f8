//! Type rules that need the syntax flattening removes; called where flattening sees it.

use crate::expand::{cref_to_name, Cx, Val};
use crate::inst::{err, Env, Res};
use moss_syntax::ast::{self, ClassKind, ExprKind, FunctionArgs};
use moss_syntax::Span;

/// The range of a `for` loop is a vector (spec 11.2.2.1, 8.3.2): a matrix has no single
/// sequence of values for the iterator.
pub fn for_range_is_vector(values: &[Val], span: Span) -> Res<()> {
    if let Some(Val::A(inner)) = values.first() {
        return err(
            span,
            format!(
                "the range of a for-loop must be a vector, but this one is an array of {} vectors",
                values.len().max(inner.len().min(values.len()))
            ),
        )
        .map_err(|d| {
            Box::new(d.with_help(
                "iterate over the rows by index instead: `for i in 1:size(a, 1) loop ... a[i, :] ...`",
            ))
        });
    }
    Ok(())
}

/// A call with `n` outputs cannot fill more than `n` targets (spec 8.3.1, 11.2.1.1).
pub fn tuple_targets_fit(targets: usize, outputs: usize, function: &str, span: Span) -> Res<()> {
    if targets <= outputs {
        return Ok(());
    }
    err(
        span,
        format!("{targets} targets receive the results of `{function}`, which has only {outputs} output(s)"),
    )
    .map_err(|d| Box::new(d.with_help("remove the extra targets on the left, or use a function with more outputs")))
}

impl crate::ctx::Flattener<'_> {
    /// `(a, b, ...) = f(x)` (equation or statement): the called function has at least as
    /// many outputs as there are targets, and a function with several outputs is not
    /// applied element-wise to array arguments (spec 12.4.6). Only user functions are
    /// checked; the call is translated once more, which is cheap next to the rarity of
    /// tuple equations.
    pub(crate) fn check_tuple_call(
        &self,
        targets: usize,
        rhs: &ast::Expr,
        env: &Env,
        cx: &mut Cx,
    ) -> Res<()> {
        let ExprKind::Call { function, args } = &rhs.kind else {
            return Ok(());
        };
        let Some(id) = self.lookup_function(env, &cref_to_name(function)) else {
            return Ok(());
        };
        if !matches!(
            self.lib().get(id).def.prefixes.kind,
            ClassKind::Function { .. }
        ) {
            return Ok(());
        }
        let name = self.lk.name_of(id);
        let Ok(f) = self.translate_function(&name, id) else {
            return Ok(());
        };
        tuple_targets_fit(targets, f.outputs.len(), &name, rhs.span)?;
        // Record inputs are one flat input per field (`r.x`): then the positional
        // arguments no longer line up with the flat inputs, and nothing is checked.
        if f.outputs.len() < 2 || f.inputs.iter().any(|i| i.name.contains('.')) {
            return Ok(());
        }
        let FunctionArgs::List { positional, .. } = args else {
            return Ok(());
        };
        for (a, input) in positional.iter().zip(&f.inputs) {
            let Ok(v) = self.expand(a, env, &mut cx.clone()) else {
                continue;
            };
            if matches!(
                input.ty,
                crate::flat::ScalarType::Real
                    | crate::flat::ScalarType::Integer
                    | crate::flat::ScalarType::Boolean
            ) && v.shape().len() > input.dims.len()
            {
                return err(
                    a.span,
                    format!(
                        "`{name}` has {} outputs and cannot be applied element-wise to the array argument `{}`",
                        f.outputs.len(),
                        moss_syntax::print_expr(a)
                    ),
                )
                .map_err(|d| {
                    Box::new(d.with_help(
                        "only functions with one output are vectorized: call it in a for-loop, one element at a time",
                    ))
                });
            }
        }
        Ok(())
    }
}

/// `A ^ k` on an array is the matrix power, defined for Integer exponents only (spec
/// 10.6.7); element-wise powers are written `.^`.
pub fn array_power_exponent(a: &Val, b: &Val, span: Span) -> Res<()> {
    if matches!(a, Val::A(_)) && matches!(b, Val::S(crate::flat::Expr::Real(_))) {
        return err(
            span,
            "the exponent of an array power `A ^ k` must be an Integer",
        )
        .map_err(|d| {
            Box::new(d.with_help(
                "`^` on a square matrix is repeated matrix multiplication; for element-wise powers write `A .^ x`",
            ))
        });
    }
    Ok(())
}
