//! Walking the instance tree: scalar variables with their attributes, bindings as
//! equations, equation and algorithm sections (for-expansion, parameter `if` selection,
//! `when`), and collecting `connect` equations for [`crate::connect`].

use crate::connect::{ConnElem, Connections};
use crate::ctx::{format_indices, index_tuples, Flattener};
use crate::expand::{cref_text, qualified, qualified_at, Cx, Val};
use crate::flat::{
    self, AssertLevel, Attributes, Causality, Equation, Expr, Origin, ScalarType, StateSelect,
    Statement, Variability, Variable,
};
use crate::fold;
use crate::inst::*;
use moss_syntax::ast::{self, ClassKind, EquationKind, ExprKind, FunctionArgs, StatementKind};
use moss_syntax::Span;
use std::rc::Rc;
use std::sync::Arc;

/// One scalar variable of a connector: its suffix after the connector name and its kind.
type Leaf = (String, Option<ast::ConnectorPrefix>);

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

    /// Type prefixes on a structured component: not on models/blocks, and not repeating a
    /// prefix that its elements already have (spec 4.5).
    fn check_structured_prefixes(
        &self,
        node: &NodeRef,
        comp: &Rc<Comp>,
        ty: &ResolvedType,
        class: crate::loader::ClassId,
    ) -> Res<()> {
        let p = comp.tprefixes;
        let causality = p.causality.or(ty.causality);
        let kind = self.lk.kind(self.lk.follow_short_class(class));
        let any = p.variability.is_some() || causality.is_some() || p.connector.is_some();
        if any && matches!(kind, ClassKind::Model | ClassKind::Block) {
            return err(
                comp.span,
                format!(
                    "`{}`: type prefixes (parameter, input, flow, ...) are not allowed on a component of the {} `{}`",
                    qualified(node, &comp.name),
                    if kind == ClassKind::Model { "model" } else { "block" },
                    self.lk.name_of(class)
                ),
            );
        }
        let fixed = matches!(
            p.variability,
            Some(ast::Variability::Parameter | ast::Variability::Constant)
        );
        if fixed && matches!(kind, ClassKind::Connector | ClassKind::ExpandableConnector) {
            return err(
                comp.span,
                format!(
                    "`{}`: a connector component cannot be declared parameter or constant",
                    qualified(node, &comp.name)
                ),
            )
            .map_err(|d| {
                Box::new(d.with_help(
                    "remove the prefix; parameters and constants belong inside the connector class",
                ))
            });
        }
        if causality.is_none() && p.connector.is_none() {
            return Ok(());
        }
        let child = self.child_node(node, comp, &vec![1; self.comp_dims(node, comp)?.len()])?;
        for c in &self.elems(&child).comps {
            let conflict = (causality.is_some() && c.tprefixes.causality.is_some())
                || (p.connector.is_some() && c.tprefixes.connector.is_some());
            if conflict {
                return err(
                    comp.span,
                    format!(
                        "`{}`: conflicting prefixes, its element `{}` already has an input/output or flow/stream prefix",
                        qualified(node, &comp.name),
                        c.name
                    ),
                );
            }
        }
        Ok(())
    }

    /// A connector has as many flow variables as potential variables (spec 9.3.1);
    /// checked once per connector class ([`crate::connect_rules`]).
    fn check_connector_balance(
        &self,
        node: &NodeRef,
        comp: &Rc<Comp>,
        class: crate::loader::ClassId,
    ) -> Res<()> {
        if !self.balance_checked.borrow_mut().insert(class) {
            return Ok(());
        }
        let dims = self.comp_dims(node, comp)?;
        let child = self.child_node(node, comp, &vec![1; dims.len()])?;
        self.check_stream_connector(&child, class)?;
        self.check_balance_of(&child, comp, class)
    }

    /// Every variable of a public connector of a block is an input or an output (spec 4.7).
    fn check_block_connector(&self, node: &NodeRef, comp: &Rc<Comp>, rank: usize) -> Res<()> {
        let child = self.child_node(node, comp, &vec![1; rank])?;
        let Some(bad) = self.first_acausal(&child)? else {
            return Ok(());
        };
        err(
            comp.span,
            format!(
                "`{}` is a connector of the block `{}`, but its variable `{bad}` is neither input nor output",
                qualified(node, &comp.name),
                self.lk.name_of(node.class)
            ),
        )
        .map_err(|d| {
            Box::new(d.with_help(
                "a block may only have causal connectors; declare the component in a model instead",
            ))
        })
    }

    /// The first variable of a connector instance without input/output prefix (parameters
    /// and constants excepted).
    fn first_acausal(&self, node: &NodeRef) -> Res<Option<String>> {
        for c in &self.elems(node).comps {
            if matches!(
                c.tprefixes.variability,
                Some(ast::Variability::Parameter | ast::Variability::Constant)
            ) || !self.comp_enabled(node, c)?
            {
                continue;
            }
            let ty = self.comp_type(node, c)?;
            if c.tprefixes.causality.or(ty.causality).is_some() {
                continue;
            }
            match ty.base {
                Base::Class(_) => {
                    let rank = self.comp_dims(node, c)?.len();
                    let child = self.child_node(node, c, &vec![1; rank])?;
                    if let Some(inner) = self.first_acausal(&child)? {
                        return Ok(Some(format!("{}.{inner}", c.name)));
                    }
                }
                _ => return Ok(Some(c.name.to_string())),
            }
        }
        Ok(None)
    }

    /// A connector with stream variables has exactly one scalar flow variable, the one
    /// that gives the direction of the stream (spec 15.1).
    fn check_stream_connector(&self, node: &NodeRef, class: crate::loader::ClassId) -> Res<()> {
        let (mut flows, mut streams) = (0usize, 0usize);
        for c in &self.elems(node).comps {
            let n: usize = self.comp_dims(node, c)?.iter().product();
            match c.tprefixes.connector {
                Some(ast::ConnectorPrefix::Flow) => flows += n,
                Some(ast::ConnectorPrefix::Stream) => streams += n,
                None => {}
            }
        }
        if streams > 0 && flows != 1 {
            let entry = self.lib().get(class);
            return err(
                entry.def.name.span,
                format!(
                    "stream connector `{}` has {flows} scalar flow variables, but it must have exactly one",
                    entry.full_name
                ),
            )
            .map_err(|d| {
                Box::new(d.with_help(
                    "declare one scalar `flow` variable (the mass flow rate that carries the streams)",
                ))
            });
        }
        Ok(())
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

    /// `R r = expr` for a structured component: field-wise bindings.
    /// The value of a record component's binding. An expression whose branches are
    /// records of different sizes (`if i == k then used else good` with array fields of
    /// different lengths) is computed now.
    fn expanded_record_binding(&self, b: &BindingMod) -> Res<Val> {
        match self.expand(&b.expr, &b.env, &mut Cx::flat()) {
            Ok(v) => Ok(v),
            Err(e) => self
                .eval_expr(&b.expr, &b.env, &mut Cx::eval())
                .map_err(|_| e),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn record_binding(
        &self,
        node: &NodeRef,
        comp: &Rc<Comp>,
        child: &NodeRef,
        b: &BindingMod,
        v: &Val,
        idx: &[usize],
        out: &mut Collected,
    ) -> Res<()> {
        let mut path: Vec<usize> = b.index.clone();
        path.extend(idx.iter().map(|i| i - 1));
        let mut v = v.index_path(&path);
        let env = Env {
            node: node.clone(),
            scope: comp.scope,
        };
        let lhs = self.resolve_in_node(
            child.parent.as_ref().unwrap_or(node),
            &[ast::RefPart {
                name: comp.decl.name.clone(),
                subscripts: idx
                    .iter()
                    .map(|i| {
                        ast::Subscript::Expr(ast::Expr::new(
                            ast::ExprKind::Integer(*i as i64),
                            Span::DUMMY,
                        ))
                    })
                    .collect(),
            }],
            &env,
            &mut Cx::flat(),
            false,
            b.expr.span,
        )?;
        if let Some((targets, call)) = record_fields_of_one_call(&lhs, &v) {
            let variables = targets.iter().flatten().all(|t| {
                let mut names = Vec::new();
                crate::walk::visit(t, &mut |x| {
                    if let Expr::Var { name, .. } = x {
                        names.push(name.clone());
                    }
                });
                names.iter().all(|name| {
                    out.variables
                        .iter()
                        .rev()
                        .find(|v| &v.name == name)
                        .is_none_or(|v| v.variability > Variability::Parameter)
                })
            });
            if variables {
                out.equations.push(Equation::Equal {
                    lhs: Expr::Tuple(targets),
                    rhs: call,
                    origin: origin(b.expr.span, node),
                });
                return Ok(());
            }
            // Parameter fields cannot be bound to array outputs of a call one element at a
            // time: the record is computed now, as parameter arrays bound to calls are.
            v = self.record_value_now(b, &path)?;
        }
        let (mut ls, mut rs) = record_field_pairs(&lhs, &v);
        if ls.len() != rs.len() && self.all_parameters(&ls, out) {
            // `R = if c then f(x) else g(y)` with record results: a parameter record is
            // computed now.
            v = self.record_value_now(b, &path)?;
            (ls, rs) = record_field_pairs(&lhs, &v);
        }
        if ls.len() != rs.len() {
            return err(
                b.expr.span,
                "the binding does not match the record's fields",
            );
        }
        let all_variables = ls.iter().all(|l| match l {
            Expr::Var { name, .. } => out
                .variables
                .iter()
                .rev()
                .find(|v| &v.name == name)
                .is_none_or(|v| v.variability > Variability::Parameter),
            _ => false,
        });
        if all_variables {
            if let Some(call) = whole_call(&rs) {
                out.equations.push(Equation::Equal {
                    lhs: Expr::Tuple(ls.into_iter().map(Some).collect()),
                    rhs: call,
                    origin: origin(b.expr.span, node),
                });
                return Ok(());
            }
        }
        for (l, r) in ls.into_iter().zip(rs) {
            let Expr::Var { name, .. } = &l else { continue };
            match out.variables.iter_mut().rev().find(|v| &v.name == name) {
                Some(var) if var.variability <= Variability::Parameter => {
                    if var.binding.is_none() {
                        var.binding = Some(r);
                    }
                }
                _ => out.equations.push(Equation::Equal {
                    lhs: l,
                    rhs: r,
                    origin: origin(b.expr.span, node),
                }),
            }
        }
        Ok(())
    }

    /// Whether all these field variables are parameters or constants already declared.
    fn all_parameters(&self, fields: &[Expr], out: &Collected) -> bool {
        fields.iter().all(|l| match l {
            Expr::Var { name, .. } => out
                .variables
                .iter()
                .rev()
                .find(|v| &v.name == name)
                .is_some_and(|v| v.variability <= Variability::Parameter),
            _ => false,
        })
    }

    /// The value of a record binding computed at translation time (its arguments must be
    /// known then).
    fn record_value_now(&self, b: &BindingMod, path: &[usize]) -> Res<Val> {
        let v = self
            .eval_expr(&b.expr, &b.env, &mut Cx::eval())
            .map_err(|d| Box::new(d.with_note("a parameter record bound to a function call with array outputs must be computable at translation time")))?;
        Ok(v.index_path(path))
    }

    fn emit_vars(
        &self,
        node: &NodeRef,
        comp: &Rc<Comp>,
        ty: &ResolvedType,
        dims: &[usize],
        out: &mut Collected,
    ) -> Res<()> {
        let inh = self.inherited_of(node);
        let declared = crate::ctx::most_restrictive(comp.tprefixes.variability, inh.variability);
        let variability = match declared {
            Some(ast::Variability::Constant) => Variability::Constant,
            Some(ast::Variability::Parameter) => Variability::Parameter,
            Some(ast::Variability::Discrete) => Variability::Discrete,
            None if ty.base == Base::Real => Variability::Continuous,
            None => Variability::Discrete,
        };
        let causality = if node.path.is_empty() {
            match comp.tprefixes.causality.or(ty.causality) {
                Some(ast::Causality::Input) => Causality::Input,
                Some(ast::Causality::Output) => Causality::Output,
                None => Causality::Internal,
            }
        } else {
            Causality::Internal
        };
        let scalar_ty = match &ty.base {
            Base::Real => ScalarType::Real,
            Base::Integer => ScalarType::Integer,
            Base::Boolean => ScalarType::Boolean,
            Base::String => ScalarType::String,
            Base::Clock => ScalarType::Clock,
            Base::Enum(c, lits) => ScalarType::Enumeration {
                name: Arc::from(self.lk.name_of(*c).as_str()),
                literals: lits.clone(),
            },
            Base::Class(_) => ScalarType::Real,
        };
        self.check_final(&comp.mods, &ty.mods, &qualified(node, &comp.name));
        let mods = Mod::merge(&comp.mods, &ty.mods);
        if let Some((bad, m)) = mods
            .args
            .iter()
            .find(|(a, _)| !crate::restrict::attribute_allowed(&ty.base, a))
        {
            return err(
                if m.span.is_dummy() { comp.span } else { m.span },
                format!("`{}` has no attribute `{bad}`", qualified(node, &comp.name)),
            );
        }
        // A binding of the whole record (`Point b = Point(3, 4)`) replaces the default
        // bindings of its fields; it is applied by `record_binding`.
        let record_bound = self.bound_as_whole(node)
            && comp.tprefixes.variability != Some(ast::Variability::Constant)
            && comp.mods.binding.is_some();
        let mut binding = match mods.binding.as_ref().filter(|_| !record_bound) {
            Some(b) => Some((
                self.expand(&b.expr, &b.env, &mut Cx::flat())?
                    .index_path(&b.index),
                b.expr.span,
            )),
            None => None,
        };
        if let Some((v, s)) = &binding {
            binding_has_declared_shape(v, dims, &comp.name, *s)?;
        }
        // A binding by an array-valued function call: one equation for the whole array,
        // or (parameters) the value computed now.
        let mut whole_array_binding = None;
        let mut computed_at_init = None;
        if let Some((v, s)) = &binding {
            if v.scalars().iter().any(contains_index_call) {
                let b = mods.binding.as_ref().filter(|_| !record_bound);
                if variability <= Variability::Parameter {
                    let Some(b) = b else {
                        return err(*s, "internal error: lost binding");
                    };
                    match self.eval_expr(&b.expr, &b.env, &mut Cx::eval()) {
                        Ok(value) => binding = Some((value.index_path(&b.index), *s)),
                        // Not known now (its arguments are computed at initialization, or
                        // the function cannot run here): a parameter bound to the whole
                        // call is computed by initialization from one equation, like a
                        // `fixed = false` parameter.
                        Err(d) => match whole_call_of_elements(v, dims) {
                            Some(call)
                                if variability == Variability::Parameter
                                    && !d.message.starts_with("assertion failed") =>
                            {
                                computed_at_init = Some((call, *s));
                                binding = None;
                            }
                            _ => return Err(Box::new(d.with_note("a parameter bound to an array-valued function call must be computable at translation time"))),
                        },
                    }
                } else if v.scalars().iter().all(is_index_call) {
                    whole_array_binding = Some((strip_index_call(v.to_expr()), *s));
                    binding = None;
                }
            }
        }
        // (A field of a record bound as a whole gets its value from that binding.)
        if variability == Variability::Constant
            && binding.is_none()
            && node.mods.binding.is_none()
            && dims.iter().product::<usize>() > 0
        {
            return err(
                comp.decl.name.span,
                format!("constant `{}` has no value", qualified(node, &comp.name)),
            )
            .map_err(|d| Box::new(d.with_help("give it a binding: `constant Real c = ...;`")));
        }
        let mut attr_values = self.attribute_values(&mods)?;
        attr_values.start_given = comp.mods.sub("start").is_some_and(|m| m.binding.is_some());
        let connector_prefix = comp.tprefixes.connector.or(inh.connector);
        let is_flow = connector_prefix == Some(ast::ConnectorPrefix::Flow);
        let is_stream = connector_prefix == Some(ast::ConnectorPrefix::Stream);
        if (is_flow || is_stream) && ty.base != Base::Real {
            return err(
                comp.span,
                format!(
                    "`{}`: only Real variables can be {}",
                    qualified(node, &comp.name),
                    if is_flow { "flow" } else { "stream" }
                ),
            );
        }
        let base_name = qualified(node, &comp.name);
        // Only flow variables of connectors form connection sets (a `flow` variable declared
        // directly in a model is an ordinary variable).
        let in_connector = ty.via_connector || {
            let mut cur = Some(node.clone());
            let mut found = false;
            while let Some(n) = cur {
                if matches!(
                    self.lk.kind(self.lk.follow_short_class(n.class)),
                    ClassKind::Connector | ClassKind::ExpandableConnector
                ) {
                    found = true;
                    break;
                }
                cur = n.parent.clone();
            }
            found
        };
        let description = comp.decl.description.text();
        // the setting of an enclosing record component wins over the field's own (spec 18.3)
        let evaluate = variability <= Variability::Parameter
            && inh
                .evaluate
                .or_else(|| annotated_evaluate(&comp.decl.description))
                .unwrap_or(false);
        // an `inner outer` variable stands for the outer one at the next level up (what the
        // state machine lowering merges definitions into, spec 17.3.7)
        let outer_name = if comp.prefixes.inner && comp.prefixes.outer {
            let (n, c) = self.inner_of(node, comp)?;
            Some(qualified(&n, &c.name))
        } else {
            None
        };
        for idx in index_tuples(dims) {
            let path: Vec<usize> = idx.iter().map(|i| i - 1).collect();
            let name = if idx.is_empty() {
                base_name.clone()
            } else {
                format!("{base_name}{}", format_indices(&idx))
            };
            if let Some(o) = &outer_name {
                let outer = if idx.is_empty() {
                    o.clone()
                } else {
                    format!("{o}{}", format_indices(&idx))
                };
                out.inner_outer.push((name.clone(), outer));
            }
            let bval = binding.as_ref().map(|(v, s)| (v.index_path(&path), *s));
            let bexpr = match bval {
                Some((Val::S(e), s)) => Some((e, s)),
                Some((_, s)) => {
                    return err(
                        s,
                        format!("the binding of `{name}` does not match its size"),
                    )
                }
                None => None,
            };
            let mut attrs = attr_values.element(&path);
            if computed_at_init.is_some() {
                attrs.fixed = Some(false);
            }
            let mut var = Variable {
                name: name.clone(),
                ty: scalar_ty.clone(),
                variability,
                causality,
                binding: None,
                attrs,
                is_flow,
                is_stream,
                is_protected: comp.protected || inh.protected,
                evaluate,
                description: description.clone(),
                origin: origin(comp.decl.span, node),
            };
            if let Some((e, s)) = bexpr {
                if variability <= Variability::Parameter {
                    var.binding = Some(e);
                } else {
                    out.equations.push(Equation::Equal {
                        lhs: Expr::Var {
                            name: name.clone(),
                            subscripts: Vec::new(),
                        },
                        rhs: e,
                        origin: origin(s, &comp.env.node),
                    });
                }
            }
            // Every flow variable is also an inside set element of its own (spec 9.2), so
            // unconnected flows, including those of top-level connectors, become zero.
            if is_flow && in_connector {
                out.inside_flows.push(name.clone());
            }
            if variability > Variability::Parameter && self.is_expandable(node) {
                out.bus_vars
                    .push((name.clone(), (node.path.clone(), comp.name.to_string())));
            }
            out.variables.push(var);
        }
        if let Some((rhs, s)) = whole_array_binding {
            out.equations.push(Equation::Equal {
                lhs: names_array(&base_name, dims, &mut Vec::new()),
                rhs,
                origin: origin(s, &comp.env.node),
            });
        }
        if let Some((rhs, s)) = computed_at_init {
            out.initial_equations.push(Equation::Equal {
                lhs: names_array(&base_name, dims, &mut Vec::new()),
                rhs,
                origin: origin(s, &comp.env.node),
            });
        }
        Ok(())
    }

    /// Flatten one equation (appending to `out`); `connect` goes to `conns` (None in initial
    /// equations, where connect is not allowed).
    pub fn equation(
        &self,
        eq: &ast::Equation,
        env: &Env,
        cx: &mut Cx,
        out: &mut Vec<Equation>,
        mut conns: Option<&mut Connections>,
    ) -> Res<()> {
        let o = origin(eq.span, &env.node);
        match &eq.kind {
            EquationKind::Simple { lhs, rhs } => {
                if let Some(e) = self.call_equation(lhs, rhs, env, cx, &o)? {
                    out.push(e);
                    return Ok(());
                }
                let l = self.expand(lhs, env, cx)?;
                let r = self.expand(rhs, env, cx)?;
                if l.shape() != r.shape() {
                    return err(
                        eq.span,
                        format!(
                            "the two sides of the equation have different sizes: {:?} and {:?}",
                            l.shape(),
                            r.shape()
                        ),
                    );
                }
                if let Some((targets, call)) = record_fields_of_one_call(&l, &r) {
                    // `R = f(x)` with a record result that has array fields
                    out.push(Equation::Equal {
                        lhs: Expr::Tuple(targets),
                        rhs: call,
                        origin: o,
                    });
                    return Ok(());
                }
                let (ls, rs) = (l.scalars(), r.scalars());
                if ls.len() != rs.len() {
                    return err(eq.span, "the two sides of the equation do not match");
                }
                if let Some(call) = whole_call(&rs) {
                    // `r = f(x)` with a record result: one equation for all outputs.
                    out.push(Equation::Equal {
                        lhs: Expr::Tuple(ls.into_iter().map(Some).collect()),
                        rhs: call,
                        origin: o,
                    });
                    return Ok(());
                }
                for (a, b) in ls.into_iter().zip(rs) {
                    out.push(Equation::Equal {
                        lhs: a,
                        rhs: b,
                        origin: o.clone(),
                    });
                }
            }
            EquationKind::For { indices, body } => {
                self.for_equation(indices, body, env, cx, out, conns)?;
            }
            EquationKind::If {
                branches,
                else_branch,
            } => {
                let mut kept: Vec<(Expr, Vec<Equation>)> = Vec::new();
                let mut else_eqs: Option<Vec<Equation>> = None;
                for (c, body) in branches {
                    let structural = kept
                        .is_empty()
                        .then(|| self.eval_expr(c, env, &mut cx.clone()).ok())
                        .flatten();
                    match structural {
                        Some(Val::S(Expr::Boolean(false))) => continue,
                        Some(Val::S(Expr::Boolean(true))) => {
                            let mut v = Vec::new();
                            for e in body {
                                self.equation(e, env, cx, &mut v, conns.as_deref_mut())?;
                            }
                            else_eqs = Some(v);
                            break;
                        }
                        _ => {
                            let cv = self.expand(c, env, cx)?;
                            let Val::S(ce) = cv else {
                                return err(
                                    c.span,
                                    "the condition of an if-equation must be a scalar Boolean",
                                );
                            };
                            if fold::is_literal(&ce) && !matches!(ce, Expr::Boolean(_)) {
                                return err(
                                    c.span,
                                    "the condition of an if-equation must be a Boolean expression",
                                );
                            }
                            let connects = body
                                .iter()
                                .chain(else_branch.iter())
                                .find(|e| matches!(e.kind, EquationKind::Connect { .. }));
                            if let (Some(e), false) = (connects, matches!(ce, Expr::Boolean(_))) {
                                return err(
                                    e.span,
                                    "`connect` inside an if-equation whose condition is not a parameter expression",
                                )
                                .map_err(|d| {
                                    Box::new(d.with_secondary(c.span, "this condition varies during the simulation").with_help(
                                        "connections are fixed at translation time: use a parameter condition, or a conditional component",
                                    ))
                                });
                            }
                            let mut v = Vec::new();
                            let was = cx.guarded;
                            cx.guarded = !matches!(ce, Expr::Boolean(true));
                            for e in body {
                                let r = self.equation(e, env, cx, &mut v, conns.as_deref_mut());
                                if r.is_err() {
                                    cx.guarded = was;
                                }
                                r?;
                            }
                            cx.guarded = was;
                            if let Expr::Boolean(true) = ce {
                                else_eqs = Some(v);
                                break;
                            }
                            if let Expr::Boolean(false) = ce {
                                continue;
                            }
                            kept.push((ce, v));
                        }
                    }
                }
                let else_eqs = match else_eqs {
                    Some(v) => v,
                    None => {
                        let mut v = Vec::new();
                        for e in else_branch {
                            self.equation(e, env, cx, &mut v, conns.as_deref_mut())?;
                        }
                        v
                    }
                };
                if kept.is_empty() {
                    out.extend(else_eqs);
                } else {
                    out.push(Equation::If {
                        branches: kept,
                        else_: else_eqs,
                        origin: o,
                    });
                }
            }
            EquationKind::Connect { lhs, rhs } => {
                let Some(conns) = conns else {
                    return err(eq.span, "`connect` is not allowed here");
                };
                self.connect(lhs, rhs, env, cx, conns, o)?;
            }
            EquationKind::When { branches } => {
                let was = cx.guarded;
                cx.guarded = true;
                let r = self.when_equation(branches, env, cx, o);
                cx.guarded = was;
                out.push(r?);
            }
            EquationKind::Call { function, args }
                if crate::overconstrained::connections_operator(function).is_some() =>
            {
                let op = crate::overconstrained::connections_operator(function).unwrap_or("");
                self.graph_statement(op, args, env, cx, conns, o)?;
            }
            EquationKind::Call { function, args } => {
                out.push(self.call_eq(function, args, env, cx, o)?);
            }
        }
        Ok(())
    }

    fn when_equation(
        &self,
        branches: &[(ast::Expr, Vec<ast::Equation>)],
        env: &Env,
        cx: &mut Cx,
        o: Origin,
    ) -> Res<Equation> {
        let mut bs = Vec::new();
        for (c, body) in branches {
            self.check_when_targets(body, env)?;
            let cv = self.expand(c, env, cx)?.to_expr();
            let mut v = Vec::new();
            for e in body {
                if let EquationKind::When { .. } = e.kind {
                    return err(e.span, "when-equations cannot be nested");
                }
                self.equation(e, env, cx, &mut v, None)?;
            }
            let v = lower_ifs_in_when(v);
            for e in &v {
                if let Equation::Equal { lhs, origin, .. } = e {
                    // `(r, state) = f(pre(state))`: outputs are variables or arrays of them
                    fn assignable(e: &Expr) -> bool {
                        match e {
                            Expr::Var { .. } => true,
                            Expr::Array(items) => items.iter().all(assignable),
                            _ => false,
                        }
                    }
                    let ok = match lhs {
                        Expr::Tuple(items) => items.iter().flatten().all(assignable),
                        other => assignable(other),
                    };
                    if !ok {
                        return err(
                            origin.span,
                            "the left side of an equation inside `when` must be a variable",
                        )
                        .map_err(|d| Box::new(d.with_help("write `x = expression;` so that the equation assigns `x` when the event occurs")));
                    }
                }
            }
            bs.push((cv, v));
        }
        Ok(Equation::When {
            branches: bs,
            origin: o,
        })
    }

    /// The variables a `when`-equation assigns are not defined inside a sub-component of
    /// model or block class (spec 4.5.3, "Discrete-Time Variables": it would break the
    /// balance of that component).
    fn check_when_targets(&self, eqs: &[ast::Equation], env: &Env) -> Res<()> {
        for e in eqs {
            match &e.kind {
                EquationKind::Simple { lhs, .. } => self.when_target_not_in_submodel(lhs, env)?,
                EquationKind::If {
                    branches,
                    else_branch,
                } => {
                    for (_, b) in branches {
                        self.check_when_targets(b, env)?;
                    }
                    self.check_when_targets(else_branch, env)?;
                }
                EquationKind::For { body, .. } => self.check_when_targets(body, env)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn when_target_not_in_submodel(&self, lhs: &ast::Expr, env: &Env) -> Res<()> {
        let refs: Vec<&ast::ComponentRef> = match &lhs.kind {
            ExprKind::Ref(c) => vec![c],
            ExprKind::Tuple(items) => items
                .iter()
                .flatten()
                .filter_map(|i| match &i.kind {
                    ExprKind::Ref(c) => Some(c),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        for c in refs {
            if c.global || c.parts.len() < 2 {
                continue;
            }
            let Some(comp) = self.find_comp(&env.node, c.parts[0].name.as_str()) else {
                continue;
            };
            let Some(class) = self.comp_type(&env.node, &comp).ok().and_then(|t| t.class) else {
                continue;
            };
            let kind = self.lk.kind(self.lk.follow_short_class(class));
            if matches!(kind, ClassKind::Model | ClassKind::Block) {
                return err(
                    c.span,
                    format!(
                        "`{}` is assigned in a when-clause but is defined in `{}`, a component of {} class `{}`",
                        cref_text(c),
                        comp.name,
                        crate::restrict::kind_name(kind),
                        self.lk.name_of(class)
                    ),
                )
                .map_err(|d| Box::new(d.with_help("assign it in a when-clause of that class itself, or connect it to a variable assigned here (specification 4.5.3)")));
            }
        }
        Ok(())
    }

    fn for_equation(
        &self,
        indices: &[ast::ForIndex],
        body: &[ast::Equation],
        env: &Env,
        cx: &mut Cx,
        out: &mut Vec<Equation>,
        mut conns: Option<&mut Connections>,
    ) -> Res<()> {
        let Some((first, rest)) = indices.split_first() else {
            for e in body {
                self.equation(e, env, cx, out, conns.as_deref_mut())?;
            }
            return Ok(());
        };
        let mut exprs = Vec::new();
        if first.range.is_none() {
            crate::expand::equation_exprs(body, &mut exprs);
        }
        for v in self.iterator_values_in(first, &exprs, env, cx)? {
            cx.locals.push((first.name.name.clone(), Arc::new(v)));
            let r = self.for_equation(rest, body, env, cx, out, conns.as_deref_mut());
            cx.locals.pop();
            r?;
        }
        Ok(())
    }

    /// `(a, b) = f(x)` and `x = f(y)` with an array-valued `f`: kept as one equation.
    fn call_equation(
        &self,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        env: &Env,
        cx: &mut Cx,
        o: &Origin,
    ) -> Res<Option<Equation>> {
        let ExprKind::Call { .. } = &rhs.kind else {
            return Ok(None);
        };
        if let ExprKind::Tuple(items) = &lhs.kind {
            self.check_tuple_call(items.len(), rhs, env, cx)?;
            let keep = self.keep_calls.replace(true);
            let call = self.expand(rhs, env, cx);
            self.keep_calls.set(keep);
            let call = call?;
            let call = called_function(strip_index_call(call.to_expr()));
            let mut targets = Vec::new();
            for i in items {
                match i {
                    Some(e) => record_fields_as_targets(self.expand(e, env, cx)?, &mut targets),
                    None => targets.push(None),
                }
            }
            return Ok(Some(Equation::Equal {
                lhs: Expr::Tuple(targets),
                rhs: call,
                origin: o.clone(),
            }));
        }
        let r = self.expand(rhs, env, cx)?;
        if r.scalars().iter().any(is_index_call) {
            let l = self.expand(lhs, env, cx)?;
            if l.shape() != r.shape() {
                return err(o.span, "the two sides of the equation have different sizes");
            }
            return Ok(Some(Equation::Equal {
                lhs: l.to_expr(),
                rhs: strip_index_call(r.to_expr()),
                origin: o.clone(),
            }));
        }
        Ok(None)
    }

    fn call_eq(
        &self,
        function: &ast::ComponentRef,
        args: &FunctionArgs,
        env: &Env,
        cx: &mut Cx,
        o: Origin,
    ) -> Res<Equation> {
        let name = function.as_simple_name().unwrap_or("");
        let FunctionArgs::List { positional, named } = args else {
            return err(o.span, "unexpected iterator arguments");
        };
        let arg = |k: usize, n: &str| -> Option<&ast::Expr> {
            positional
                .get(k)
                .or_else(|| named.iter().find(|a| a.name == n).map(|a| &a.value))
        };
        match name {
            "assert" => {
                let (Some(c), Some(m)) = (arg(0, "condition"), arg(1, "message")) else {
                    return err(o.span, "assert needs a condition and a message");
                };
                let cond_ast = c;
                let c = self.expand(c, env, cx)?.to_expr();
                let m = self.expand(m, env, cx)?.to_expr();
                if !matches!(c, Expr::Boolean(_)) && fold::is_literal(&c) {
                    return err(
                        cond_ast.span,
                        "the condition of assert must be a Boolean expression",
                    );
                }
                if !matches!(m, Expr::String(_)) && fold::is_literal(&m) {
                    return err(o.span, "the message of assert must be a String expression");
                }
                let level = match arg(2, "level") {
                    Some(l) => match self.eval_expr(l, env, &mut cx.clone())? {
                        Val::S(Expr::Enum { literal, .. }) if &*literal == "warning" => {
                            AssertLevel::Warning
                        }
                        _ => AssertLevel::Error,
                    },
                    None => AssertLevel::Error,
                };
                // Conditions on parameters and constants are checked now.
                let known = if cx.guarded {
                    None
                } else if fold::is_literal(&c) {
                    Some(c.clone())
                } else {
                    self.eval_expr(cond_ast, env, &mut cx.clone())
                        .ok()
                        .and_then(|v| v.scalar().cloned())
                };
                if known == Some(Expr::Boolean(false)) && level == AssertLevel::Error {
                    let text = match &m {
                        Expr::String(s) => s.clone(),
                        other => crate::print::print_expr(other),
                    };
                    return err(
                        o.span,
                        format!("assertion fails for the given parameter values: {text}"),
                    );
                }
                Ok(Equation::Assert {
                    condition: c,
                    message: m,
                    level,
                    origin: o,
                })
            }
            "terminate" => {
                let Some(m) = arg(0, "message") else {
                    return err(o.span, "terminate needs a message");
                };
                Ok(Equation::Terminate {
                    message: self.expand(m, env, cx)?.to_expr(),
                    origin: o,
                })
            }
            "reinit" => {
                let (Some(x), Some(v)) = (positional.first(), positional.get(1)) else {
                    return err(o.span, "reinit needs a variable and a value");
                };
                let Val::S(Expr::Var { name, .. }) = self.expand(x, env, cx)? else {
                    return err(
                        x.span,
                        "the first argument of reinit must be a scalar variable",
                    );
                };
                let value = self.expand(v, env, cx)?.to_expr();
                Ok(Equation::Reinit {
                    var: name,
                    value,
                    origin: o,
                })
            }
            _ => {
                let e = ast::Expr::new(
                    ExprKind::Call {
                        function: function.clone(),
                        args: args.clone(),
                    },
                    o.span,
                );
                match self.expand(&e, env, cx)? {
                    Val::S(Expr::Call { func, args }) => Ok(Equation::Call {
                        func,
                        args,
                        origin: o,
                    }),
                    _ => err(
                        o.span,
                        format!("`{}` cannot be used as an equation", cref_text(function)),
                    ),
                }
            }
        }
    }

    /// Resolve one side of a `connect` into connector elements (arrays element-wise, also
    /// through arrays of components: `connect(r.p, ...)` with `r[3]`). `None` when it names
    /// a disabled conditional component (the connection is dropped).
    fn connect_side(
        &self,
        c: &ast::ComponentRef,
        env: &Env,
        cx: &mut Cx,
    ) -> Res<Option<Vec<ConnElem>>> {
        match self.connect_side_with(c, env, cx, true)? {
            Some(side) => Ok(side),
            // Without stand-ins every side resolves.
            None => Ok(self.connect_side_with(c, env, cx, false)?.flatten()),
        }
    }

    /// [`Self::connect_side`]; with `stand_ins`, elements of arrays flattened as copies are
    /// resolved on their first element ([`Self::lookup_element`]) and named by their own
    /// path. `None` when a stand-in cannot be used (an `outer` element or an expandable
    /// connector below one, whose instance paths matter): the caller resolves again without.
    fn connect_side_with(
        &self,
        c: &ast::ComponentRef,
        env: &Env,
        cx: &mut Cx,
        stand_ins: bool,
    ) -> Res<Option<Option<Vec<ConnElem>>>> {
        // Each instance reached so far, with its own path when it stands in for another.
        let mut nodes: Vec<(NodeRef, Option<String>)> = vec![(env.node.clone(), None)];
        let mut outside = false;
        let mut out = Vec::new();
        for (k, part) in c.parts.iter().enumerate() {
            let last = k + 1 == c.parts.len();
            let mut next = Vec::new();
            for (node, real_path) in &nodes {
                let Some(mut comp) = self.find_comp(node, part.name.as_str()) else {
                    return err(
                        part.name.span,
                        format!("unknown connector `{}`", cref_text(c)),
                    );
                };
                let mut node = node.clone();
                // the first part is a local reference: for an `inner outer` component it
                // denotes the outer one (spec 5.4)
                if comp.prefixes.outer && (!comp.prefixes.inner || k == 0) {
                    if real_path.is_some() {
                        return Ok(None);
                    }
                    let (n, ic) = self.inner_of(&node, &comp)?;
                    node = n;
                    comp = ic;
                }
                if !self.comp_enabled(&node, &comp)? {
                    return Ok(Some(None));
                }
                let ty = self.comp_type(&node, &comp)?;
                if k == 0 {
                    outside = match ty.base {
                        Base::Class(cls) => {
                            // `connector ComplexOutput = output Complex` names a record
                            ty.via_connector
                                || matches!(
                                    self.lk.kind(self.lk.follow_short_class(cls)),
                                    ClassKind::Connector | ClassKind::ExpandableConnector
                                )
                        }
                        _ => true,
                    };
                }
                if k == 1 && !outside && !self.is_connector(&node, &ty) {
                    return err(
                        c.span,
                        format!(
                            "`{}` is not a connector reference: `{}` is not a connector of `{}`",
                            cref_text(c),
                            part.name,
                            c.parts[0].name
                        ),
                    )
                    .map_err(|d| Box::new(d.with_help("connect a connector `c`, a connector of a component `m.c`, or an element of a connector; connect deeper connectors inside the component that holds them")));
                }
                if last && !self.is_connector(&node, &ty) {
                    return err(
                        c.span,
                        format!("`{}` is not a connector and cannot be connected", cref_text(c)),
                    )
                    .map_err(|d| Box::new(d.with_help("connect equations need connector components (or elements of connectors) on both sides")));
                }
                let dims = self.comp_dims(&node, &comp)?;
                let sel = self.connect_indices(&part.subscripts, &dims, env, cx)?;
                let element_name = |idx: &[usize]| {
                    let mut name = match real_path {
                        Some(p) => qualified_at(p, &comp.name),
                        None => qualified(&node, &comp.name),
                    };
                    if !idx.is_empty() {
                        name.push_str(&format_indices(idx));
                    }
                    name
                };
                for idx in sel {
                    if !last {
                        let (child, stands_in) = if stand_ins {
                            self.lookup_element(&node, &comp, &idx)?
                        } else {
                            (self.child_node(&node, &comp, &idx)?, false)
                        };
                        let real = (stands_in || real_path.is_some()).then(|| element_name(&idx));
                        next.push((child, real));
                        continue;
                    }
                    let name = element_name(&idx);
                    let child = match ty.base {
                        Base::Class(_) => Some(self.child_node(&node, &comp, &idx)?),
                        _ => None,
                    };
                    if real_path.is_some() && child.as_ref().is_some_and(|n| self.is_expandable(n))
                    {
                        return Ok(None);
                    }
                    out.push(ConnElem {
                        name,
                        node: child,
                        outside,
                        comp: comp.clone(),
                        parent: node.clone(),
                    });
                }
            }
            nodes = next;
        }
        Ok(Some(Some(out)))
    }

    /// `cardinality(c)` (spec 3.7.4): how many `connect` equations name the scalar connector
    /// `c`. Only known once every connection is collected, so this gives a placeholder call
    /// naming the connector, replaced by the count after the walk (then asserts and
    /// if-equations on it fold to constants). A disabled conditional connector counts 0.
    pub fn cardinality_query(
        &self,
        positional: &[ast::Expr],
        named: &[ast::NamedArg],
        env: &Env,
        cx: &mut Cx,
        span: Span,
    ) -> Res<Val> {
        let ([arg], true) = (positional, named.is_empty()) else {
            return err(
                span,
                "`cardinality` takes exactly one argument, a connector",
            );
        };
        let ExprKind::Ref(c) = &arg.kind else {
            return err(arg.span, "the argument of `cardinality` must name a connector")
                .map_err(|d| Box::new(d.with_help("write `cardinality(p)` for a connector `p` of this component or of one of its components")));
        };
        if self.expandable_side(c, env, &mut cx.clone())?.is_some() {
            return err(
                arg.span,
                format!(
                    "`cardinality` cannot be applied to the expandable connector (or its element) `{}`",
                    cref_text(c)
                ),
            );
        }
        let Some(elems) = self.connect_side(c, env, cx)? else {
            return Ok(Val::S(Expr::Integer(0)));
        };
        match elems.as_slice() {
            [one] => Ok(Val::S(Expr::Call {
                func: crate::connect::CARDINALITY.into(),
                args: vec![Expr::String(one.name.clone())],
            })),
            _ => err(
                arg.span,
                format!(
                    "`cardinality` needs a scalar connector, but `{}` stands for {} connectors",
                    cref_text(c),
                    elems.len()
                ),
            )
            .map_err(|d| {
                Box::new(
                    d.with_help("apply it to one element of the array, e.g. `cardinality(c[i])`"),
                )
            }),
        }
    }

    pub(crate) fn connect_indices(
        &self,
        subs: &[ast::Subscript],
        dims: &[usize],
        env: &Env,
        cx: &mut Cx,
    ) -> Res<Vec<Vec<usize>>> {
        let mut lists: Vec<Vec<usize>> = Vec::new();
        for (k, &d) in dims.iter().enumerate() {
            match subs.get(k) {
                None | Some(ast::Subscript::Colon(_)) => lists.push((1..=d).collect()),
                Some(ast::Subscript::Expr(e)) => {
                    let saved = cx.end.replace(d);
                    let v = self.eval_expr(e, env, cx);
                    cx.end = saved;
                    let v = v?;
                    let mut is = Vec::new();
                    for x in v.scalars() {
                        match fold::as_i64(&x) {
                            Some(i) if i >= 1 && i as usize <= d => is.push(i as usize),
                            _ => return err(e.span, format!("index out of bounds 1..{d}")),
                        }
                    }
                    lists.push(is);
                }
            }
        }
        let mut out = vec![Vec::new()];
        for l in lists {
            let mut next = Vec::new();
            for p in &out {
                for i in &l {
                    let mut q = p.clone();
                    q.push(*i);
                    next.push(q);
                }
            }
            out = next;
        }
        Ok(out)
    }

    fn is_expandable_elem(&self, e: &ConnElem) -> bool {
        e.node.as_ref().is_some_and(|n| self.is_expandable(n))
    }

    /// One element of a connection as a deferred side: the whole bus for an expandable
    /// connector, the element itself otherwise.
    fn bus_or_plain(&self, e: ConnElem) -> crate::expandable::Side {
        match &e.node {
            Some(n) if self.is_expandable(n) => crate::expandable::Side::Bus {
                bus: n.clone(),
                rest: String::new(),
                outside: e.outside,
            },
            _ => crate::expandable::Side::Plain(vec![e]),
        }
    }

    fn connect(
        &self,
        lhs: &ast::ComponentRef,
        rhs: &ast::ComponentRef,
        env: &Env,
        cx: &mut Cx,
        conns: &mut Connections,
        o: Origin,
    ) -> Res<()> {
        let ea = self.expandable_side(lhs, env, cx)?;
        let eb = self.expandable_side(rhs, env, cx)?;
        if ea.is_some() || eb.is_some() {
            use crate::expandable::{Deferred, Side};
            let side = |e: Option<Side>, c: &ast::ComponentRef, cx: &mut Cx| -> Res<Option<Side>> {
                match e {
                    Some(s) => Ok(Some(s)),
                    None => Ok(self.connect_side(c, env, cx)?.map(Side::Plain)),
                }
            };
            let (Some(a), Some(b)) = (side(ea, lhs, cx)?, side(eb, rhs, cx)?) else {
                return Ok(());
            };
            for s in [&a, &b] {
                if let Side::Plain(elems) = s {
                    elems.iter().for_each(|e| conns.count_occurrence(&e.name));
                }
            }
            conns.deferred.push(Deferred { a, b, origin: o });
            return Ok(());
        }
        let (Some(a), Some(b)) = (
            self.connect_side(lhs, env, cx)?,
            self.connect_side(rhs, env, cx)?,
        ) else {
            return Ok(());
        };
        if a.len() == b.len() && a.iter().chain(&b).any(|e| self.is_expandable_elem(e)) {
            // arrays of expandable connectors (`connect(cell.bus, stack.bus)`): element by
            // element, each expandable one a bus whose elements are augmented later
            for (x, y) in a.into_iter().zip(b) {
                let (x, y) = (self.bus_or_plain(x), self.bus_or_plain(y));
                for s in [&x, &y] {
                    if let crate::expandable::Side::Plain(elems) = s {
                        elems.iter().for_each(|e| conns.count_occurrence(&e.name));
                    }
                }
                conns.deferred.push(crate::expandable::Deferred {
                    a: x,
                    b: y,
                    origin: o.clone(),
                });
            }
            return Ok(());
        }
        if a.len() != b.len() {
            return err(
                o.span,
                format!(
                    "connect: `{}` has {} element(s) but `{}` has {}",
                    cref_text(lhs),
                    a.len(),
                    cref_text(rhs),
                    b.len()
                ),
            );
        }
        for (x, y) in a.into_iter().zip(b) {
            conns.count_occurrence(&x.name);
            conns.count_occurrence(&y.name);
            self.check_connect_types(&x, &y, &o)?;
            let (mut lx, sx) = self.connector_leaves_signal(&x)?;
            let (mut ly, sy) = self.connector_leaves_signal(&y)?;
            let in_bus = sx.in_bus || sy.in_bus;
            if !in_bus {
                crate::connect_rules::check_causal_match(
                    &x.name, &lx, &sx.roles, &y.name, &ly, &sy.roles, &o,
                )?;
            }
            crate::connect_rules::pair_fixed(&x.name, &sx.fixed, &y.name, &sy.fixed, conns, &o);
            self.overdetermined_edges(&x, &mut lx, &y, &mut ly, conns, &o)?;
            // Overdetermined parts leave the leaves (they form no sets); the signal roles
            // are only kept when the leaves are all still there.
            let signals = (!in_bus && lx.len() == sx.roles.len() && ly.len() == sy.roles.len())
                .then_some((sx.roles, sy.roles));
            conns.add(x, lx, y, ly, &o, signals)?;
        }
        Ok(())
    }

    /// Connected variables have the same predefined type (or enumeration) and the same
    /// variability (spec 9.3).
    fn check_connect_types(&self, x: &ConnElem, y: &ConnElem, o: &Origin) -> Res<()> {
        let sx = self.connector_signature(x)?;
        let sy = self.connector_signature(y)?;
        for (name, tx, vx) in &sx {
            let Some((_, ty, vy)) = sy.iter().find(|(n, _, _)| n == name) else {
                continue;
            };
            let problem = if tx != ty {
                Some(format!(
                    "`{}{name}` is {tx} but `{}{name}` is {ty}",
                    x.name, y.name
                ))
            } else if vx != vy {
                Some(format!(
                    "`{}{name}` is {} but `{}{name}` is {}",
                    x.name,
                    variability_word(*vx),
                    y.name,
                    variability_word(*vy)
                ))
            } else {
                None
            };
            if let Some(p) = problem {
                return err(o.span, format!("connect: {p}")).map_err(|d| {
                    Box::new(d.with_help(
                        "connected variables must have the same type and variability; check the two connector classes",
                    ))
                });
            }
        }
        Ok(())
    }

    /// Every scalar variable of a connector (also parameters and constants): suffix, type
    /// name and variability.
    fn connector_signature(
        &self,
        c: &ConnElem,
    ) -> Res<Vec<(String, String, Option<ast::Variability>)>> {
        let mut out = Vec::new();
        match &c.node {
            None => {
                let ty = self.comp_type(&c.parent, &c.comp)?;
                out.push((
                    String::new(),
                    self.base_type_name(&ty.base),
                    fixed_variability(&c.comp),
                ));
            }
            Some(n) => self.signature_of(n, "", &mut out)?,
        }
        Ok(out)
    }

    fn signature_of(
        &self,
        node: &NodeRef,
        prefix: &str,
        out: &mut Vec<(String, String, Option<ast::Variability>)>,
    ) -> Res<()> {
        let elems = self.elems(node);
        for comp in &elems.comps {
            if !self.comp_enabled(node, comp)? {
                continue;
            }
            let ty = self.comp_type(node, comp)?;
            let name = format!("{prefix}.{}", crate::ctx::flat_ident(&comp.name));
            match ty.base {
                Base::Class(_) => {
                    if self.comp_dims(node, comp)?.is_empty() {
                        let child = self.child_node(node, comp, &[])?;
                        self.signature_of(&child, &name, out)?;
                    }
                }
                _ => out.push((name, self.base_type_name(&ty.base), fixed_variability(comp))),
            }
        }
        Ok(())
    }

    fn base_type_name(&self, base: &Base) -> String {
        match base {
            Base::Real => "Real".into(),
            Base::Integer => "Integer".into(),
            Base::Boolean => "Boolean".into(),
            Base::String => "String".into(),
            Base::Clock => "Clock".into(),
            Base::Enum(c, _) => format!("the enumeration `{}`", self.lk.name_of(*c)),
            Base::Class(c) => format!("`{}`", self.lk.name_of(*c)),
        }
    }

    /// A connector component, or a variable inside a connector instance.
    fn is_connector(&self, node: &NodeRef, ty: &ResolvedType) -> bool {
        let is_conn = |c: crate::loader::ClassId| {
            matches!(
                self.lk.kind(self.lk.follow_short_class(c)),
                ClassKind::Connector | ClassKind::ExpandableConnector
            )
        };
        match ty.base {
            Base::Class(c) => ty.via_connector || is_conn(c),
            _ => ty.via_connector || (node.parent.is_some() && is_conn(node.class)),
        }
    }

    /// The scalar variables of a connector: (suffix after the connector name, kind).
    pub fn connector_leaves(&self, c: &ConnElem) -> Res<Vec<Leaf>> {
        Ok(self.connector_leaves_signal(c)?.0)
    }

    /// [`Self::connector_leaves`] with, for each leaf, its signal role (causality and
    /// whether the connector is protected) for the connection rules of spec 9.3.
    pub fn connector_leaves_signal(
        &self,
        c: &ConnElem,
    ) -> Res<(Vec<Leaf>, crate::connect_rules::Signals)> {
        let mut out = Vec::new();
        let mut signals = crate::connect_rules::Signals {
            in_bus: self.inside_expandable(&c.parent),
            ..Default::default()
        };
        let protected = c.comp.protected || self.inherited_of(&c.parent).protected;
        match &c.node {
            None => {
                let ty = self.comp_type(&c.parent, &c.comp)?;
                out.push((String::new(), c.comp.tprefixes.connector));
                signals.roles.push(crate::connect_rules::Signal {
                    causality: c.comp.tprefixes.causality.or(ty.causality),
                    protected,
                });
            }
            Some(n) => {
                let causality = c.comp.tprefixes.causality;
                self.leaves_of(n, "", causality, &mut out, &mut signals)?;
                signals
                    .roles
                    .iter_mut()
                    .for_each(|s| s.protected = protected);
            }
        }
        Ok((out, signals))
    }

    /// Whether `node` or one of its enclosing instances is an expandable connector.
    fn inside_expandable(&self, node: &NodeRef) -> bool {
        let mut n = Some(node);
        while let Some(x) = n {
            if self.is_expandable(x) {
                return true;
            }
            n = x.parent.as_ref();
        }
        false
    }

    /// The leaves below `node`; `causality` is the prefix of an enclosing structured
    /// component (`output Complex y`), which applies to all its variables.
    fn leaves_of(
        &self,
        node: &NodeRef,
        prefix: &str,
        causality: Option<ast::Causality>,
        out: &mut Vec<Leaf>,
        signals: &mut crate::connect_rules::Signals,
    ) -> Res<()> {
        let elems = self.elems(node);
        for comp in &elems.comps {
            if !self.comp_enabled(node, comp)? {
                continue;
            }
            let var = comp.tprefixes.variability;
            let ty = self.comp_type(node, comp)?;
            if matches!(
                var,
                Some(ast::Variability::Parameter | ast::Variability::Constant)
            ) {
                // no connection set; scalar ones are compared (connect_rules)
                if ty.base.is_primitive() && self.comp_dims(node, comp)?.is_empty() {
                    let name = format!("{prefix}.{}", crate::ctx::flat_ident(&comp.name));
                    signals.fixed.push(name);
                }
                continue;
            }
            let dims = self.comp_dims(node, comp)?;
            let causal = comp.tprefixes.causality.or(ty.causality).or(causality);
            for idx in index_tuples(&dims) {
                let mut name = format!("{prefix}.{}", crate::ctx::flat_ident(&comp.name));
                if !idx.is_empty() {
                    name.push_str(&format_indices(&idx));
                }
                match ty.base {
                    Base::Class(_) => {
                        let child = self.child_node(node, comp, &idx)?;
                        self.leaves_of(&child, &name, causal, out, signals)?;
                    }
                    _ => {
                        out.push((
                            name,
                            comp.tprefixes
                                .connector
                                .or(self.inherited_of(node).connector),
                        ));
                        signals.roles.push(crate::connect_rules::Signal {
                            causality: causal,
                            protected: false,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------
    // Algorithms of the model (statements on scalar variables; loops unrolled)
    // -----------------------------------------------------------------------------------

    pub fn statement(
        &self,
        s: &ast::Statement,
        env: &Env,
        cx: &mut Cx,
        out: &mut Vec<Statement>,
    ) -> Res<()> {
        if matches!(
            s.kind,
            StatementKind::If { .. } | StatementKind::When { .. }
        ) && !cx.guarded
        {
            cx.guarded = true;
            let r = self.statement(s, env, cx, out);
            cx.guarded = false;
            return r;
        }
        let o = origin(s.span, &env.node);
        match &s.kind {
            StatementKind::Assign { target, value } => {
                if let Some(stmt) = self.dynamic_assignment(s, target, value, env, cx)? {
                    out.push(stmt);
                    return Ok(());
                }
                let t = self.expand_cref(target, env, cx)?;
                let v = self.expand(value, env, cx)?;
                let (ts, vs) = (t.scalars(), v.scalars());
                let whole_call = !vs.is_empty() && vs.iter().all(is_index_call);
                if ts.len() != vs.len() || whole_call {
                    if vs.iter().any(is_index_call) {
                        out.push(Statement::Assign {
                            target: t.to_expr(),
                            value: strip_index_call(v.to_expr()),
                            origin: o,
                        });
                        return Ok(());
                    }
                    return err(
                        s.span,
                        "the two sides of the assignment have different sizes",
                    );
                }
                for (a, b) in ts.into_iter().zip(vs) {
                    out.push(Statement::Assign {
                        target: a,
                        value: b,
                        origin: o.clone(),
                    });
                }
            }
            StatementKind::TupleAssign { targets, value } => {
                self.check_tuple_call(targets.len(), value, env, cx)?;
                // A call with literal arguments would fold to its first output; the tuple
                // needs all of them, so the call is kept as the equation form does.
                let keep = self.keep_calls.replace(true);
                let v = self.expand(value, env, cx);
                self.keep_calls.set(keep);
                let v = called_function(strip_index_call(v?.to_expr()));
                let mut ts = Vec::new();
                for t in targets {
                    ts.push(match t {
                        Some(e) => Some(self.expand(e, env, cx)?.to_expr()),
                        None => None,
                    });
                }
                out.push(Statement::TupleAssign {
                    targets: ts,
                    value: v,
                    origin: o,
                });
            }
            StatementKind::Call { function, args } => {
                match self.call_eq(function, args, env, cx, o)? {
                    Equation::Assert {
                        condition,
                        message,
                        level,
                        origin,
                    } => out.push(Statement::Assert {
                        condition,
                        message,
                        level,
                        origin,
                    }),
                    Equation::Terminate { message, origin } => {
                        out.push(Statement::Terminate { message, origin })
                    }
                    Equation::Reinit { var, value, origin } => {
                        out.push(Statement::Reinit { var, value, origin })
                    }
                    Equation::Call { func, args, origin } => {
                        out.push(Statement::Call { func, args, origin })
                    }
                    _ => {}
                }
            }
            StatementKind::If {
                branches,
                else_branch,
            } => {
                let mut bs = Vec::new();
                let mut else_: Option<Vec<Statement>> = None;
                for (c, body) in branches {
                    let cv = self.condition(c, env, cx, "if")?;
                    if cv == Expr::Boolean(false) {
                        continue;
                    }
                    let mut v = Vec::new();
                    for st in body {
                        self.statement(st, env, cx, &mut v)?;
                    }
                    if cv == Expr::Boolean(true) {
                        else_ = Some(v);
                        break;
                    }
                    bs.push((cv, v));
                }
                let else_ = match else_ {
                    Some(v) => v,
                    None => {
                        let mut v = Vec::new();
                        for st in else_branch {
                            self.statement(st, env, cx, &mut v)?;
                        }
                        v
                    }
                };
                if bs.is_empty() {
                    out.extend(else_);
                } else {
                    out.push(Statement::If {
                        branches: bs,
                        else_,
                        origin: o,
                    });
                }
            }
            StatementKind::For { indices, body } => {
                self.for_statement(indices, body, env, cx, out)?;
            }
            StatementKind::While { condition, body } => {
                let c = self.condition(condition, env, cx, "while")?;
                let mut v = Vec::new();
                let was = cx.in_loop;
                cx.in_loop = true;
                let r = body
                    .iter()
                    .try_for_each(|st| self.statement(st, env, cx, &mut v));
                cx.in_loop = was;
                r?;
                out.push(Statement::While {
                    condition: c,
                    body: v,
                    origin: o,
                });
            }
            StatementKind::When { branches } => {
                let mut bs = Vec::new();
                for (c, body) in branches {
                    if cx.in_when {
                        return err(s.span, "when-statements cannot be nested");
                    }
                    let cv = self.expand(c, env, cx)?.to_expr();
                    let mut v = Vec::new();
                    cx.in_when = true;
                    let r = body
                        .iter()
                        .try_for_each(|st| self.statement(st, env, cx, &mut v));
                    cx.in_when = false;
                    r?;
                    bs.push((cv, v));
                }
                out.push(Statement::When {
                    branches: bs,
                    origin: o,
                });
            }
            StatementKind::Return => {
                return err(s.span, "`return` is only allowed in functions");
            }
            StatementKind::Break if !cx.in_loop => {
                return err(s.span, "`break` is only allowed inside a for or while loop");
            }
            StatementKind::Break => out.push(Statement::Break { origin: o }),
        }
        Ok(())
    }

    /// `x[k] := v` with `k` known only during simulation: an if-statement choosing the
    /// element (`if k == 1 then x[1] := v; elseif k == 2 then ...`).
    fn dynamic_assignment(
        &self,
        s: &ast::Statement,
        target: &ast::ComponentRef,
        value: &ast::Expr,
        env: &Env,
        cx: &mut Cx,
    ) -> Res<Option<Statement>> {
        let mut found = None;
        'outer: for (pi, p) in target.parts.iter().enumerate() {
            for (si, sub) in p.subscripts.iter().enumerate() {
                if let ast::Subscript::Expr(e) = sub {
                    let mut probe = cx.clone();
                    probe.end = Some(usize::MAX / 2);
                    if self.eval_expr(e, env, &mut probe).is_err()
                        && !matches!(e.kind, ExprKind::End)
                    {
                        found = Some((pi, si, e.clone()));
                        break 'outer;
                    }
                }
            }
        }
        let Some((pi, si, index)) = found else {
            return Ok(None);
        };
        let k = match self.expand(&index, env, cx)? {
            Val::S(k) => k,
            _ => return err(index.span, "a subscript must be a scalar Integer"),
        };
        let mut branches = Vec::new();
        for i in 1..=100_000i64 {
            let mut t = target.clone();
            t.parts[pi].subscripts[si] =
                ast::Subscript::Expr(ast::Expr::new(ExprKind::Integer(i), index.span));
            if self.expand_cref(&t, env, cx).is_err() {
                break;
            }
            let stmt = ast::Statement {
                kind: StatementKind::Assign {
                    target: t,
                    value: value.clone(),
                },
                description: ast::Description::default(),
                span: s.span,
            };
            let mut body = Vec::new();
            self.statement(&stmt, env, cx, &mut body)?;
            branches.push((
                fold::binary(flat::BinaryOp::Eq, k.clone(), Expr::Integer(i)),
                body,
            ));
        }
        if branches.is_empty() {
            return Ok(None);
        }
        Ok(Some(Statement::If {
            branches,
            else_: Vec::new(),
            origin: origin(s.span, &env.node),
        }))
    }

    /// A scalar Boolean condition of an `if` or `while` statement.
    fn condition(&self, c: &ast::Expr, env: &Env, cx: &mut Cx, what: &str) -> Res<Expr> {
        match self.expand(c, env, cx)? {
            Val::S(e) if fold::is_literal(&e) && !matches!(e, Expr::Boolean(_)) => err(
                c.span,
                format!("the condition of a {what}-statement must be a Boolean expression"),
            ),
            Val::S(e) => Ok(e),
            _ => err(
                c.span,
                format!("the condition of a {what}-statement must be a scalar Boolean"),
            ),
        }
    }

    fn for_statement(
        &self,
        indices: &[ast::ForIndex],
        body: &[ast::Statement],
        env: &Env,
        cx: &mut Cx,
        out: &mut Vec<Statement>,
    ) -> Res<()> {
        let Some((first, rest)) = indices.split_first() else {
            let was = cx.in_loop;
            cx.in_loop = true;
            let r = body
                .iter()
                .try_for_each(|s| self.statement(s, env, cx, out));
            cx.in_loop = was;
            return r;
        };
        let mut exprs = Vec::new();
        if first.range.is_none() {
            crate::expand::statement_exprs(body, &mut exprs);
        }
        let values = match self.iterator_values_in(first, &exprs, env, cx) {
            Ok(v) => v,
            Err(e) => self.varying_range_values(first, env, cx).ok_or(e)?,
        };
        let range_span = first.range.as_ref().map_or(first.span, |r| r.span);
        crate::typecheck::structure::for_range_is_vector(&values, range_span)?;
        let mut unrolled = Vec::new();
        for v in values {
            cx.locals.push((first.name.name.clone(), Arc::new(v)));
            let r = self.for_statement(rest, body, env, cx, &mut unrolled);
            cx.locals.pop();
            r?;
        }
        if rest.is_empty() && breaks_enclosing_loop(&unrolled) {
            // The iterations are laid out one after the other, so a `break` of this loop has
            // to skip the remaining ones: they go into a loop that runs once, which the
            // `break` leaves (for several indices, the innermost loop is the one broken).
            let o = unrolled
                .first()
                .map(Statement::origin)
                .cloned()
                .unwrap_or_default();
            out.push(Statement::For {
                var: "$unrolled".into(),
                range: Expr::Range {
                    start: Box::new(Expr::Integer(1)),
                    step: None,
                    stop: Box::new(Expr::Integer(1)),
                },
                body: unrolled,
                origin: o,
            });
        } else {
            out.extend(unrolled);
        }
        Ok(())
    }
}

/// Whether `stmts` contain a `break` of the loop around them (not one of a loop inside).
fn breaks_enclosing_loop(stmts: &[Statement]) -> bool {
    stmts.iter().any(|s| match s {
        Statement::Break { .. } => true,
        Statement::If {
            branches, else_, ..
        } => branches.iter().any(|(_, b)| breaks_enclosing_loop(b)) || breaks_enclosing_loop(else_),
        Statement::When { branches, .. } => branches.iter().any(|(_, b)| breaks_enclosing_loop(b)),
        _ => false,
    })
}

impl<'a> Flattener<'a> {
    /// A for-statement may iterate over an array whose elements vary during the simulation
    /// (`for i in y loop` with a variable `y`, spec 11.2.2): its size is known, so the loop
    /// is unrolled with the iterator standing for each element's expression.
    fn varying_range_values(
        &self,
        idx: &ast::ForIndex,
        env: &Env,
        cx: &mut Cx,
    ) -> Option<Vec<Val>> {
        let r = idx.range.as_ref()?;
        if matches!(r.kind, ExprKind::Range { .. }) {
            return None;
        }
        let mut fcx = cx.clone();
        fcx.eval = false;
        match self.expand(r, env, &mut fcx).ok()? {
            Val::A(items) => Some(items),
            _ => None,
        }
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

/// Attribute modifiers of an array variable (whole-array values, split per element).
struct AttributeValues {
    start: Option<Val>,
    /// `start` is modified on the component itself (not only by its type).
    start_given: bool,
    nominal: Option<Val>,
    min: Option<Val>,
    max: Option<Val>,
    fixed: Option<Val>,
    unit: Option<Val>,
    display_unit: Option<Val>,
    quantity: Option<Val>,
    state_select: Option<Val>,
}

impl AttributeValues {
    /// The attributes of the element at `path` (0-based indices).
    fn element(&self, path: &[usize]) -> Attributes {
        let scalar = |v: &Option<Val>| {
            v.as_ref()
                .map(|v| v.index_path(path))
                .and_then(|v| v.scalar().cloned())
        };
        let string = |v: &Option<Val>| match scalar(v) {
            Some(Expr::String(s)) => Some(s),
            _ => None,
        };
        Attributes {
            start: scalar(&self.start),
            start_given: self.start_given,
            fixed: match scalar(&self.fixed) {
                Some(Expr::Boolean(b)) => Some(b),
                _ => None,
            },
            nominal: scalar(&self.nominal),
            min: scalar(&self.min),
            max: scalar(&self.max),
            unit: string(&self.unit),
            display_unit: string(&self.display_unit),
            quantity: string(&self.quantity),
            state_select: match scalar(&self.state_select) {
                Some(Expr::Enum { literal, .. }) => state_select_of(&literal),
                _ => None,
            },
        }
    }
}

impl<'a> Flattener<'a> {
    /// Values of the attribute modifiers: expressions for start/nominal/min/max, evaluated
    /// values for fixed, unit, displayUnit, quantity and stateSelect.
    fn attribute_values(&self, mods: &Mod) -> Res<AttributeValues> {
        let attr = |name: &str| mods.sub(name).and_then(|m| m.binding.as_ref());
        let expand = |name: &str| -> Res<Option<Val>> {
            let Some(b) = attr(name) else {
                return Ok(None);
            };
            let mut v = self.expand(&b.expr, &b.env, &mut Cx::flat())?;
            if v.scalars().iter().any(contains_index_call) {
                // Attributes cannot hold elements of array-valued calls: computed now when
                // the arguments are known.
                if let Ok(known) = self.eval_expr(&b.expr, &b.env, &mut Cx::eval()) {
                    v = known;
                }
            }
            Ok(Some(v.index_path(&b.index)))
        };
        let eval = |name: &str| -> Res<Option<Val>> {
            match attr(name) {
                Some(b) => Ok(Some(
                    self.eval_expr(&b.expr, &b.env, &mut Cx::eval())?
                        .index_path(&b.index),
                )),
                None => Ok(None),
            }
        };
        Ok(AttributeValues {
            start: expand("start")?,
            start_given: false,
            nominal: expand("nominal")?,
            min: expand("min")?,
            max: expand("max")?,
            fixed: eval("fixed")?,
            unit: eval("unit")?,
            display_unit: eval("displayUnit")?,
            quantity: eval("quantity")?,
            state_select: eval("stateSelect")?,
        })
    }
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

fn state_select_of(literal: &str) -> Option<StateSelect> {
    Some(match literal {
        "never" => StateSelect::Never,
        "avoid" => StateSelect::Avoid,
        "default" => StateSelect::Default,
        "prefer" => StateSelect::Prefer,
        "always" => StateSelect::Always,
        _ => return None,
    })
}

/// Inside `when`, an if-equation whose branches assign the same variables becomes one
/// equation per variable with an if-expression (the flat model keeps only assignments-like
/// equations in `when` branches).
fn lower_ifs_in_when(eqs: Vec<Equation>) -> Vec<Equation> {
    let mut out = Vec::new();
    for e in eqs {
        let Equation::If {
            branches,
            else_,
            origin,
        } = e
        else {
            out.push(e);
            continue;
        };
        let branches: Vec<(Expr, Vec<Equation>)> = branches
            .into_iter()
            .map(|(c, b)| (c, lower_ifs_in_when(b)))
            .collect();
        let else_ = lower_ifs_in_when(else_);
        let assigned = |b: &[Equation]| -> Option<Vec<(String, Expr)>> {
            let mut v: Vec<(String, Expr)> = b
                .iter()
                .map(|e| match e {
                    Equation::Equal {
                        lhs: Expr::Var { name, .. },
                        rhs,
                        ..
                    } => Some((name.clone(), rhs.clone())),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            v.sort_by(|a, b| a.0.cmp(&b.0));
            Some(v)
        };
        let else_set = assigned(&else_);
        let sets: Option<Vec<Vec<(String, Expr)>>> =
            branches.iter().map(|(_, b)| assigned(b)).collect();
        let same_vars = |a: &[(String, Expr)], b: &[(String, Expr)]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0)
        };
        match (sets, else_set) {
            (Some(sets), Some(else_set)) if sets.iter().all(|s| same_vars(s, &else_set)) => {
                for (k, (name, else_value)) in else_set.iter().enumerate() {
                    let value = fold::if_expr(
                        branches
                            .iter()
                            .zip(&sets)
                            .map(|((c, _), s)| (c.clone(), s[k].1.clone()))
                            .collect(),
                        else_value.clone(),
                    );
                    out.push(Equation::Equal {
                        lhs: Expr::Var {
                            name: name.clone(),
                            subscripts: Vec::new(),
                        },
                        rhs: value,
                        origin: origin.clone(),
                    });
                }
            }
            _ => out.push(Equation::If {
                branches,
                else_,
                origin,
            }),
        }
    }
    out
}

/// The scalars of a record and of its binding, field by field by name (constants of the
/// record are not constructor inputs, so the binding may lack them).
fn record_field_pairs(lhs: &Val, v: &Val) -> (Vec<Expr>, Vec<Expr>) {
    match (lhs, v) {
        (Val::R(lf), Val::R(rf)) => {
            let mut ls = Vec::new();
            let mut rs = Vec::new();
            for (n, lv) in lf {
                if let Some((_, rv)) = rf.iter().find(|(m, _)| m == n) {
                    ls.extend(lv.scalars());
                    rs.extend(rv.scalars());
                }
            }
            (ls, rs)
        }
        _ => (lhs.scalars(), v.scalars()),
    }
}

/// Element `[i]` of an array-valued call, as produced by the expander.
pub fn is_index_call(e: &Expr) -> bool {
    matches!(e, Expr::Call { func, .. } if func == "[]")
}

/// If `rs` are the outputs `0..n` of one call, in order, that call.
/// A record bound to a call of a function returning it (`R = nullRotation()`), whose
/// fields are outputs of that one call, some of them arrays: the output list (one target
/// per output, arrays as array literals of the fields' variables) and the call.
fn record_fields_of_one_call(lhs: &Val, v: &Val) -> Option<(Vec<Option<Expr>>, Expr)> {
    let (Val::R(lf), Val::R(rf)) = (lhs, v) else {
        return None;
    };
    let mut call: Option<&Expr> = None;
    let mut targets: Vec<Option<Expr>> = Vec::new();
    let mut any_array = false;
    for (n, lv) in lf {
        let (_, rv) = rf.iter().find(|(m, _)| m == n)?;
        let Val::S(Expr::CallOutput { call: c, index }) = rv else {
            return None;
        };
        if call.is_some_and(|first| first != &**c) {
            return None;
        }
        call = Some(c);
        any_array |= matches!(lv, Val::A(_));
        if targets.len() <= *index {
            targets.resize(*index + 1, None);
        }
        targets[*index] = Some(lv.to_expr());
    }
    // all-scalar fields are handled by [`whole_call`]
    Some((targets, call?.clone())).filter(|_| any_array)
}

pub fn whole_call(rs: &[Expr]) -> Option<Expr> {
    let first = match rs.first()? {
        Expr::CallOutput { call, index: 0 } => call,
        _ => return None,
    };
    let all = rs.iter().enumerate().all(
        |(i, e)| matches!(e, Expr::CallOutput { call, index } if *index == i && call == first),
    );
    (all && rs.len() > 1).then(|| (**first).clone())
}

/// The call when `v` (of dimensions `dims`) is exactly its elements in order: every
/// element `v[i, j]` is `[](f(x), i, j)` of one call `f(x)`.
fn whole_call_of_elements(v: &Val, dims: &[usize]) -> Option<Expr> {
    if dims.is_empty() {
        return None;
    }
    let mut call: Option<Expr> = None;
    for idx in index_tuples(dims) {
        let path: Vec<usize> = idx.iter().map(|i| i - 1).collect();
        let Val::S(Expr::Call { func, args }) = v.index_path(&path) else {
            return None;
        };
        let (Some(c), rest) = (args.first(), args.get(1..).unwrap_or_default()) else {
            return None;
        };
        let same_index = func == "[]"
            && rest.len() == idx.len()
            && rest
                .iter()
                .zip(&idx)
                .all(|(e, &i)| matches!(e, Expr::Integer(k) if *k == i as i64));
        if !same_index || call.as_ref().is_some_and(|x| x != c) {
            return None;
        }
        call.get_or_insert_with(|| c.clone());
    }
    call.filter(|c| matches!(c, Expr::Call { func, .. } if func != "[]"))
}

/// Does `e` contain an element of an array-valued call anywhere?
fn contains_index_call(e: &Expr) -> bool {
    let mut found = false;
    crate::walk::visit(e, &mut |x| found |= is_index_call(x));
    found
}

/// `{[](f(x),1), [](f(x),2)}` → `f(x)`.
/// `{x[1], x[2]}` (nested for matrices): the scalar variables of an array as one expression.
pub(crate) fn names_array(base: &str, dims: &[usize], prefix: &mut Vec<usize>) -> Expr {
    match dims.split_first() {
        None => Expr::Var {
            name: format!("{base}{}", format_indices(prefix)),
            subscripts: Vec::new(),
        },
        Some((d, rest)) => Expr::Array(
            (1..=*d)
                .map(|i| {
                    prefix.push(i);
                    let e = names_array(base, rest, prefix);
                    prefix.pop();
                    e
                })
                .collect(),
        ),
    }
}

/// The call itself when a call with a record-valued first output was expanded to the
/// selections of its fields (`{output 1 of f(x)}` for `(rec, y) = f(x)`).
fn called_function(e: Expr) -> Expr {
    fn first_call(e: &Expr) -> Option<&Expr> {
        match e {
            Expr::CallOutput { call, .. } if matches!(**call, Expr::Call { .. }) => Some(call),
            Expr::Array(items) => items.first().and_then(first_call),
            _ => None,
        }
    }
    match &e {
        Expr::Call { .. } => e,
        _ => first_call(&e).cloned().unwrap_or(e),
    }
}

/// The targets of a tuple equation as the function's outputs are laid out: a record output
/// is one output per field (records never reach later stages), an array one output.
fn record_fields_as_targets(v: Val, out: &mut Vec<Option<Expr>>) {
    match v {
        Val::R(fields) => {
            for (_, f) in fields {
                record_fields_as_targets(f, out);
            }
        }
        other => out.push(Some(other.to_expr())),
    }
}

fn strip_index_call(e: Expr) -> Expr {
    match e {
        Expr::Call { func, mut args } if func == "[]" && !args.is_empty() => args.swap_remove(0),
        Expr::Array(items) => {
            let stripped: Vec<Expr> = items.into_iter().map(strip_index_call).collect();
            match stripped.first() {
                Some(f) if stripped.iter().all(|x| x == f) && matches!(f, Expr::Call { .. }) => {
                    f.clone()
                }
                _ => Expr::Array(stripped),
            }
        }
        other => other,
    }
}

/// `a constant`, `a parameter`, `a variable` (for messages).
fn variability_word(v: Option<ast::Variability>) -> &'static str {
    match v {
        Some(ast::Variability::Constant) => "a constant",
        Some(ast::Variability::Parameter) => "a parameter",
        Some(ast::Variability::Discrete) => "a discrete variable",
        None => "a variable",
    }
}

/// `constant` or `parameter` (discrete-time and continuous variables may be connected).
fn fixed_variability(comp: &Comp) -> Option<ast::Variability> {
    comp.tprefixes
        .variability
        .filter(|v| *v != ast::Variability::Discrete)
}

/// `annotation(Evaluate=true)` (or `false`) in a declaration's description (spec 18.3: the
/// parameter's value is to be used in symbolic processing); `None` without the annotation.
pub(crate) fn annotated_evaluate(description: &ast::Description) -> Option<bool> {
    let ann = description.annotation.as_ref()?;
    let b = ann
        .modification
        .find("Evaluate")
        .and_then(|m| m.modification.as_ref())
        .and_then(|m| m.binding.as_ref())?;
    match b.expr.kind {
        ast::ExprKind::Bool(x) => Some(x),
        _ => None,
    }
}

/// An array binding has the declared dimensions (spec 10.1: `Real x[:, 1] = [2, 3]` is
/// illegal, the binding is 1×2). Checked where both shapes are fully known: the binding is
/// an array with as many dimensions as declared (a scalar one is broadcast by `each`).
fn binding_has_declared_shape(v: &Val, dims: &[usize], name: &str, span: Span) -> Res<()> {
    if !matches!(v, Val::A(_)) {
        return Ok(());
    }
    let shape = v.shape();
    if shape.len() != dims.len() || shape == dims {
        return Ok(());
    }
    let show = |d: &[usize]| {
        d.iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    err(
        span,
        format!(
            "the binding of `{name}` has size [{}] but `{name}` is declared with size [{}]",
            show(&shape),
            show(dims)
        ),
    )
}
