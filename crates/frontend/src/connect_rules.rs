//! Restrictions of connections (specification 9.3) checked on the connection sets:
//! causal variables (`input`/`output`) connect only to causal variables, a set of causal
//! variables has at most one source of its signal (an inside `output` or a public outside
//! `input`), and connected constants and parameters have equal values.
//!
//! Elements whose role is unknown (members of expandable buses, overdetermined parts) are
//! never counted: a rule that rejected legal code would be worse than one that misses an
//! illegal connection.

use crate::connect::Connections;
use crate::flat::{Expr, Origin, Variable};
use crate::inst::{err, Res};
use moss_syntax::ast::{Causality, ConnectorPrefix};
use rustc_hash::FxHashMap as HashMap;

/// The signal role of one scalar variable of a connector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Signal {
    pub causality: Option<Causality>,
    /// The connector is declared protected (a protected outside input is no source).
    pub protected: bool,
}

/// What the connection rules need of a connector besides its leaves: the role of each
/// leaf (same order) and the suffixes of its scalar constants and parameters.
#[derive(Default)]
pub struct Signals {
    pub roles: Vec<Signal>,
    pub fixed: Vec<String>,
    /// The connector is (inside) an element of an expandable connector: its variables
    /// take their causality from the connections (spec 9.1.3), so no rule applies.
    pub in_bus: bool,
}

/// Remember the constants and parameters of two connected connectors that have the same
/// suffix, to compare their values once they are known.
pub fn pair_fixed(
    a: &str,
    fa: &[String],
    b: &str,
    fb: &[String],
    conns: &mut Connections,
    o: &Origin,
) {
    for s in fa.iter().filter(|s| fb.contains(s)) {
        conns
            .fixed_pairs
            .push((format!("{a}{s}"), format!("{b}{s}"), o.clone()));
    }
}

fn causality_word(c: Option<Causality>) -> &'static str {
    match c {
        Some(Causality::Input) => "an input",
        Some(Causality::Output) => "an output",
        None => "neither input nor output",
    }
}

/// Causal variables may only be connected to causal variables (spec 9.3): `input Real x`
/// to a plain `Real x` leaves the signal without a direction on one side.
pub fn check_causal_match(
    a: &str,
    la: &[(String, Option<ConnectorPrefix>)],
    sa: &[Signal],
    b: &str,
    lb: &[(String, Option<ConnectorPrefix>)],
    sb: &[Signal],
    o: &Origin,
) -> Res<()> {
    for (((na, _), ga), ((nb, _), gb)) in la.iter().zip(sa).zip(lb.iter().zip(sb)) {
        if na != nb || ga.causality.is_some() == gb.causality.is_some() {
            continue;
        }
        return err(
            o.span,
            format!(
                "cannot connect `{a}` and `{b}`: `{a}{na}` is {} but `{b}{nb}` is {}",
                causality_word(ga.causality),
                causality_word(gb.causality)
            ),
        )
        .map_err(|d| {
            Box::new(d.with_help(
                "input and output variables may only be connected to input or output variables (spec 9.3); give both the same kind of prefix",
            ))
        });
    }
    Ok(())
}

/// Whether a set element is a source of its signal: an inside output (set by the
/// component) or a public outside input (set from outside the class).
fn is_source(s: &Signal, outside: bool) -> bool {
    match s.causality {
        Some(Causality::Output) => !outside,
        Some(Causality::Input) => outside && !s.protected,
        None => false,
    }
}

impl Connections {
    /// A connection set of causal variables has at most one source of its signal (spec
    /// 9.3). A variable that is in the set both as inside and as outside element is a
    /// connector passed through a level of the hierarchy: it carries the signal of
    /// another source and is not counted.
    pub fn check_signal_sources(&mut self) -> Res<()> {
        let mut sets: HashMap<usize, Vec<usize>> = HashMap::default();
        for i in 0..self.keys.len() {
            if self.kind[i].is_none() && self.signal[i].is_some_and(|s| s.causality.is_some()) {
                let r = self.find(i);
                sets.entry(r).or_default().push(i);
            }
        }
        let mut roots: Vec<usize> = sets.keys().copied().collect();
        roots.sort_unstable();
        for r in roots {
            let members = &sets[&r];
            let mut sources = Vec::new();
            for &i in members {
                let (name, outside) = self.keys[i].clone();
                if !self.signal[i].is_some_and(|s| is_source(&s, outside)) {
                    continue;
                }
                let through = self.index.get(&(name, !outside)).copied();
                if through.is_some_and(|j| self.find(j) == r) {
                    continue;
                }
                sources.push(i);
            }
            if let [first, second, ..] = sources[..] {
                return self.two_sources(first, second);
            }
        }
        Ok(())
    }

    fn two_sources(&self, first: usize, second: usize) -> Res<()> {
        let describe = |i: usize| {
            let (name, outside) = &self.keys[i];
            if *outside {
                format!("`{name}` (an input of the enclosing class)")
            } else {
                format!("`{name}` (an output of a component)")
            }
        };
        err(
            self.origin[second].span,
            format!(
                "the connected signal has two sources, {} and {}",
                describe(first),
                describe(second)
            ),
        )
        .map_err(|d| {
            Box::new(d.with_help(
                "a connection set may contain at most one inside output or public outside input (spec 9.3); remove one of the connections",
            ))
        })
    }
}

