//! Expandable connectors (spec 9.1.3). Connections that reach into an expandable connector
//! are deferred until the whole model is walked; then
//! - expandable connectors connected to each other form groups sharing their elements,
//! - an element connected somewhere in a group is *present* in every member (created with
//!   the type of what it is connected to if it was not declared),
//! - declared elements that are never connected are removed (only potentially present).

use crate::connect::{ConnElem, Connections};
use crate::ctx::{format_indices, Flattener};
use crate::expand::{Cx, Val};
use crate::flat::{Origin, Variable};
use crate::flatten::Collected;
use crate::inst::*;
use moss_syntax::ast::{self, ClassKind, ConnectorPrefix};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;

/// One side of a deferred connection.
pub enum Side {
    /// An element `rest` (e.g. `speed`, `sub.x`) of the expandable connector `bus`, or the
    /// whole connector when `rest` is empty.
    Bus {
        bus: NodeRef,
        rest: String,
        outside: bool,
    },
    /// Ordinary connector elements.
    Plain(Vec<ConnElem>),
}

pub struct Deferred {
    pub a: Side,
    pub b: Side,
    pub origin: Origin,
}

impl<'a> Flattener<'a> {
    pub fn is_expandable(&self, node: &NodeRef) -> bool {
        self.lk.kind(self.lk.follow_short_class(node.class)) == ClassKind::ExpandableConnector
    }

    /// If `c` reaches into (or names) an expandable connector, the bus side.
    pub fn expandable_side(
        &self,
        c: &ast::ComponentRef,
        env: &Env,
        cx: &mut Cx,
    ) -> Res<Option<Side>> {
        // First through the first elements of arrays flattened as copies: most references
        // are to plain connectors, and creating every element's instance is what costs. A
        // bus reached that way is looked up again through the elements themselves, whose
        // paths name the bus's members.
        match self.expandable_side_with(c, env, cx, true)? {
            BusLookup::Bus(side) => Ok(Some(side)),
            BusLookup::NotBus => Ok(None),
            BusLookup::ThroughStandIn => match self.expandable_side_with(c, env, cx, false)? {
                BusLookup::Bus(side) => Ok(Some(side)),
                _ => Ok(None),
            },
        }
    }

    /// [`Self::expandable_side`], with `stand_ins` through [`Self::lookup_element`].
    fn expandable_side_with(
        &self,
        c: &ast::ComponentRef,
        env: &Env,
        cx: &mut Cx,
        stand_ins: bool,
    ) -> Res<BusLookup> {
        let mut node = env.node.clone();
        let mut outside = false;
        let mut stood_in = false;
        let found = |side: Side, stood_in: bool| {
            if stood_in {
                BusLookup::ThroughStandIn
            } else {
                BusLookup::Bus(side)
            }
        };
        for (k, part) in c.parts.iter().enumerate() {
            let declared_bus = self
                .find_comp(&node, part.name.as_str())
                .and_then(|comp| self.comp_type(&node, &comp).ok())
                .is_some_and(|t| match t.base {
                    Base::Class(c) => {
                        self.lk.kind(self.lk.follow_short_class(c))
                            == ClassKind::ExpandableConnector
                    }
                    _ => false,
                });
            if self.is_expandable(&node) && node.parent.is_some() && !declared_bus {
                let mut rest = String::new();
                for (j, p) in c.parts[k..].iter().enumerate() {
                    if j > 0 {
                        rest.push('.');
                    }
                    rest.push_str(p.name.as_str());
                    if !p.subscripts.is_empty() {
                        let mut idx = Vec::new();
                        for s in &p.subscripts {
                            let ast::Subscript::Expr(e) = s else {
                                return err(
                                    c.span,
                                    "`:` is not supported in connections to expandable connectors",
                                );
                            };
                            idx.push(self.eval_int(e, env, cx)?.max(1) as usize);
                        }
                        rest.push_str(&format_indices(&idx));
                    }
                }
                return Ok(found(
                    Side::Bus {
                        bus: node,
                        rest,
                        outside,
                    },
                    stood_in,
                ));
            }
            let Some(comp) = self.find_comp(&node, part.name.as_str()) else {
                return Ok(BusLookup::NotBus);
            };
            let ty = self.comp_type(&node, &comp)?;
            let Base::Class(cls) = ty.base else {
                return Ok(BusLookup::NotBus);
            };
            let kind = self.lk.kind(self.lk.follow_short_class(cls));
            if k == 0 {
                outside = matches!(kind, ClassKind::Connector | ClassKind::ExpandableConnector);
            }
            let dims = self.comp_dims(&node, &comp)?;
            let mut idx = Vec::new();
            for s in &part.subscripts {
                let ast::Subscript::Expr(e) = s else {
                    return Ok(BusLookup::NotBus);
                };
                // A slice (`c[1:2]`) selects several connectors: not a single bus path.
                match self.eval_expr(e, env, cx)? {
                    Val::S(x) => match crate::fold::as_i64(&x) {
                        Some(i) => idx.push(i.max(1) as usize),
                        None => return err(e.span, "a subscript must be an Integer"),
                    },
                    _ => return Ok(BusLookup::NotBus),
                }
            }
            if idx.len() != dims.len() {
                return Ok(BusLookup::NotBus);
            }
            node = if stand_ins {
                let (child, stands_in) = self.lookup_element(&node, &comp, &idx)?;
                stood_in |= stands_in;
                child
            } else {
                self.child_node(&node, &comp, &idx)?
            };
            if k + 1 == c.parts.len() && self.is_expandable(&node) {
                return Ok(found(
                    Side::Bus {
                        bus: node,
                        rest: String::new(),
                        outside,
                    },
                    stood_in,
                ));
            }
        }
        Ok(BusLookup::NotBus)
    }
}

