//! Connection sets (specification chapter 9 and 15): each `connect` pairs the scalar
//! variables of two connectors; set elements are (variable, inside/outside). Potentials in a
//! set are equal, flows sum to zero (outside elements with a minus sign), flow variables of
//! inside connectors that appear in no set are zero, and `inStream`/`actualStream` are
//! expanded from the stream sets.

use crate::flat::{BinaryOp, Equation, Expr, Origin};
use crate::fold;
use crate::inst::{err, Comp, NodeRef, Res};
use moss_syntax::ast::ConnectorPrefix;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::rc::Rc;

/// One connector named in a `connect` (one element of an array of connectors).
pub struct ConnElem {
    pub name: String,
    /// The connector instance (`None` for a primitive connector such as `RealInput`).
    pub node: Option<NodeRef>,
    pub outside: bool,
    pub comp: Rc<Comp>,
    pub parent: NodeRef,
}

type Key = (String, bool);

/// Name of the placeholder call that stands for `cardinality(c)` until all connections are
/// known; its argument is the connector's full name as a String literal.
pub const CARDINALITY: &str = "cardinality";

#[derive(Default)]
pub struct Connections {
    /// Connections involving expandable connectors, resolved after the walk.
    pub deferred: Vec<crate::expandable::Deferred>,
    /// The virtual connection graph of overconstrained connectors (spec 9.4).
    pub graph: crate::overconstrained::Graph,
    pub(crate) keys: Vec<Key>,
    pub(crate) index: HashMap<Key, usize>,
    parent: Vec<usize>,
    pub(crate) kind: Vec<Option<ConnectorPrefix>>,
    /// Connector name of each element (for finding the flow that goes with a stream).
    connector: Vec<String>,
    pub(crate) origin: Vec<Origin>,
    /// Signal role of each element (`None` when unknown: expandable buses, overdetermined
    /// connectors); read by the causality rules of [`crate::connect_rules`].
    pub(crate) signal: Vec<Option<crate::connect_rules::Signal>>,
    /// How many active `connect` equations name each connector (full name, array elements
    /// separately): the value of `cardinality`.
    pub occurrences: HashMap<String, usize>,
    /// Connected constants and parameters (full names, with the `connect`): their values
    /// must agree ([`crate::connect_rules::check_fixed_pairs`]).
    pub fixed_pairs: Vec<(String, String, Origin)>,
}

impl Connections {
    fn key(&mut self, k: Key, kind: Option<ConnectorPrefix>, connector: &str, o: &Origin) -> usize {
        if let Some(i) = self.index.get(&k) {
            return *i;
        }
        let i = self.keys.len();
        self.keys.push(k.clone());
        self.index.insert(k, i);
        self.parent.push(i);
        self.kind.push(kind);
        self.connector.push(connector.to_string());
        self.origin.push(o.clone());
        self.signal.push(None);
        i
    }

    pub(crate) fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    /// The representative of `i`'s set, without path compression (for reading a finished
    /// set of connections).
    fn root(&self, mut i: usize) -> usize {
        while self.parent[i] != i {
            i = self.parent[i];
        }
        i
    }

    /// Whether these connections can be copied under another instance path by renaming
    /// their names alone: no expandable connectors and no overconstrained connection graph
    /// (see [`crate::shared_elements`]).
    pub fn renamable(&self) -> bool {
        self.deferred.is_empty() && self.graph.is_empty()
    }

    /// Add everything of `other`: its sets, `cardinality` counts, deferred expandable
    /// connections and connection graph.
    pub fn absorb(&mut self, mut other: Connections) {
        self.absorb_renamed(&other, &|_| None, &|o| o.clone());
        self.deferred.append(&mut other.deferred);
        self.fixed_pairs.append(&mut other.fixed_pairs);
        let (g, o) = (&mut self.graph, &mut other.graph);
        g.optional.append(&mut o.optional);
        g.branches.append(&mut o.branches);
        g.roots.append(&mut o.roots);
        g.potential_roots.append(&mut o.potential_roots);
    }

    /// Add the sets of `other` with every name renamed (names `rename` leaves alone stay as
    /// they are: connectors outside the renamed instance, such as an `inner` one).
    pub fn absorb_renamed(
        &mut self,
        other: &Connections,
        rename: &dyn Fn(&str) -> Option<String>,
        origin: &dyn Fn(&Origin) -> Origin,
    ) {
        let renamed = |s: &str| rename(s).unwrap_or_else(|| s.to_string());
        let mine: Vec<usize> = (0..other.keys.len())
            .map(|i| {
                let (name, outside) = &other.keys[i];
                let k = self.key(
                    (renamed(name), *outside),
                    other.kind[i],
                    &renamed(&other.connector[i]),
                    &origin(&other.origin[i]),
                );
                if self.signal[k].is_none() {
                    self.signal[k] = other.signal[i];
                }
                k
            })
            .collect();
        for (i, &m) in mine.iter().enumerate() {
            let (rx, ry) = (self.find(m), self.find(mine[other.root(i)]));
            if rx != ry {
                self.parent[rx] = ry;
            }
        }
        for (name, n) in &other.occurrences {
            *self.occurrences.entry(renamed(name)).or_insert(0) += n;
        }
    }

