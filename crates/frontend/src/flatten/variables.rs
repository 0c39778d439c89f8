//! Variables: the scalar variables of a primitive component with their variability,
//! causality, attributes (`start`, `fixed`, `stateSelect`, ...) and bindings (parameters
//! keep them, other variables get an equation), and bindings of whole records applied
//! field by field. Separate from equations because it works on declarations and
//! modifiers, not on equation sections.

use super::equations::{is_index_call, record_fields_of_one_call, strip_index_call, whole_call};
use super::{origin, Collected};
use crate::ctx::{format_indices, index_tuples, Flattener};
use crate::expand::{qualified, Cx, Val};
use crate::flat::{
    Attributes, Causality, Equation, Expr, ScalarType, StateSelect, Variability, Variable,
};
use crate::inst::*;
use moss_syntax::ast::{self, ClassKind};
use moss_syntax::Span;
use std::rc::Rc;
use std::sync::Arc;

impl<'a> Flattener<'a> {
    /// The value of a record component's binding. An expression whose branches are
    /// records of different sizes (`if i == k then used else good` with array fields of
    /// different lengths) is computed now.
    pub(super) fn expanded_record_binding(&self, b: &BindingMod) -> Res<Val> {
        match self.expand(&b.expr, &b.env, &mut Cx::flat()) {
            Ok(v) => Ok(v),
            Err(e) => self
                .eval_expr(&b.expr, &b.env, &mut Cx::eval())
                .map_err(|_| e),
        }
    }

    /// `R r = expr` for a structured component: field-wise bindings.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_binding(
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

    pub(super) fn emit_vars(
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
