//! Step functions with events: `floor`, `ceil`, `integer`, `div`, `mod`, `rem` of
//! continuous arguments are rewritten over discrete `$floorN` helpers, each updated by a
//! generated when-equation, so that they change only at events.

use super::Conv;
use crate::ir::{ExprId, Node, Rel};
use crate::model::{EqBody, SEq, SVar, VKind, WhenBranch, WhenItem};
use crate::program::ValueType;
use moss_frontend::flat::Origin;

impl<'a> Conv<'a> {
    /// Step functions of continuous arguments change only at events: they are rewritten in
    /// terms of `floor` helpers (`ceil(e) = -floor(-e)`, `div(x, y) = trunc(x/y)`,
    /// `mod(x, y) = x - floor(x/y)*y`, `rem(x, y) = x - div(x, y)*y`), see
    /// [`Conv::floor_helper`]. Returns `None` when the arguments are not continuous.
    pub(super) fn step_function_with_events(
        &mut self,
        func: &str,
        a: &[ExprId],
        o: &Origin,
    ) -> Option<ExprId> {
        if !a.iter().any(|&x| self.is_continuous(x)) {
            return None;
        }
        fn ar<'c>(c: &'c mut Conv<'_>) -> &'c mut crate::ir::Arena {
            &mut c.m.arena
        }
        match (func, a.len()) {
            ("floor", 1) | ("integer", 1) | ("Integer", 1) => Some(self.floor_helper(a[0], o)),
            ("ceil", 1) => {
                let q = ar(self).neg(a[0]);
                let h = self.floor_helper(q, o);
                Some(ar(self).neg(h))
            }
            ("div", 2) => Some(self.trunc_div(a[0], a[1], o)),
            ("mod", 2) => {
                let q = ar(self).div(a[0], a[1]);
                let h = self.floor_helper(q, o);
                let hy = ar(self).mul(h, a[1]);
                Some(ar(self).sub(a[0], hy))
            }
            ("rem", 2) => {
                let d = self.trunc_div(a[0], a[1], o);
                let dy = ar(self).mul(d, a[1]);
                Some(ar(self).sub(a[0], dy))
            }
            _ => None,
        }
    }

    /// `trunc(x/y)` = `if x/y >= 0 then floor(x/y) else -floor(-x/y)`.
    fn trunc_div(&mut self, x: ExprId, y: ExprId, o: &Origin) -> ExprId {
        let q = self.m.arena.div(x, y);
        let zero = self.m.arena.zero();
        let c = self.m.arena.rel(Rel::Ge, q, zero, true);
        let hp = self.floor_helper(q, o);
        let nq = self.m.arena.neg(q);
        let hn = self.floor_helper(nq, o);
        let nhn = self.m.arena.neg(hn);
        self.m.arena.if_(c, hp, nhn)
    }

    /// A discrete Integer `$floorN` holding `floor(q)`, updated only at events by
    /// `when {initial(), not initial() and q < pre(h), not initial() and q >= pre(h) + 1}
    /// then h = floor(q); end when`. During initialization `pre(h)` is still the start value,
    /// so the range conditions are held false there: otherwise one would be true already at
    /// initialization and, when `q` moves at the first event (a delayed or discrete argument
    /// settling after initialization), there would be no rising edge to update `h`.
    fn floor_helper(&mut self, q: ExprId, o: &Origin) -> ExprId {
        if let Some(&h) = self.floor_helpers.get(&q) {
            return self.m.arena.var(h);
        }
        let k = self.floor_helpers.len() + 1;
        let mut sv = SVar::new(format!("$floor{k}"), VKind::Discrete, ValueType::Integer);
        sv.hidden = true;
        sv.protected_from_alias = true;
        sv.origin = o.clone();
        sv.description = format!("floor({}) updated at events", self.m.text(q));
        let h = self.m.add_var(sv);
        self.floor_helpers.insert(q, h);
        let a = &mut self.m.arena;
        let pre_h = a.intern(Node::Pre(h));
        let one = a.one();
        let upper = a.add(pre_h, one);
        let init = a.intern(Node::Initial);
        let not_init = a.not(init);
        let below = a.rel(Rel::Lt, q, pre_h, true);
        let below = a.and(not_init, below);
        let above = a.rel(Rel::Ge, q, upper, true);
        let above = a.and(not_init, above);
        let value = a.call("floor", vec![q]);
        self.helper_eqs.push(SEq::new(
            EqBody::When(vec![WhenBranch {
                conds: vec![init, below, above],
                slots: Vec::new(),
                initial: true,
                items: vec![WhenItem::Assign {
                    var: h,
                    expr: value,
                }],
            }]),
            o.clone(),
        ));
        self.m.arena.var(h)
    }
}