    /// Count one occurrence of the connector `name` in a `connect` equation.
    pub fn count_occurrence(&mut self, name: &str) {
        *self.occurrences.entry(name.to_string()).or_insert(0) += 1;
    }

    pub fn add(
        &mut self,
        a: ConnElem,
        la: Vec<(String, Option<ConnectorPrefix>)>,
        b: ConnElem,
        lb: Vec<(String, Option<ConnectorPrefix>)>,
        o: &Origin,
        signals: Option<(
            Vec<crate::connect_rules::Signal>,
            Vec<crate::connect_rules::Signal>,
        )>,
    ) -> Res<()> {
        if la.len() != lb.len() {
            return err(
                o.span,
                format!(
                    "cannot connect `{}` and `{}`: their connector types differ ({} and {} variables)",
                    a.name,
                    b.name,
                    la.len(),
                    lb.len()
                ),
            );
        }
        for (n, ((sa, ka), (sb, kb))) in la.iter().zip(&lb).enumerate() {
            if sa != sb || ka != kb {
                return err(
                    o.span,
                    format!(
                        "cannot connect `{}` and `{}`: `{}{}` does not match `{}{}`",
                        a.name, b.name, a.name, sa, b.name, sb
                    ),
                );
            }
            let (x, y) = self.union_names(
                (format!("{}{sa}", a.name), a.outside),
                &a.name,
                (format!("{}{sb}", b.name), b.outside),
                &b.name,
                *ka,
                o,
            );
            if let Some((ga, gb)) = &signals {
                // the first role recorded for an element stays
                self.signal[x].get_or_insert(ga[n]);
                self.signal[y].get_or_insert(gb[n]);
            }
        }
        Ok(())
    }

    /// Put two set elements (variable, outside) into the same set; returns their indices.
    pub fn union_names(
        &mut self,
        a: Key,
        conn_a: &str,
        b: Key,
        conn_b: &str,
        kind: Option<ConnectorPrefix>,
        o: &Origin,
    ) -> (usize, usize) {
        let x = self.key(a, kind, conn_a, o);
        let y = self.key(b, kind, conn_b, o);
        let (rx, ry) = (self.find(x), self.find(y));
        if rx != ry {
            self.parent[rx] = ry;
        }
        (x, y)
    }

    /// Whether `(name, inside)` belongs to some set.
    pub fn has_inside(&self, name: &str) -> bool {
        self.index.contains_key(&(name.to_string(), false))
    }

    /// Generate the equations of all sets; returns the equations and the `inStream`
    /// replacements (stream variable of an inside connector → expression).
    pub fn equations(
        &mut self,
        flows_of: &HashMap<String, String>,
    ) -> (Vec<Equation>, HashMap<String, Expr>) {
        let mut sets: Vec<Vec<usize>> = Vec::new();
        let mut set_of: HashMap<usize, usize> = HashMap::default();
        for i in 0..self.keys.len() {
            let r = self.find(i);
            let s = *set_of.entry(r).or_insert_with(|| {
                sets.push(Vec::new());
                sets.len() - 1
            });
            sets[s].push(i);
        }
        let mut eqs = Vec::new();
        let mut instream = HashMap::default();
        for set in sets {
            let kind = self.kind[set[0]];
            let o = self.origin[set[0]].clone();
            let var = |i: usize| Expr::Var {
                name: self.keys[i].0.clone(),
                subscripts: Vec::new(),
            };
            match kind {
                Some(ConnectorPrefix::Flow) => {
                    let terms: Vec<(Expr, bool)> =
                        set.iter().map(|&i| (var(i), self.keys[i].1)).collect();
                    if let Some(s) = signed_sum(terms) {
                        eqs.push(Equation::Equal {
                            lhs: s,
                            rhs: Expr::Integer(0),
                            origin: o,
                        });
                    }
                }
                Some(ConnectorPrefix::Stream) => {
                    eqs.extend(self.stream_set(&set, flows_of, &mut instream));
                }
                None => {
                    // Potentials: drop duplicate names (the same variable seen inside and
                    // outside at different levels is one variable).
                    let mut seen: HashSet<&str> = HashSet::default();
                    let names: Vec<usize> = set
                        .iter()
                        .copied()
                        .filter(|&i| seen.insert(self.keys[i].0.as_str()))
                        .collect();
                    for w in names.windows(2) {
                        eqs.push(Equation::Equal {
                            lhs: var(w[0]),
                            rhs: var(w[1]),
                            origin: self.origin[w[1]].clone(),
                        });
                    }
                }
            }
        }
        (eqs, instream)
    }