/// What [`Flattener::expandable_side`] finds along a reference.
enum BusLookup {
    NotBus,
    Bus(Side),
    /// A bus, but reached through a stand-in element: to be looked up again.
    ThroughStandIn,
}

/// The leaves of a bus element: suffix, flow/stream kind and a variable to copy the type
/// from when the element has to be created.
type Template = Vec<(String, Option<ConnectorPrefix>, Option<Variable>)>;

struct Groups {
    parent: HashMap<String, String>,
}

impl Groups {
    fn find(&mut self, x: &str) -> String {
        let mut cur = x.to_string();
        while let Some(p) = self.parent.get(&cur) {
            if *p == cur {
                break;
            }
            cur = p.clone();
        }
        self.parent.insert(x.to_string(), cur.clone());
        cur
    }
    fn union(&mut self, a: &str, b: &str) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(ra, rb);
        }
    }
}

/// Resolve the deferred connections: augment, connect, and drop unconnected declared
/// elements of expandable connectors.
pub fn finish(f: &Flattener, col: &mut Collected) -> Res<()> {
    let mut deferred = std::mem::take(&mut col.connections.deferred);
    let nested = nested_bus_connections(f, &deferred)?;
    deferred.extend(nested);
    if deferred.is_empty() && col.bus_vars.is_empty() {
        return Ok(());
    }
    let mut groups = Groups {
        parent: HashMap::default(),
    };
    let mut buses: HashMap<String, NodeRef> = HashMap::default();
    // Element of a group → its leaves (suffix, kind) and a template variable per leaf.
    let mut present: HashMap<String, BTreeSet<String>> = HashMap::default();
    let mut templates: HashMap<(String, String), Template> = HashMap::default();
    for d in &deferred {
        for s in [&d.a, &d.b] {
            if let Side::Bus { bus, .. } = s {
                groups.find(&bus.path);
                buses.insert(bus.path.clone(), bus.clone());
            }
        }
        if let (
            Side::Bus {
                bus: x, rest: rx, ..
            },
            Side::Bus {
                bus: y, rest: ry, ..
            },
        ) = (&d.a, &d.b)
        {
            if rx.is_empty() && ry.is_empty() {
                groups.union(&x.path, &y.path);
            }
        }
    }
    // Elements made present by connections to ordinary connectors.
    for d in &deferred {
        let pairs = [(&d.a, &d.b), (&d.b, &d.a)];
        for (s, other) in pairs {
            let (Side::Bus { bus, rest, .. }, Side::Plain(elems)) = (s, other) else {
                continue;
            };
            if rest.is_empty() {
                continue;
            }
            let g = groups.find(&bus.path);
            for (k, elem) in elems.iter().enumerate() {
                let element = element_name(f, bus, rest, k, elems.len());
                present
                    .entry(g.clone())
                    .or_default()
                    .insert(element.clone());
                let leaves = f.connector_leaves(elem)?;
                let t = leaves
                    .into_iter()
                    .map(|(suffix, kind)| {
                        let name = format!("{}{suffix}", elem.name);
                        let var = col.variables.iter().find(|v| v.name == name).cloned();
                        (suffix, kind, var)
                    })
                    .collect();
                templates.entry((g.clone(), element)).or_insert(t);
            }
        }
    }
    // Create missing elements in every member of each group.
    let mut bus_paths: Vec<String> = buses.keys().cloned().collect();
    bus_paths.sort();
    let existing: BTreeSet<String> = col.variables.iter().map(|v| v.name.clone()).collect();
    for b in &bus_paths {
        let g = groups.find(b);
        let Some(names) = present.get(&g).cloned() else {
            continue;
        };
        for n in names {
            let Some(t) = templates.get(&(g.clone(), n.clone())) else {
                continue;
            };
            for (suffix, _, var) in t {
                let name = format!("{b}.{n}{suffix}");
                if existing.contains(&name) {
                    continue;
                }
                if let Some(v) = var {
                    let mut v = v.clone();
                    if v.is_flow {
                        // Added flow variables are also one-member inside sets (spec 9.2).
                        col.inside_flows.push(name.clone());
                    }
                    v.name = name;
                    v.binding = None;
                    v.causality = crate::flat::Causality::Internal;
                    v.description = String::new();
                    col.variables.push(v);
                }
            }
        }
    }
    check_inputs_have_a_source(f, &deferred, &mut groups, &buses)?;
    // A signal of a top-level bus that is only connected to inputs comes from outside the
    // model: it is an input of the model (spec 9.1.3: causality follows the connections).
    let mut only_inputs: HashMap<String, bool> = HashMap::default();
    for d in &deferred {
        let ((Side::Bus { bus, rest, .. }, Side::Plain(elems))
        | (Side::Plain(elems), Side::Bus { bus, rest, .. })) = (&d.a, &d.b)
        else {
            continue;
        };
        if bus.parent.as_ref().is_none_or(|p| p.parent.is_some()) || rest.is_empty() {
            continue;
        }
        for (k, elem) in elems.iter().enumerate() {
            let name = format!(
                "{}.{}",
                bus.path,
                element_name(f, bus, rest, k, elems.len())
            );
            let input = elem.node.is_none()
                && !elem.outside
                && f.comp_causality(&elem.parent, &elem.comp) == Some(ast::Causality::Input);
            let entry = only_inputs.entry(name).or_insert(true);
            *entry &= input;
        }
    }
    for v in &mut col.variables {
        if only_inputs.get(&v.name) == Some(&true) {
            v.causality = crate::flat::Causality::Input;
        }
    }
    // Connections.
    for d in &deferred {
        match (&d.a, &d.b) {
            (Side::Bus { bus, rest, outside }, Side::Plain(elems))
            | (Side::Plain(elems), Side::Bus { bus, rest, outside }) => {
                for (k, elem) in elems.iter().enumerate() {
                    let element = element_name(f, bus, rest, k, elems.len());
                    let leaves = f.connector_leaves(elem)?;
                    for (suffix, kind) in leaves {
                        col.connections.add_names(
                            &format!("{}.{element}{suffix}", bus.path),
                            *outside,
                            &format!("{}{suffix}", elem.name),
                            elem.outside,
                            kind,
                            &d.origin,
                        );
                    }
                }
            }
            (
                Side::Bus {
                    bus: x,
                    rest: rx,
                    outside: ox,
                },
                Side::Bus {
                    bus: y,
                    rest: ry,
                    outside: oy,
                },
            ) => {
                if !rx.is_empty() || !ry.is_empty() {
                    return err(
                        d.origin.span,
                        "connecting elements of two expandable connectors is not supported; connect the connectors themselves",
                    );
                }
                let g = groups.find(&x.path);
                for n in present.get(&g).cloned().unwrap_or_default() {
                    let Some(t) = templates.get(&(g.clone(), n.clone())) else {
                        continue;
                    };
                    for (suffix, kind, _) in t {
                        col.connections.add_names(
                            &format!("{}.{n}{suffix}", x.path),
                            *ox,
                            &format!("{}.{n}{suffix}", y.path),
                            *oy,
                            *kind,
                            &d.origin,
                        );
                    }
                }
            }
            (Side::Plain(_), Side::Plain(_)) => {}
        }
    }
    // Declared elements never connected are only potentially present: drop them.
    let mut keep_bus: HashMap<String, BTreeSet<String>> = HashMap::default();
    for b in &bus_paths {
        let g = groups.find(b);
        keep_bus.insert(b.clone(), present.get(&g).cloned().unwrap_or_default());
    }
    let drop: BTreeSet<String> = col
        .bus_vars
        .iter()
        .filter(|(_, (bus, element))| {
            !keep_bus.get(bus).is_some_and(|names| {
                names
                    .iter()
                    .any(|n| n == element || n.starts_with(&format!("{element}[")))
            })
        })
        .map(|(var, _)| var.clone())
        .collect();
    if !drop.is_empty() {
        let used = referenced_names(col);
        if let Some(v) = drop.iter().find(|v| used.contains(*v)) {
            return err(
                col.variables
                    .iter()
                    .find(|x| &x.name == v)
                    .map_or(moss_syntax::Span::DUMMY, |x| x.origin.span),
                format!("`{v}` of an expandable connector is used but never connected"),
            );
        }
        col.variables.retain(|v| !drop.contains(&v.name));
        col.inside_flows.retain(|v| !drop.contains(v));
    }
    Ok(())
}

