//! Elements of a component array flattened once (issue #16).
//!
//! Every element of `Resistor R[10000](each R = 1)` is the same instance: the same class, the
//! same modifiers, so the same variables, attributes and equations — only the instance path
//! differs (`R[1]`, `R[2]`, ...). Walking each element anew repeats the lookups, modifier
//! merges and expression elaboration 10^4 times. When the array's modifier does not depend on
//! the element (no binding without `each`), the first element is walked into a *template*
//! and every other element is a copy of it with its path renamed.
//!
//! The copy must equal what a walk of the element would give, so a template is used only when
//! everything it produced can be renamed: variables, equations, algorithms, connection sets
//! and their `cardinality` counts, flows, `inner`/`outer` pairs, instance names in string
//! literals (the `cardinality` placeholder) and parameters that became
//! structural. When the walk left traces elsewhere that are keyed by printed expressions or
//! would need more than a rename (expandable connectors, the overconstrained connection graph,
//! array-call dimensions, function specializations), the remaining elements are walked as
//! before.

use crate::flat::{Algorithm, Equation, Expr, Origin, Statement, Variable};
use crate::flatten::Collected;
use crate::inst::Mod;
use crate::walk;
use std::sync::Arc;

/// Below this many elements the template's bookkeeping is not worth it.
pub const MIN_SHARED_ELEMENTS: usize = 3;

/// Whether every element of a component array receives the same modifier: no binding in it
/// is subscripted per element (bindings written with `each` apply to all elements alike).
pub fn same_for_every_element(m: &Mod) -> bool {
    m.each || (m.binding.is_none() && m.args.iter().all(|(_, a)| same_for_every_element(a)))
}

/// Renames the instance path of one array element into another's.
pub struct Renamer<'a> {
    from: &'a str,
    to: &'a str,
}

impl<'a> Renamer<'a> {
    pub fn new(from: &'a str, to: &'a str) -> Renamer<'a> {
        Renamer { from, to }
    }

    /// `name` with the element path `from` at its start replaced by `to`; `None` when the
    /// name is not inside the element (`R[1]` does not start `R[10].v`).
    pub fn path(&self, name: &str) -> Option<String> {
        let rest = name.strip_prefix(self.from)?;
        if !(rest.is_empty() || rest.starts_with('.')) {
            return None;
        }
        let mut s = String::with_capacity(self.to.len() + rest.len());
        s.push_str(self.to);
        s.push_str(rest);
        Some(s)
    }

    fn name(&self, name: &mut String) {
        if let Some(n) = self.path(name) {
            *name = n;
        }
    }

    /// A string literal that is the name of an instance inside the element (the argument of
    /// the `cardinality` placeholder); other literals mentioning the path are not copied
    /// (see [`renamable`]).
    fn literal(&self, s: &mut String) {
        self.name(s)
    }

    fn origin(&self, o: &mut Origin) {
        if let Some(n) = self.path(&o.instance) {
            o.instance = Arc::from(n);
        }
    }

    pub fn expr(&self, e: &mut Expr) {
        match e {
            Expr::Var { name, .. } => self.name(name),
            Expr::String(s) => self.literal(s),
            _ => {}
        }
        walk::exprs_mut(e, &mut |x| self.expr(x));
    }

    fn variable(&self, v: &mut Variable) {
        self.name(&mut v.name);
        self.origin(&mut v.origin);
        walk::variable_exprs_mut(v, &mut |e| self.expr(e));
    }

    fn equation(&self, eq: &mut Equation) {
        walk::equation_exprs_mut(eq, &mut |e| self.expr(e));
        self.equation_names(eq);
    }

    /// Origins and variable names that are not expressions, through nested branches.
    fn equation_names(&self, eq: &mut Equation) {
        match eq {
            Equation::If {
                branches,
                else_,
                origin,
            } => {
                self.origin(origin);
                for eq in branches.iter_mut().flat_map(|(_, b)| b).chain(else_) {
                    self.equation_names(eq);
                }
            }
            Equation::When { branches, origin } => {
                self.origin(origin);
                for eq in branches.iter_mut().flat_map(|(_, b)| b) {
                    self.equation_names(eq);
                }
            }
            Equation::Reinit { var, origin, .. } => {
                self.name(var);
                self.origin(origin);
            }
            Equation::Equal { origin, .. }
            | Equation::Assert { origin, .. }
            | Equation::Terminate { origin, .. }
            | Equation::Call { origin, .. } => self.origin(origin),
        }
    }

    fn algorithm(&self, a: &mut Algorithm) {
        self.origin(&mut a.origin);
        for s in &mut a.statements {
            self.statement(s);
        }
    }

    fn statement(&self, s: &mut Statement) {
        walk::statement_exprs_mut(s, &mut |e| self.expr(e));
        self.statement_names(s);
    }

    fn statement_names(&self, s: &mut Statement) {
        match s {
            Statement::If {
                branches,
                else_,
                origin,
            } => {
                self.origin(origin);
                for s in branches.iter_mut().flat_map(|(_, b)| b).chain(else_) {
                    self.statement_names(s);
                }
            }
            Statement::When { branches, origin } => {
                self.origin(origin);
                for s in branches.iter_mut().flat_map(|(_, b)| b) {
                    self.statement_names(s);
                }
            }
            Statement::For { body, origin, .. } | Statement::While { body, origin, .. } => {
                self.origin(origin);
                for s in body {
                    self.statement_names(s);
                }
            }
            Statement::Reinit { var, origin, .. } => {
                self.name(var);
                self.origin(origin);
            }
            Statement::Assign { origin, .. }
            | Statement::TupleAssign { origin, .. }
            | Statement::Assert { origin, .. }
            | Statement::Terminate { origin, .. }
            | Statement::Call { origin, .. }
            | Statement::Return { origin }
            | Statement::Break { origin } => self.origin(origin),
        }
    }
}