    /// Stream connection equations (spec 15.2). For each inside element `i`,
    /// `inStream(i)` is the mixing of what flows in from the other elements; for each
    /// outside element `q` an equation gives its stream variable the mixing of the others.
    /// Outside elements contribute `inStream` of themselves, which is resolved from the set
    /// one level up (where the same variable is an inside element). Two-element sets use
    /// the exact simplifications (no division).
    fn stream_set(
        &self,
        set: &[usize],
        flows_of: &HashMap<String, String>,
        instream: &mut HashMap<String, Expr>,
    ) -> Vec<Equation> {
        let var = |k: usize| Expr::Var {
            name: self.keys[k].0.clone(),
            subscripts: Vec::new(),
        };
        let flow = |k: usize| {
            flows_of
                .get(&self.connector[k])
                .map(|f| Expr::Var {
                    name: f.clone(),
                    subscripts: Vec::new(),
                })
                .unwrap_or(Expr::Integer(0))
        };
        // What member k contributes when it is a source: inside elements their stream
        // variable, outside ones the stream coming from above.
        let value = |k: usize| {
            if self.keys[k].1 {
                Expr::Call {
                    func: "inStream".into(),
                    args: vec![var(k)],
                }
            } else {
                var(k)
            }
        };
        // Its inflow into the connection point: -m for inside, +m for outside elements.
        let inflow = |k: usize| {
            let m = flow(k);
            let m = if self.keys[k].1 {
                m
            } else {
                fold::unary(crate::flat::UnaryOp::Neg, m)
            };
            Expr::Call {
                func: "max".into(),
                args: vec![m, Expr::Real(1e-15)],
            }
        };
        let mix = |others: &[usize]| -> Expr {
            match others {
                [] => Expr::Integer(0),
                [j] => value(*j),
                _ => {
                    let mut num: Option<Expr> = None;
                    let mut den: Option<Expr> = None;
                    for &k in others {
                        let w = inflow(k);
                        let t = fold::binary(BinaryOp::Mul, w.clone(), value(k));
                        num = Some(match num {
                            None => t,
                            Some(n) => fold::binary(BinaryOp::Add, n, t),
                        });
                        den = Some(match den {
                            None => w,
                            Some(d) => fold::binary(BinaryOp::Add, d, w),
                        });
                    }
                    fold::binary(
                        BinaryOp::Div,
                        num.unwrap_or(Expr::Integer(0)),
                        den.unwrap_or(Expr::Integer(1)),
                    )
                }
            }
        };
        let mut eqs = Vec::new();
        for &i in set {
            let others: Vec<usize> = set.iter().copied().filter(|&j| j != i).collect();
            if self.keys[i].1 {
                if others.is_empty() {
                    continue;
                }
                eqs.push(Equation::Equal {
                    lhs: var(i),
                    rhs: mix(&others),
                    origin: self.origin[i].clone(),
                });
            } else {
                let e = if others.is_empty() {
                    var(i)
                } else {
                    mix(&others)
                };
                instream.insert(self.keys[i].0.clone(), e);
            }
        }
        eqs
    }
}

/// Replace `inStream(s)` and `actualStream(s)` in an expression.
pub fn replace_streams(
    e: &mut Expr,
    instream: &HashMap<String, Expr>,
    flows_of_var: &HashMap<String, String>,
) {
    replace_streams_at(e, instream, flows_of_var, 0)
}

/// Deepest connector hierarchy whose `inStream` replacements are resolved through each other.
const MAX_STREAM_LEVELS: usize = 64;

