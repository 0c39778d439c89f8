//! Walking the instance tree: scalar variables with their attributes, bindings as
//! equations, equation and algorithm sections (for-expansion, parameter `if` selection,
//! `when`), and collecting `connect` equations for [`crate::connect`].
//!
//! The walk itself (instances, components, component arrays flattened as copies, the
//! sections of each class) is here; what it does at each kind of element lives in its own
//! file, each adding methods to [`Flattener`]:
//! - `checks`: restrictions on structured components and connector classes checked
//!   while walking (type prefixes, block connectors, balance and stream connectors);
//! - `variables`: the scalar variables of a primitive component, their attributes and
//!   bindings, and record bindings applied field by field;
//! - `equations`: equations (if, for, when, calls such as `assert` and `reinit`), and how
//!   elements of array-valued calls are put back together into one call;
//! - `connections`: `connect` sides, connector leaves and signatures, `cardinality`,
//!   expandable connectors deferred to [`crate::expandable`];
//! - `statements`: algorithm sections (statements on scalar variables, loops unrolled).

use crate::connect::Connections;
use crate::ctx::{index_tuples, Flattener};
use crate::expand::{qualified, Cx, Val};
use crate::flat::{self, Equation, Origin, Variable};
use crate::inst::*;
use moss_syntax::ast::{self, ClassKind};
use moss_syntax::Span;
use std::rc::Rc;
use std::sync::Arc;

mod checks;
mod connections;
mod equations;
mod statements;
mod variables;

pub use equations::{is_index_call, whole_call};
pub(crate) use variables::{annotated_evaluate, names_array};

/// Everything collected while walking the instance tree.
#[derive(Default)]
pub struct Collected {
    pub variables: Vec<Variable>,
    pub equations: Vec<Equation>,
    pub initial_equations: Vec<Equation>,
    pub algorithms: Vec<flat::Algorithm>,
    pub initial_algorithms: Vec<flat::Algorithm>,
    pub connections: Connections,
    /// All flow variables (each is the inside element of a one-member set unless connected).
    pub inside_flows: Vec<String>,
    /// Variables declared in expandable connectors: name → (connector path, element name).
    pub bus_vars: Vec<(String, (String, String))>,
    /// See [`FlatModel::inner_outer`].
    pub inner_outer: Vec<(String, String)>,
}

pub fn origin(span: Span, node: &NodeRef) -> Origin {
    Origin {
        span,
        instance: Arc::from(node.path.as_str()),
    }
}

impl<'a> Flattener<'a> {
    /// Flatten an instance and everything below it.
    pub fn walk(&self, node: &NodeRef, out: &mut Collected) -> Res<()> {
        let elems = self.elems(node);
        for comp in &elems.comps {
            if comp.prefixes.outer && !comp.prefixes.inner {
                // Creates the default inner (with a warning) if there is none.
                self.inner_of(node, comp)?;
                continue;
            }
            self.walk_comp(node, comp, out)?;
        }
        self.walk_sections(node, &elems, out)?;
        if node.parent.is_none() {
            // Default inner declarations added while walking (spec 5.4).
            let mut done = 0;
            loop {
                let pending: Vec<Rc<Comp>> = self
                    .implicit_inners
                    .borrow()
                    .iter()
                    .skip(done)
                    .map(|(_, c)| c.clone())
                    .collect();
                if pending.is_empty() {
                    break;
                }
                done += pending.len();
                for c in pending {
                    self.walk_comp(node, &c, out)?;
                }
            }
        }
        Ok(())
    }

