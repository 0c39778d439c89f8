//! State machines (spec chapter 17) in the frontend: the arguments of `transition`,
//! `initialState` and `activeState` that name block instances become the instance's full
//! path as a String literal, so the flat model keeps which instance is meant. The state
//! machine semantics (activation, reset, merging of `outer output` definitions) are built
//! from those paths by `moss_symbolic::clocks::state_machines`.

use crate::ctx::{format_indices, Flattener};
use crate::expand::{cref_text, qualified, Cx, Val};
use crate::flat::Expr;
use crate::inst::{err, Env, Res};
use moss_syntax::ast::{self, ExprKind};

/// The state-argument positions of the state machine operators.
pub fn is_state_argument(fname: &str, k: usize) -> bool {
    match fname {
        "transition" => k < 2,
        "initialState" | "activeState" => k == 0,
        _ => false,
    }
}

impl Flattener<'_> {
    /// The full instance path of the block instance `a` names.
    pub fn state_reference(&self, a: &ast::Expr, fname: &str, env: &Env, cx: &mut Cx) -> Res<Val> {
        let ExprKind::Ref(c) = &a.kind else {
            return err(
                a.span,
                format!("the state argument of `{fname}` must name a block instance"),
            );
        };
        // walk the reference like a connect side, but to any block instance
        let mut node = env.node.clone();
        let mut path = String::new();
        for (k, part) in c.parts.iter().enumerate() {
            let Some(mut comp) = self.find_comp(&node, part.name.as_str()) else {
                return err(
                    part.name.span,
                    format!("unknown instance `{}`", cref_text(c)),
                );
            };
            if comp.prefixes.outer && (!comp.prefixes.inner || k == 0) {
                let (n, ic) = self.inner_of(&node, &comp)?;
                node = n;
                comp = ic;
            }
            let dims = self.comp_dims(&node, &comp)?;
            let sel = self.connect_indices(&part.subscripts, &dims, env, cx)?;
            let [idx] = sel.as_slice() else {
                return err(
                    a.span,
                    format!(
                        "`{}` must name one block instance to be a state of `{fname}`",
                        cref_text(c)
                    ),
                );
            };
            path = qualified(&node, &comp.name);
            if !idx.is_empty() {
                path.push_str(&format_indices(idx));
            }
            node = self.child_node(&node, &comp, idx)?;
        }
        Ok(Val::S(Expr::String(path)))
    }
}