/// [`replace_streams`] `level` hierarchy levels up: the mixing of an inside connector reads
/// `inStream` of the outside connectors of its set (`inStream(hex.port_a1.h_outflow)` for
/// `hex.pipe.port_a`), which the set one level up resolves, so a replacement is itself
/// expanded again. Each step goes up one level, so this ends.
fn replace_streams_at(
    e: &mut Expr,
    instream: &HashMap<String, Expr>,
    flows_of_var: &HashMap<String, String>,
    level: usize,
) {
    match e {
        Expr::Binary {
            op: BinaryOp::Mul,
            lhs,
            rhs,
        } => {
            // `c.m_flow*actualStream(c.h_outflow)` is continuous: `actualStream` jumps only
            // where its flow is zero, so the product needs no event at the switch (spec
            // 15.3 leaves this to the tool). Without this, a flow resting at zero (a closed
            // valve) makes an event at every sign change of its round-off.
            let lhs_smooth = is_actual_stream_of(lhs, rhs, flows_of_var);
            let rhs_smooth = is_actual_stream_of(rhs, lhs, flows_of_var);
            replace_stream_factor(lhs, lhs_smooth, instream, flows_of_var, level);
            replace_stream_factor(rhs, rhs_smooth, instream, flows_of_var, level);
        }
        Expr::Call { func, args }
            if (func == "inStream" || func == "actualStream") && args.len() == 1 =>
        {
            let name = match &args[0] {
                Expr::Var { name, .. } => name.clone(),
                _ => return,
            };
            let mut ins = instream
                .get(&name)
                .cloned()
                .unwrap_or_else(|| args[0].clone());
            if level < MAX_STREAM_LEVELS && instream.contains_key(&name) {
                replace_streams_at(&mut ins, instream, flows_of_var, level + 1);
            }
            if func == "inStream" {
                *e = ins;
            } else {
                let flow = flows_of_var.get(&name).cloned();
                *e = match flow {
                    Some(f) => Expr::If {
                        branches: vec![(
                            fold::binary(
                                BinaryOp::Gt,
                                Expr::Var {
                                    name: f,
                                    subscripts: Vec::new(),
                                },
                                Expr::Integer(0),
                            ),
                            ins,
                        )],
                        else_: Box::new(args[0].clone()),
                    },
                    None => args[0].clone(),
                };
            }
        }
        _ => crate::walk::exprs_mut(e, &mut |x| {
            replace_streams_at(x, instream, flows_of_var, level)
        }),
    }
}

/// Is `e` `actualStream(s)` of a stream variable `s` whose flow variable is `other`?
fn is_actual_stream_of(e: &Expr, other: &Expr, flows_of_var: &HashMap<String, String>) -> bool {
    let (
        Expr::Call { func, args },
        Expr::Var {
            name: flow,
            subscripts,
        },
    ) = (e, other)
    else {
        return false;
    };
    func == "actualStream"
        && subscripts.is_empty()
        && matches!(args.as_slice(), [Expr::Var { name, .. }] if flows_of_var.get(name) == Some(flow))
}

/// One factor of a product: `smooth` marks `actualStream` multiplied by its own flow, whose
/// direction test is then wrapped in `noEvent`.
fn replace_stream_factor(
    e: &mut Expr,
    smooth: bool,
    instream: &HashMap<String, Expr>,
    flows_of_var: &HashMap<String, String>,
    level: usize,
) {
    replace_streams_at(e, instream, flows_of_var, level);
    if !smooth {
        return;
    }
    if let Expr::If { branches, .. } = e {
        for (cond, _) in branches.iter_mut() {
            let c = std::mem::replace(cond, Expr::Boolean(false));
            *cond = Expr::Call {
                func: "noEvent".into(),
                args: vec![c],
            };
        }
    }
}

/// Sets up to this size sum their flows left to right (`a + b - c`, as a user writes it);
/// larger ones as balanced trees, so that a set of 100,000 members (the ground of a long
/// ladder) gives an expression of depth 17, not 100,000, for every recursive pass after.
const CHAIN_SUM_MAX: usize = 32;

/// The sum of `terms`, each subtracted when its flag is set; `None` for no terms.
fn signed_sum(terms: Vec<(Expr, bool)>) -> Option<Expr> {
    if terms.len() <= CHAIN_SUM_MAX {
        let mut sum: Option<Expr> = None;
        for (term, minus) in terms {
            sum = Some(match (sum, minus) {
                (None, false) => term,
                (None, true) => fold::unary(crate::flat::UnaryOp::Neg, term),
                (Some(s), false) => fold::binary(BinaryOp::Add, s, term),
                (Some(s), true) => fold::binary(BinaryOp::Sub, s, term),
            });
        }
        return sum;
    }
    let (minus, plus): (Vec<_>, Vec<_>) = terms.into_iter().partition(|t| t.1);
    let plus = balanced_sum(plus.into_iter().map(|t| t.0).collect());
    let minus = balanced_sum(minus.into_iter().map(|t| t.0).collect());
    match (plus, minus) {
        (Some(p), Some(m)) => Some(fold::binary(BinaryOp::Sub, p, m)),
        (Some(p), None) => Some(p),
        (None, Some(m)) => Some(fold::unary(crate::flat::UnaryOp::Neg, m)),
        (None, None) => None,
    }
}

/// Sum of `terms` as a balanced binary tree (depth log2 of their number).
fn balanced_sum(mut terms: Vec<Expr>) -> Option<Expr> {
    while terms.len() > 1 {
        let mut next = Vec::with_capacity(terms.len().div_ceil(2));
        let mut it = terms.into_iter();
        while let Some(a) = it.next() {
            next.push(match it.next() {
                Some(b) => fold::binary(BinaryOp::Add, a, b),
                None => a,
            });
        }
        terms = next;
    }
    terms.pop()
}