    /// Flatten one component of an instance (variables, or the sub-instance).
    fn walk_comp(&self, node: &NodeRef, comp: &Rc<Comp>, out: &mut Collected) -> Res<()> {
        if !self.comp_enabled(node, comp)? {
            return Ok(());
        }
        let ty = self.comp_type(node, comp)?;
        if self.is_expandable(node) && has_open_dims(comp, &ty) {
            // `Real x[:]` in an expandable connector: the size comes from what it is
            // connected to, so the element is created when the connection is resolved.
            return Ok(());
        }
        let dims = self.comp_dims(node, comp)?;
        match ty.base {
            Base::Class(c) => {
                let kind = self.lk.kind(c);
                if matches!(kind, ClassKind::Function { .. } | ClassKind::Package)
                    || crate::tables::is_external_object(self, c)
                {
                    return Ok(());
                }
                if self.lib().get(c).def.prefixes.partial {
                    return err(
                        comp.span,
                        format!(
                            "`{}` is declared with the partial class `{}`, which cannot be instantiated",
                            qualified(node, &comp.name),
                            self.lk.name_of(c)
                        ),
                    )
                    .map_err(|d| Box::new(d.with_help("use a non-partial class that extends it, or redeclare the component")));
                }
                self.check_structured_prefixes(node, comp, &ty, c)?;
                if kind == ClassKind::Connector
                    && !comp.protected
                    && comp.tprefixes.causality.or(ty.causality).is_none()
                    && self.lk.kind(self.lk.follow_short_class(node.class)) == ClassKind::Block
                {
                    self.check_block_connector(node, comp, dims.len())?;
                }
                if kind == ClassKind::Connector {
                    self.check_connector_balance(node, comp, c)?;
                }
                if instance_depth(node) > MAX_INSTANCE_DEPTH {
                    return err(
                        comp.span,
                        format!(
                            "instances nest more than {MAX_INSTANCE_DEPTH} levels deep at `{}` (does a class contain itself?)",
                            qualified(node, &comp.name)
                        ),
                    );
                }
                let tuples = index_tuples(&dims);
                if tuples.len() >= crate::shared_elements::MIN_SHARED_ELEMENTS
                    && crate::shared_elements::same_for_every_element(&comp.mods)
                {
                    return self.walk_shared_elements(node, comp, &tuples, out);
                }
                // the binding of a record array, expanded once for all its elements (per
                // element, expanding the whole array made the elements quadratic)
                let mut whole: Option<Val> = None;
                for idx in tuples {
                    let child = self.child_node(node, comp, &idx)?;
                    self.walk(&child, out)
                        .map_err(|d| in_instance(d, comp.decl.span, &child.path))?;
                    // A record inside a record bound as a whole gets its values from there.
                    let parent_bound = self.bound_as_whole(node)
                        && comp.tprefixes.variability != Some(ast::Variability::Constant);
                    if let (Some(b), false) = (&comp.mods.binding, parent_bound) {
                        if whole.is_none() {
                            whole = Some(self.expanded_record_binding(b)?);
                        }
                        if let Some(v) = &whole {
                            self.record_binding(node, comp, &child, b, v, &idx, out)?;
                        }
                    }
                }
            }
            _ => self.emit_vars(node, comp, &ty, &dims, out)?,
        }
        Ok(())
    }

    /// The elements of a component array whose modifier is the same for every element: the
    /// first is walked, the others are copies of it under their own paths when the walk's
    /// result allows (see [`crate::shared_elements`]), else walked one by one.
    fn walk_shared_elements(
        &self,
        node: &NodeRef,
        comp: &Rc<Comp>,
        tuples: &[Vec<usize>],
        out: &mut Collected,
    ) -> Res<()> {
        use crate::shared_elements::{append_moved, append_renamed, renamable, Renamer};
        let first = self.child_node(node, comp, &tuples[0])?;
        let traces = (
            self.array_calls.borrow().len(),
            self.fn_specs.borrow().len(),
        );
        let mut template = Collected::default();
        self.walk(&first, &mut template)
            .map_err(|d| in_instance(d, comp.decl.span, &first.path))?;
        let untouched = traces
            == (
                self.array_calls.borrow().len(),
                self.fn_specs.borrow().len(),
            );
        if !(untouched && renamable(&template, &first.path)) {
            append_moved(out, template);
            for idx in &tuples[1..] {
                let child = self.child_node(node, comp, idx)?;
                self.walk(&child, out)
                    .map_err(|d| in_instance(d, comp.decl.span, &child.path))?;
            }
            return Ok(());
        }
        append_renamed(out, &template, &Renamer::new(&first.path, &first.path));
        self.shared_arrays
            .borrow_mut()
            .insert(Rc::as_ptr(comp) as usize, comp.clone());
        let structural = self.structural_below(&first.path);
        let mut path = crate::expand::qualified(node, &comp.name);
        let base = path.len();
        for idx in &tuples[1..] {
            path.truncate(base);
            crate::ctx::push_indices(&mut path, idx);
            let r = Renamer::new(&first.path, &path);
            append_renamed(out, &template, &r);
            let mut set = self.structural.borrow_mut();
            set.extend(structural.iter().filter_map(|p| r.path(p)));
        }
        Ok(())
    }