/// Connected constants (and parameters whose values are known) must be equal: the
/// connection stands for an assertion that they are (spec 9.3). Values that are not
/// literals after flattening are left to the simulation.
pub fn check_fixed_pairs(pairs: &[(String, String, Origin)], vars: &[Variable]) -> Res<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    let by_name: HashMap<&str, &Variable> = vars.iter().map(|v| (v.name.as_str(), v)).collect();
    let literal = |n: &str| -> Option<f64> {
        match by_name.get(n)?.binding.as_ref()? {
            Expr::Real(x) => Some(*x),
            Expr::Integer(i) => Some(*i as f64),
            _ => None,
        }
    };
    for (a, b, o) in pairs {
        let (Some(x), Some(y)) = (literal(a), literal(b)) else {
            continue;
        };
        if x != y {
            return err(
                o.span,
                format!("connected constants `{a}` = {x} and `{b}` = {y} differ"),
            )
            .map_err(|d| {
                Box::new(d.with_help(
                    "constants and parameters of connected connectors must have the same value (spec 9.3)",
                ))
            });
        }
    }
    Ok(())
}

/// Scalar variables of a connector by role, for the balancing restriction (spec 9.3.1).
#[derive(Default, Clone, Copy)]
struct Balance {
    flows: usize,
    /// Potential variables, an overdetermined one counted as its number of residues.
    potentials: usize,
    /// Stream and causal variables: a connector with none of them (and no flow) is a
    /// "simple" connector, which is unbalanced by design.
    other: usize,
}

impl Balance {
    fn add(&mut self, o: Balance, times: usize) {
        self.flows += o.flows * times;
        self.potentials += o.potentials * times;
        self.other += o.other * times;
    }
}

impl crate::ctx::Flattener<'_> {
    /// A connector class that is neither partial, simple nor expandable has as many flow
    /// variables as potential variables (spec 9.3.1), counting through records and
    /// nested connectors. An unbalanced connector makes every model using it unbalanced,
    /// so it is an error at the declaration of the first component that uses it.
    pub(crate) fn check_balance_of(
        &self,
        node: &crate::inst::NodeRef,
        comp: &crate::inst::Comp,
        class: crate::loader::ClassId,
    ) -> Res<()> {
        if self.is_expandable(node) || self.lib().get(class).def.prefixes.partial {
            return Ok(());
        }
        let Some(b) = self.balance(node, None, false)? else {
            return Ok(());
        };
        let simple = b.flows == 0 && b.other == 0;
        if b.flows == b.potentials || simple {
            return Ok(());
        }
        err(
            comp.span,
            format!(
                "connector `{}` is not balanced: {} flow and {} potential variables",
                self.lk.name_of(class),
                b.flows,
                b.potentials
            ),
        )
        .map_err(|d| {
            Box::new(d.with_help(
                "a connector needs one flow variable for each potential variable (spec 9.3.1); add or remove a flow variable, or declare the extra variables input or output",
            ))
        })
    }

    /// A flow variable of an operator record type is summed with `'+'`, negated with `'-'`
    /// and a set of one starts from `'0'`, so the record must define all three (spec 9.2).
    fn check_flow_operator_record(
        &self,
        class: crate::loader::ClassId,
        c: &crate::inst::Comp,
    ) -> Res<()> {
        let rc = self.lk.follow_short_class(class);
        if self.lk.kind(rc) != moss_syntax::ast::ClassKind::OperatorRecord {
            return Ok(());
        }
        for (op, what) in [("'+'", "addition"), ("'-'", "negation"), ("'0'", "zero")] {
            if self.lk.member(rc, op).is_none() {
                return err(
                    c.span,
                    format!(
                        "the flow variable `{}` is of the operator record `{}`, which defines no {what} operator {op}",
                        c.name,
                        self.lk.name_of(rc)
                    ),
                )
                .map_err(|d| {
                    Box::new(d.with_help(
                        "flow variables of an operator record are summed in connections: define the operators '+', '-' and '0' in the record (spec 9.2)",
                    ))
                });
            }
        }
        Ok(())
    }

    /// The balance of the variables of `node`; `prefix` is a `flow`/`stream` prefix and
    /// `causal` a causality of an enclosing structured component. `None` when some
    /// variable cannot be counted (then nothing is reported).
    fn balance(
        &self,
        node: &crate::inst::NodeRef,
        prefix: Option<ConnectorPrefix>,
        causal: bool,
    ) -> Res<Option<Balance>> {
        use moss_syntax::ast::Variability;
        let mut out = Balance::default();
        for c in &self.elems(node).comps {
            if matches!(
                c.tprefixes.variability,
                Some(Variability::Parameter | Variability::Constant)
            ) || !self.comp_enabled(node, c)?
            {
                continue;
            }
            let ty = self.comp_type(node, c)?;
            let n: usize = self.comp_dims(node, c)?.iter().product();
            if let Some(k) = self.overdetermined_size(node, c, &ty)? {
                out.potentials += k;
                continue;
            }
            let prefix = c.tprefixes.connector.or(prefix);
            let causal = causal || c.tprefixes.causality.or(ty.causality).is_some();
            if let (Some(ConnectorPrefix::Flow), crate::inst::Base::Class(rc)) = (prefix, &ty.base)
            {
                self.check_flow_operator_record(*rc, c)?;
            }
            let one = if ty.base.is_primitive() {
                match prefix {
                    Some(ConnectorPrefix::Flow) => Balance {
                        flows: 1,
                        ..Default::default()
                    },
                    Some(ConnectorPrefix::Stream) => Balance {
                        other: 1,
                        ..Default::default()
                    },
                    None if causal => Balance {
                        other: 1,
                        ..Default::default()
                    },
                    None => Balance {
                        potentials: 1,
                        ..Default::default()
                    },
                }
            } else {
                if n == 0 {
                    continue;
                }
                let rank = self.comp_dims(node, c)?.len();
                let child = self.child_node(node, c, &vec![1; rank])?;
                match self.balance(&child, prefix, causal)? {
                    Some(b) => b,
                    None => return Ok(None),
                }
            };
            out.add(one, n);
        }
        Ok(Some(out))
    }
}