/// Is `elem` an input of a component inside the model (not a connector of the model
/// itself): what it reads, it reads from the bus.
fn reads_from_the_bus(f: &Flattener, elem: &ConnElem) -> bool {
    elem.node.is_none()
        && !elem.outside
        && f.comp_causality(&elem.parent, &elem.comp) == Some(ast::Causality::Input)
}

/// Spec 9.1.3: a variable that appears as an input in an expandable connector must appear
/// as a non-input in another member of its augmentation set (the connected expandable
/// connectors): a signal that components only read has no source. A set with a bus of the
/// model itself is exempt: there the signal comes from outside (it becomes an input of
/// the model).
fn check_inputs_have_a_source(
    f: &Flattener,
    deferred: &[Deferred],
    groups: &mut Groups,
    buses: &HashMap<String, NodeRef>,
) -> Res<()> {
    let top_level = |b: &NodeRef| b.parent.as_ref().is_some_and(|p| p.parent.is_none());
    let mut open_groups: BTreeSet<String> = BTreeSet::new();
    for b in buses.values() {
        if top_level(b) {
            open_groups.insert(groups.find(&b.path));
        }
    }
    // (group, element) -> the first reader and its connection, or None once a source is seen
    let mut readers: HashMap<(String, String), Option<(String, moss_syntax::Span)>> =
        HashMap::default();
    let mut order = Vec::new();
    for d in deferred {
        let ((Side::Bus { bus, rest, .. }, Side::Plain(elems))
        | (Side::Plain(elems), Side::Bus { bus, rest, .. })) = (&d.a, &d.b)
        else {
            continue;
        };
        if rest.is_empty() {
            continue;
        }
        let g = groups.find(&bus.path);
        if open_groups.contains(&g) {
            continue;
        }
        for (k, elem) in elems.iter().enumerate() {
            let key = (g.clone(), element_name(f, bus, rest, k, elems.len()));
            let reads = reads_from_the_bus(f, elem);
            match readers.get_mut(&key) {
                None => {
                    order.push((key.clone(), bus.path.clone()));
                    let first = reads.then(|| (elem.name.clone(), d.origin.span));
                    readers.insert(key, first);
                }
                Some(r) if !reads => *r = None,
                Some(_) => {}
            }
        }
    }
    for ((g, element), bus) in order {
        if let Some(Some((reader, span))) = readers.get(&(g, element.clone())) {
            return err(
                *span,
                format!(
                    "`{bus}.{element}` is connected only to inputs (`{reader}`): nothing in its expandable connectors provides its value"
                ),
            )
            .map_err(|d| {
                Box::new(d.with_help(
                    "connect an output or a variable without a causality to the signal in one of the connected expandable connectors (spec 9.1.3)",
                ))
            });
        }
    }
    Ok(())
}