    /// Parameters at or below the instance `path` that became structural.
    fn structural_below(&self, path: &str) -> Vec<String> {
        let set = self.structural.borrow();
        set.range::<str, _>((std::ops::Bound::Included(path), std::ops::Bound::Unbounded))
            .take_while(|p| p.starts_with(path))
            .filter(|p| p.len() == path.len() || p[path.len()..].starts_with('.'))
            .cloned()
            .collect()
    }

    /// Equations and algorithms of an instance (of its class and every base class).
    fn walk_sections(&self, node: &NodeRef, elems: &Elems, out: &mut Collected) -> Res<()> {
        for class in &elems.contributors {
            let entry = self.lib().get(*class);
            let Some(compo) = entry.def.specifier.composition() else {
                continue;
            };
            let env = Env {
                node: node.clone(),
                scope: *class,
            };
            for eq in compo.equations(false) {
                let mut v = Vec::new();
                self.equation(
                    eq,
                    &env,
                    &mut Cx::flat(),
                    &mut v,
                    Some(&mut out.connections),
                )?;
                out.equations.extend(v);
            }
            for eq in compo.equations(true) {
                let mut v = Vec::new();
                self.equation(eq, &env, &mut Cx::flat(), &mut v, None)?;
                out.initial_equations.extend(v);
            }
            for (initial, target) in [(false, 0), (true, 1)] {
                for stmts in compo.algorithms(initial) {
                    let span = stmts.first().map_or(entry.def.span, |s| s.span);
                    let mut v = Vec::new();
                    for s in stmts {
                        self.statement(s, &env, &mut Cx::flat(), &mut v)?;
                    }
                    let alg = flat::Algorithm {
                        statements: v,
                        origin: origin(span, node),
                    };
                    if target == 0 {
                        out.algorithms.push(alg);
                    } else {
                        out.initial_algorithms.push(alg);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Add the instance chain to an error raised inside a component: a secondary label at the
/// declaration that created the instance (the innermost few levels).
fn in_instance(mut d: Diag, decl: Span, path: &str) -> Diag {
    if d.secondary.len() < 3 && d.span != decl {
        d.secondary.push(moss_syntax::diag::Label {
            span: decl,
            message: format!("in instance `{path}` declared here"),
        });
    }
    d
}

/// A declaration with a `:` dimension and no binding to take its size from.
fn has_open_dims(comp: &Comp, ty: &ResolvedType) -> bool {
    let colon = comp
        .decl
        .subscripts
        .iter()
        .chain(&comp.type_subs)
        .chain(ty.dims.iter().map(|(s, _)| s))
        .any(|s| matches!(s, ast::Subscript::Colon(_)));
    colon && comp.mods.binding.is_none()
}

/// Deeper instance trees are taken as recursive class definitions.
const MAX_INSTANCE_DEPTH: usize = 64;

fn instance_depth(node: &NodeRef) -> usize {
    let mut d = 0;
    let mut cur = node.parent.clone();
    while let Some(p) = cur {
        d += 1;
        cur = p.parent.clone();
    }
    d
}