/// Whether a walk's result can be copied by renaming alone (see the module comment). A string
/// literal that has the element's path inside other text (`"bad R in " + getInstanceName()`
/// folded into one literal) cannot be renamed safely.
pub fn renamable(c: &Collected, path: &str) -> bool {
    c.bus_vars.is_empty() && c.connections.renamable() && !path_inside_text(c, path)
}

fn path_inside_text(c: &Collected, path: &str) -> bool {
    let r = Renamer::new(path, path);
    let mut found = false;
    let mut check = |e: &Expr| {
        walk::visit(e, &mut |x| {
            if let Expr::String(s) = x {
                found |= s.contains(path) && r.path(s).is_none();
            }
        })
    };
    for v in &c.variables {
        walk::variable_exprs(v, &mut check);
    }
    for eq in c.equations.iter().chain(&c.initial_equations) {
        walk::equation_exprs(eq, &mut check);
    }
    for a in c.algorithms.iter().chain(&c.initial_algorithms) {
        for s in &a.statements {
            walk::statement_exprs(s, &mut check);
        }
    }
    found
}

/// Append a copy of the template `t` to `out`, renamed by `r`.
pub fn append_renamed(out: &mut Collected, t: &Collected, r: &Renamer) {
    out.variables.extend(t.variables.iter().map(|v| {
        let mut v = v.clone();
        r.variable(&mut v);
        v
    }));
    for (dst, src) in [
        (&mut out.equations, &t.equations),
        (&mut out.initial_equations, &t.initial_equations),
    ] {
        dst.extend(src.iter().map(|eq| {
            let mut eq = eq.clone();
            r.equation(&mut eq);
            eq
        }));
    }
    for (dst, src) in [
        (&mut out.algorithms, &t.algorithms),
        (&mut out.initial_algorithms, &t.initial_algorithms),
    ] {
        dst.extend(src.iter().map(|a| {
            let mut a = a.clone();
            r.algorithm(&mut a);
            a
        }));
    }
    let rename = |s: &String| r.path(s).unwrap_or_else(|| s.clone());
    out.inside_flows.extend(t.inside_flows.iter().map(rename));
    out.inner_outer
        .extend(t.inner_outer.iter().map(|(a, b)| (rename(a), rename(b))));
    out.connections
        .absorb_renamed(&t.connections, &|s: &str| r.path(s), &|o: &Origin| {
            let mut o = o.clone();
            r.origin(&mut o);
            o
        });
}

/// Move everything `t` collected into `out` (the first element's walk, when the others cannot
/// be copied from it).
pub fn append_moved(out: &mut Collected, t: Collected) {
    out.variables.extend(t.variables);
    out.equations.extend(t.equations);
    out.initial_equations.extend(t.initial_equations);
    out.algorithms.extend(t.algorithms);
    out.initial_algorithms.extend(t.initial_algorithms);
    out.inside_flows.extend(t.inside_flows);
    out.bus_vars.extend(t.bus_vars);
    out.inner_outer.extend(t.inner_outer);
    out.connections.absorb(t.connections);
}

impl crate::ctx::Flattener<'_> {
    /// The instance that answers questions about element `idx` of the array `comp` of `node`
    /// (its connectors, their types and variables): the first element when the array's
    /// elements were flattened as renamed copies of it — they are the same instance but for
    /// the path, and creating an instance per element was most of the cost of the `connect`s
    /// of a large array — else the element itself. The flag says whether the instance stands
    /// in for another element, whose path the caller then keeps itself.
    pub(crate) fn lookup_element(
        &self,
        node: &crate::inst::NodeRef,
        comp: &std::rc::Rc<crate::inst::Comp>,
        idx: &[usize],
    ) -> crate::inst::Res<(crate::inst::NodeRef, bool)> {
        let shared = self
            .shared_arrays
            .borrow()
            .contains_key(&(std::rc::Rc::as_ptr(comp) as usize));
        if shared && idx.iter().any(|&i| i != 1) {
            let first = vec![1; idx.len()];
            return Ok((self.child_node(node, comp, &first)?, true));
        }
        Ok((self.child_node(node, comp, idx)?, false))
    }
}