/// Two connected expandable connectors connect their expandable elements too (a stack bus
/// with an array of cell buses): the pairs of nested buses, as connections of their own,
/// down to any depth.
fn nested_bus_connections(f: &Flattener, deferred: &[Deferred]) -> Res<Vec<Deferred>> {
    let mut out = Vec::new();
    let mut todo: Vec<(NodeRef, bool, NodeRef, bool, &Origin)> = deferred
        .iter()
        .filter_map(|d| match (&d.a, &d.b) {
            (
                Side::Bus {
                    bus: x,
                    rest: rx,
                    outside: ox,
                },
                Side::Bus {
                    bus: y,
                    rest: ry,
                    outside: oy,
                },
            ) if rx.is_empty() && ry.is_empty() => {
                Some((x.clone(), *ox, y.clone(), *oy, &d.origin))
            }
            _ => None,
        })
        .collect();
    while let Some((x, ox, y, oy, origin)) = todo.pop() {
        for (cx, cy) in nested_bus_pairs(f, &x, &y)? {
            out.push(Deferred {
                a: Side::Bus {
                    bus: cx.clone(),
                    rest: String::new(),
                    outside: ox,
                },
                b: Side::Bus {
                    bus: cy.clone(),
                    rest: String::new(),
                    outside: oy,
                },
                origin: origin.clone(),
            });
            todo.push((cx, ox, cy, oy, origin));
        }
    }
    Ok(out)
}

/// The expandable connectors declared in both `x` and `y` under the same name (element by
/// element for arrays of equal size).
fn nested_bus_pairs(f: &Flattener, x: &NodeRef, y: &NodeRef) -> Res<Vec<(NodeRef, NodeRef)>> {
    let mut pairs = Vec::new();
    for comp in f.elems(x).comps.iter() {
        let Some(other) = f.find_comp(y, &comp.name) else {
            continue;
        };
        if !is_bus_type(f, x, comp) || !is_bus_type(f, y, &other) {
            continue;
        }
        let (dx, dy) = (f.comp_dims(x, comp)?, f.comp_dims(y, &other)?);
        if dx != dy {
            continue;
        }
        for idx in crate::ctx::index_tuples(&dx) {
            pairs.push((f.child_node(x, comp, &idx)?, f.child_node(y, &other, &idx)?));
        }
    }
    Ok(pairs)
}

fn is_bus_type(f: &Flattener, node: &NodeRef, comp: &std::rc::Rc<crate::inst::Comp>) -> bool {
    f.comp_type(node, comp).is_ok_and(|t| match t.base {
        Base::Class(c) => f.lk.kind(f.lk.follow_short_class(c)) == ClassKind::ExpandableConnector,
        _ => false,
    })
}

/// The bus element for element `k` of `count` connected connectors: `ro` for a scalar,
/// `ro[1]`, `ro[2]`, ... when an array of connectors is connected to `bus.ro`.
/// `ro[i,j]` in the order of the element's declared dimensions when the bus declares it as an
/// array of `count` elements (`v[Ns,Np]` connected to a matrix of outputs).
fn element_name(f: &Flattener, bus: &NodeRef, rest: &str, k: usize, count: usize) -> String {
    if count <= 1 || rest.ends_with(']') {
        return rest.to_string();
    }
    let declared = (!rest.contains('.'))
        .then(|| f.find_comp(bus, rest))
        .flatten()
        .and_then(|c| f.comp_dims(bus, &c).ok())
        .filter(|d| d.len() > 1 && d.iter().product::<usize>() == count);
    match declared {
        Some(dims) => format!(
            "{rest}{}",
            format_indices(&crate::ctx::index_tuples(&dims)[k])
        ),
        None => format!("{rest}[{}]", k + 1),
    }
}

fn referenced_names(col: &Collected) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for eq in col.equations.iter().chain(&col.initial_equations) {
        crate::walk::equation_exprs(eq, &mut |x| {
            crate::walk::visit(x, &mut |y| {
                if let crate::flat::Expr::Var { name, .. } = y {
                    out.insert(name.clone());
                }
            })
        });
    }
    out
}

impl Connections {
    /// Connect two scalar variables by name (used for expandable connectors).
    pub fn add_names(
        &mut self,
        a: &str,
        a_outside: bool,
        b: &str,
        b_outside: bool,
        kind: Option<ConnectorPrefix>,
        o: &Origin,
    ) {
        let conn_a = a.rsplit_once('.').map_or(a, |(c, _)| c).to_string();
        let conn_b = b.rsplit_once('.').map_or(b, |(c, _)| c).to_string();
        self.union_names(
            (a.to_string(), a_outside),
            &conn_a,
            (b.to_string(), b_outside),
            &conn_b,
            kind,
            o,
        );
    }
}
