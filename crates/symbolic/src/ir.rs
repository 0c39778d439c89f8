//! Expression IR: hash-consed nodes in one arena, so equal subexpressions share one [`ExprId`]
//! (a DAG). Constructors fold constants and apply cheap algebraic identities, so every pass
//! that builds expressions (differentiation, solving, substitution) gets simplified results
//! for free.
//!
//! Traversals here recurse over expression *nesting* depth only (never over the number of
//! equations or variables); `api::translate` runs on a thread with a large stack so that even
//! very long flattened sums are safe.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// Index of a node in [`Arena`].
pub type ExprId = u32;
/// Index of a variable in `model::Model::vars`.
pub type VarIx = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rel {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Rel {
    /// Does the relation hold for operands that compare as `ord`?
    pub fn holds(self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            Rel::Lt => ord == Less,
            Rel::Le => ord != Greater,
            Rel::Gt => ord == Greater,
            Rel::Ge => ord != Less,
            Rel::Eq => ord == Equal,
            Rel::Ne => ord != Equal,
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            Rel::Lt => "<",
            Rel::Le => "<=",
            Rel::Gt => ">",
            Rel::Ge => ">=",
            Rel::Eq => "==",
            Rel::Ne => "<>",
        }
    }
}

/// One expression node. Children are [`ExprId`]s of the same arena.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// f64 bit pattern (so the node can be hashed).
    Const(u64),
    Str(Arc<str>),
    Var(VarIx),
    Pre(VarIx),
    Time,
    Neg(ExprId),
    Not(ExprId),
    Add(ExprId, ExprId),
    Sub(ExprId, ExprId),
    Mul(ExprId, ExprId),
    Div(ExprId, ExprId),
    Pow(ExprId, ExprId),
    And(ExprId, ExprId),
    Or(ExprId, ExprId),
    /// A relation; `event = true` when it generates events (outside `noEvent`/`smooth`, with
    /// continuous operands). Event relations are *inputs* for sorting.
    Rel {
        op: Rel,
        lhs: ExprId,
        rhs: ExprId,
        event: bool,
    },
    If(ExprId, ExprId, ExprId),
    Call(Arc<str>, Box<[ExprId]>),
    Array(Box<[ExprId]>),
    CallOutput(ExprId, u32),
    Initial,
    Terminal,
    /// `sample(start, interval)` by index into the program's sample list.
    Sample(u32),
}

/// Pseudo variable index under which differentiation leaves see `time`.
pub const TIME: VarIx = VarIx::MAX;

/// Hash maps keyed by small, not attacker-controlled keys (names, expression ids).
pub type FxMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// The arena's hash of a node (its hash-consing key).
fn node_hash(n: &Node) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    n.hash(&mut h);
    h.finish()
}

/// The expression arena with hash-consing.
#[derive(Default, Clone)]
pub struct Arena {
    nodes: Vec<Node>,
    /// Hash-consing table: ids of `nodes` by [`node_hash`] (each node is stored once, in
    /// `nodes`; the table holds only ids).
    index: hashbrown::HashTable<ExprId>,
    /// Scratch stamps for visited-set traversals (generation counter avoids clearing).
    stamp: Vec<u32>,
    /// User function -> (derivative function, which inputs get a derivative argument), from
    /// `derivative` annotations; used by every differentiation.
    pub fder: Arc<HashMap<String, (String, Vec<bool>)>>,
    /// For the functions of `fder`: the derivative output of each output (`None`: not Real),
    /// for the derivative of output `i` of a multi-output call.
    pub fder_outputs: Arc<HashMap<String, Vec<Option<u32>>>>,
    /// Derivative function (a value of `fder`) -> how many of its inputs are the original
    /// function's (the rest are derivative directions, in which it is linear).
    pub direction_args: Arc<HashMap<String, usize>>,
    /// Functions of `fder` whose generated derivative froze some inputs
    /// ([`crate::autodiff`]): per input, whether the call's derivative needs that argument
    /// to have a zero derivative (otherwise differentiation fails).
    pub fder_zero_required: Arc<HashMap<String, Vec<bool>>>,
    /// Why the functions that [`crate::autodiff`] could not differentiate have no
    /// derivative (see [`Arena::explain`]).
    pub fder_failures: Arc<HashMap<String, String>>,
    /// Derivative functions generated from algorithms ([`crate::autodiff`]); those called
    /// by the final program are added to its functions.
    pub generated: Arc<std::collections::BTreeMap<String, moss_frontend::flat::Function>>,
    /// User function -> the inverses its `inverse` annotations offer (see
    /// [`crate::solve`]: an equation solved for an input of a call uses them).
    pub finv: Arc<HashMap<String, Vec<InverseFn>>>,
    /// Simple functions that keep their calls through index reduction (for their
    /// `derivative` annotations) but are inlined after it; see [`crate::inline`].
    pub late_inline: Arc<std::collections::BTreeMap<String, moss_frontend::flat::Function>>,
    /// Call of a `late_inline` function -> its inlined value. The incidence of the call is
    /// that of the value (`state1({p, pder}, t)` reads only `p`), so matching and index
    /// reduction see the real dependencies while differentiation uses the annotation.
    structure_of: FxMap<ExprId, ExprId>,
    generation: u32,
}

/// An inverse from an `inverse` annotation: for `y = f(.., x, ..)` solved for the input
/// `x` (argument `input`), `x = function(args)`.
#[derive(Clone, Debug, PartialEq)]
pub struct InverseFn {
    pub input: usize,
    pub function: String,
    pub args: Vec<InverseArg>,
}

/// An argument of an [`InverseFn`] call: an argument of the original call, or its value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InverseArg {
    Input(usize),
    Output,
}

/// Replacement of a call `f(args)` by [`Arena::rewrite_calls`] (`None` keeps the call).
pub type CallRewrite<'a> = dyn FnMut(&mut Arena, &str, &[ExprId]) -> Option<ExprId> + 'a;

/// Scalar built-ins whose value is an integer-valued step function of their arguments.
pub const STEP_FUNCTIONS: &[&str] = &["div", "mod", "rem", "ceil", "floor", "integer", "Integer"];

/// The folded sum or difference `r` of the constants `x` and `y`, exactly zero when it is
/// within rounding of their magnitudes: `1 + cos(2*pi/3) + cos(4*pi/3)` folds to -2.2e-16,
/// and a coefficient of that size, divided by, scales a variable by 2^53.
fn cancelled(r: f64, x: f64, y: f64) -> f64 {
    if r != 0.0 && r.abs() <= 4.0 * f64::EPSILON * (x.abs() + y.abs()) {
        0.0
    } else {
        r
    }
}

impl Arena {
    pub fn new() -> Arena {
        Arena::default()
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn node(&self, e: ExprId) -> &Node {
        &self.nodes[e as usize]
    }

    /// Intern a node without simplification.
    pub fn intern(&mut self, n: Node) -> ExprId {
        let hash = node_hash(&n);
        let Arena { nodes, index, .. } = self;
        if let Some(&id) = index.find(hash, |&id| nodes[id as usize] == n) {
            return id;
        }
        let id = nodes.len() as ExprId;
        nodes.push(n);
        index.insert_unique(hash, id, |&i| node_hash(&nodes[i as usize]));
        id
    }

    pub fn num(&mut self, v: f64) -> ExprId {
        // normalise -0.0 so that hashing treats zeros alike
        let v = if v == 0.0 { 0.0 } else { v };
        self.intern(Node::Const(v.to_bits()))
    }

    pub fn zero(&mut self) -> ExprId {
        self.num(0.0)
    }

    pub fn one(&mut self) -> ExprId {
        self.num(1.0)
    }

    pub fn var(&mut self, v: VarIx) -> ExprId {
        self.intern(Node::Var(v))
    }

    pub fn as_const(&self, e: ExprId) -> Option<f64> {
        match self.node(e) {
            Node::Const(b) => Some(f64::from_bits(*b)),
            _ => None,
        }
    }

    fn is_num(&self, e: ExprId, v: f64) -> bool {
        self.as_const(e) == Some(v)
    }

    pub fn neg(&mut self, a: ExprId) -> ExprId {
        match self.node(a).clone() {
            Node::Const(_) => {
                let v = -self.as_const(a).unwrap_or(0.0);
                self.num(v)
            }
            Node::Neg(x) => x,
            Node::Sub(x, y) => self.sub(y, x),
            _ => self.intern(Node::Neg(a)),
        }
    }

    /// The text of a string literal.
    pub fn as_str(&self, e: ExprId) -> Option<&str> {
        match self.node(e) {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn str(&mut self, s: &str) -> ExprId {
        self.intern(Node::Str(Arc::from(s)))
    }

    pub fn add(&mut self, a: ExprId, b: ExprId) -> ExprId {
        if let (Some(x), Some(y)) = (self.as_str(a), self.as_str(b)) {
            let joined = format!("{x}{y}");
            return self.str(&joined);
        }
        match (self.as_const(a), self.as_const(b)) {
            (Some(x), Some(y)) => return self.num(cancelled(x + y, x, y)),
            (Some(0.0), None) => return b,
            (None, Some(0.0)) => return a,
            _ => {}
        }
        if let Node::Neg(nb) = *self.node(b) {
            return self.sub(a, nb);
        }
        if let Node::Neg(na) = *self.node(a) {
            return self.sub(b, na);
        }
        self.intern(Node::Add(a, b))
    }

    pub fn sub(&mut self, a: ExprId, b: ExprId) -> ExprId {
        if a == b {
            return self.zero();
        }
        match (self.as_const(a), self.as_const(b)) {
            (Some(x), Some(y)) => return self.num(cancelled(x - y, x, y)),
            (Some(0.0), None) => return self.neg(b),
            (None, Some(0.0)) => return a,
            _ => {}
        }
        if let Node::Neg(nb) = *self.node(b) {
            return self.add(a, nb);
        }
        self.intern(Node::Sub(a, b))
    }

    pub fn mul(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_const(a), self.as_const(b)) {
            (Some(x), Some(y)) => return self.num(x * y),
            (Some(0.0), _) => return a,
            (_, Some(0.0)) => return b,
            (Some(1.0), _) => return b,
            (_, Some(1.0)) => return a,
            (Some(-1.0), _) => return self.neg(b),
            (_, Some(-1.0)) => return self.neg(a),
            _ => {}
        }
        match (self.node(a).clone(), self.node(b).clone()) {
            (Node::Neg(x), Node::Neg(y)) => self.mul(x, y),
            (Node::Neg(x), _) => {
                let m = self.mul(x, b);
                self.neg(m)
            }
            (_, Node::Neg(y)) => {
                let m = self.mul(a, y);
                self.neg(m)
            }
            _ => self.intern(Node::Mul(a, b)),
        }
    }

    pub fn div(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_const(a), self.as_const(b)) {
            (Some(x), Some(y)) if y != 0.0 => return self.num(x / y),
            (Some(0.0), _) => return a,
            (_, Some(1.0)) => return a,
            (_, Some(-1.0)) => return self.neg(a),
            _ => {}
        }
        if a == b {
            return self.one();
        }
        match (self.node(a).clone(), self.node(b).clone()) {
            (Node::Neg(x), Node::Neg(y)) => self.div(x, y),
            (Node::Neg(x), _) => {
                let d = self.div(x, b);
                self.neg(d)
            }
            (_, Node::Neg(y)) => {
                let d = self.div(a, y);
                self.neg(d)
            }
            _ => self.intern(Node::Div(a, b)),
        }
    }

    pub fn pow(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_const(a), self.as_const(b)) {
            (Some(x), Some(y)) => return self.num(x.powf(y)),
            (_, Some(1.0)) => return a,
            (_, Some(0.0)) => return self.one(),
            _ => {}
        }
        self.intern(Node::Pow(a, b))
    }

    pub fn not(&mut self, a: ExprId) -> ExprId {
        match self.node(a).clone() {
            Node::Const(_) => {
                let v = self.as_const(a).unwrap_or(0.0);
                self.num(if v == 0.0 { 1.0 } else { 0.0 })
            }
            Node::Not(x) => x,
            _ => self.intern(Node::Not(a)),
        }
    }

    pub fn and(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_const(a), self.as_const(b)) {
            (Some(x), _) => return if x == 0.0 { a } else { b },
            (_, Some(y)) => return if y == 0.0 { b } else { a },
            _ => {}
        }
        self.intern(Node::And(a, b))
    }

    pub fn or(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_const(a), self.as_const(b)) {
            (Some(x), _) => return if x != 0.0 { a } else { b },
            (_, Some(y)) => return if y != 0.0 { b } else { a },
            _ => {}
        }
        self.intern(Node::Or(a, b))
    }

    pub fn rel(&mut self, op: Rel, lhs: ExprId, rhs: ExprId, event: bool) -> ExprId {
        if let (Some(x), Some(y)) = (self.as_str(lhs), self.as_str(rhs)) {
            let r = op.holds(x.cmp(y));
            return self.num(if r { 1.0 } else { 0.0 });
        }
        if let (Some(x), Some(y)) = (self.as_const(lhs), self.as_const(rhs)) {
            let r = match op {
                Rel::Lt => x < y,
                Rel::Le => x <= y,
                Rel::Gt => x > y,
                Rel::Ge => x >= y,
                Rel::Eq => x == y,
                Rel::Ne => x != y,
            };
            return self.num(if r { 1.0 } else { 0.0 });
        }
        self.intern(Node::Rel {
            op,
            lhs,
            rhs,
            event,
        })
    }

    pub fn if_(&mut self, c: ExprId, a: ExprId, b: ExprId) -> ExprId {
        if let Some(x) = self.as_const(c) {
            return if x != 0.0 { a } else { b };
        }
        if a == b {
            return a;
        }
        self.intern(Node::If(c, a, b))
    }

    pub fn call(&mut self, f: &str, args: Vec<ExprId>) -> ExprId {
        if let Some(v) = self.fold_call(f, &args) {
            return self.num(v);
        }
        if let Some(e) = self.fold_string_call(f, &args) {
            return e;
        }
        if let Some(e) = self.expand_array_reduction(f, &args) {
            return e;
        }
        if self.late_inline.contains_key(f) {
            let id = self.intern(Node::Call(Arc::from(f), args.clone().into_boxed_slice()));
            if !self.structure_of.contains_key(&id) {
                let late = self.late_inline.clone();
                if let Some(x) = crate::inline::inline_call(self, &late, f, &args) {
                    self.structure_of.insert(id, x);
                }
            }
            return id;
        }
        self.intern(Node::Call(Arc::from(f), args.into_boxed_slice()))
    }

    /// The inlined value of a call of a late-inlined function (see `late_inline`).
    pub fn inlined_value(&self, call: ExprId) -> Option<ExprId> {
        self.structure_of.get(&call).copied()
    }

    /// `sum`, `product`, `min`, `max`, `scalar` of a (scalarized) array literal become scalar
    /// expressions, so that solving and differentiation see through them.
    fn expand_array_reduction(&mut self, f: &str, args: &[ExprId]) -> Option<ExprId> {
        let [arg] = args else { return None };
        let Node::Array(items) = self.node(*arg).clone() else {
            return None;
        };
        let (first, rest) = items.split_first()?;
        let mut acc = *first;
        for &x in rest {
            acc = match f {
                "sum" => self.add(acc, x),
                "product" => self.mul(acc, x),
                "min" | "max" => self.call(f, vec![acc, x]),
                _ => return None,
            };
        }
        match f {
            "sum" | "product" | "min" | "max" => Some(acc),
            "scalar" if rest.is_empty() => Some(acc),
            _ => None,
        }
    }

    /// Constant folding of scalar built-ins with constant arguments.
    /// String functions of the MSL (`Modelica.Utilities.Strings`) on literal arguments, so
    /// that String parameters used in structural choices (`if substring(group, 1, 1) == "D"`)
    /// fold away before the numeric program is built.
    fn fold_string_call(&mut self, f: &str, args: &[ExprId]) -> Option<ExprId> {
        let f = f.strip_prefix("Modelica.Utilities.Strings.")?;
        let text = self.as_str(*args.first()?)?.to_string();
        let chars: Vec<char> = text.chars().collect();
        let int_arg = |a: &Arena, i: usize| -> Option<i64> {
            let x = a.as_const(*args.get(i)?)?;
            (x.fract() == 0.0).then_some(x as i64)
        };
        match (f, args.len()) {
            ("length", 1) => Some(self.num(chars.len() as f64)),
            ("isEmpty", 1) => {
                let empty = text.trim().is_empty();
                Some(self.num(if empty { 1.0 } else { 0.0 }))
            }
            ("substring", 3) => {
                let (i, j) = (int_arg(self, 1)?, int_arg(self, 2)?);
                // out-of-range indices are a run-time error of the function: do not fold
                if i < 1 || j < i || j as usize > chars.len() {
                    return None;
                }
                let part: String = chars[(i - 1) as usize..j as usize].iter().collect();
                Some(self.str(&part))
            }
            ("isEqual", 2) | ("isEqual", 3) => {
                let other = self.as_str(args[1])?.to_string();
                let case_sensitive = match args.get(2) {
                    Some(&c) => self.as_const(c)? != 0.0,
                    None => true,
                };
                let equal = if case_sensitive {
                    text == other
                } else {
                    text.to_lowercase() == other.to_lowercase()
                };
                Some(self.num(if equal { 1.0 } else { 0.0 }))
            }
            _ => None,
        }
    }

    fn fold_call(&self, f: &str, args: &[ExprId]) -> Option<f64> {
        let vals: Option<Vec<f64>> = args.iter().map(|&a| self.as_const(a)).collect();
        let v = vals?;
        let one = |g: fn(f64) -> f64| v.first().map(|&x| g(x));
        match (f, v.len()) {
            ("sin", 1) => one(f64::sin),
            ("cos", 1) => one(f64::cos),
            ("tan", 1) => one(f64::tan),
            ("asin", 1) => one(f64::asin),
            ("acos", 1) => one(f64::acos),
            ("atan", 1) => one(f64::atan),
            ("sinh", 1) => one(f64::sinh),
            ("cosh", 1) => one(f64::cosh),
            ("tanh", 1) => one(f64::tanh),
            ("exp", 1) => one(f64::exp),
            ("log", 1) if v[0] > 0.0 => one(f64::ln),
            ("log10", 1) if v[0] > 0.0 => one(f64::log10),
            ("sqrt", 1) if v[0] >= 0.0 => one(f64::sqrt),
            ("abs", 1) => one(f64::abs),
            ("sign", 1) => Some(if v[0] > 0.0 {
                1.0
            } else if v[0] < 0.0 {
                -1.0
            } else {
                0.0
            }),
            ("atan2", 2) => Some(v[0].atan2(v[1])),
            ("min", 2) => Some(v[0].min(v[1])),
            ("max", 2) => Some(v[0].max(v[1])),
            ("floor", 1) | ("integer", 1) | ("Integer", 1) => one(f64::floor),
            ("ceil", 1) => one(f64::ceil),
            ("div", 2) if v[1] != 0.0 => Some((v[0] / v[1]).trunc()),
            ("mod", 2) if v[1] != 0.0 => Some(v[0] - (v[0] / v[1]).floor() * v[1]),
            ("rem", 2) if v[1] != 0.0 => Some(v[0] - (v[0] / v[1]).trunc() * v[1]),
            ("Real", 1) => Some(v[0]),
            _ => None,
        }
    }

    /// Start a visited-set traversal; returns the generation to compare stamps with.
    fn next_generation(&mut self) -> u32 {
        if self.stamp.len() < self.nodes.len() {
            self.stamp.resize(self.nodes.len(), 0);
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.generation = 1;
        }
        self.generation
    }

    /// Appends the variables occurring in `e` to `out` (sorted, each once among those
    /// appended; what `out` held before is left alone, so that callers gathering the
    /// variables of many expressions into one vector stay linear), skipping `pre(...)`; when
    /// `skip_event_rel`, operands of event-generating relations are skipped too (they are
    /// inputs for sorting).
    pub fn vars_of(&mut self, e: ExprId, skip_event_rel: bool, out: &mut Vec<VarIx>) {
        self.gather(e, out, |n| match n {
            Node::Var(v) => Leaf::Take(*v),
            Node::Rel { event: true, .. } if skip_event_rel => Leaf::Prune,
            _ => Leaf::Descend,
        });
    }

    /// Appends the variables `v` of every `pre(v)` occurring in `e` to `out` (relation
    /// operands included), each once among those appended.
    pub fn pre_vars_of(&mut self, e: ExprId, out: &mut Vec<VarIx>) {
        self.gather(e, out, |n| match n {
            Node::Pre(v) => Leaf::Take(*v),
            _ => Leaf::Descend,
        });
    }

    /// Appends what `pick` takes from the nodes of `e` to `out`, each node visited once
    /// (through the structure of calls that have one), and sorts what it appended; what
    /// `out` held before is left alone, so gathering over many expressions stays linear.
    fn gather(&mut self, e: ExprId, out: &mut Vec<VarIx>, pick: impl Fn(&Node) -> Leaf) {
        let start = out.len();
        let gen = self.next_generation();
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            if self.stamp[x as usize] == gen {
                continue;
            }
            self.stamp[x as usize] = gen;
            let node = &self.nodes[x as usize];
            match pick(node) {
                Leaf::Take(v) => out.push(v),
                Leaf::Prune => {}
                Leaf::Descend => match node {
                    Node::Call(..) if self.structure_of.contains_key(&x) => {
                        stack.push(self.structure_of[&x]);
                    }
                    n => push_children(n, &mut stack),
                },
            }
        }
        // each node is visited once, so a variable appears once among the appended ones
        out[start..].sort_unstable();
    }

    /// Size of `e` written out as a tree (as program expressions are), saturating at `cap`;
    /// shared subexpressions count once per use.
    pub fn tree_size(&self, e: ExprId, cap: usize, memo: &mut HashMap<ExprId, usize>) -> usize {
        self.tree_size_in(e, cap, memo, &mut Vec::new())
    }

    /// [`Arena::tree_size`] with the children of the nodes on the path in `pending` (one
    /// buffer for the whole walk: the tangent programs of large models have millions of
    /// nodes).
    fn tree_size_in(
        &self,
        e: ExprId,
        cap: usize,
        memo: &mut HashMap<ExprId, usize>,
        pending: &mut Vec<ExprId>,
    ) -> usize {
        if let Some(&s) = memo.get(&e) {
            return s;
        }
        let first = pending.len();
        push_children(self.node(e), pending);
        let mut total = 1usize;
        for i in first..pending.len() {
            total = total.saturating_add(self.tree_size_in(pending[i], cap, memo, pending));
            if total >= cap {
                total = cap;
                break;
            }
        }
        pending.truncate(first);
        memo.insert(e, total);
        total
    }

    /// Every node reachable from `e` (each once), for scans like "contains time".
    pub fn any_node(&mut self, e: ExprId, pred: &mut dyn FnMut(&Node) -> bool) -> bool {
        let gen = self.next_generation();
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            if self.stamp[x as usize] == gen {
                continue;
            }
            self.stamp[x as usize] = gen;
            let n = &self.nodes[x as usize];
            if pred(n) {
                return true;
            }
            push_children(n, &mut stack);
        }
        false
    }

    /// Whether `e`, written out as a tree (every shared subexpression once per use, as the
    /// emitted code evaluates it), has more than `limit` nodes. Linear in the DAG.
    pub fn tree_size_exceeds(&self, e: ExprId, limit: usize) -> bool {
        let mut size: HashMap<ExprId, usize> = HashMap::default();
        let mut stack = vec![(e, false)];
        let mut kids = Vec::new();
        while let Some((x, children_done)) = stack.pop() {
            if size.contains_key(&x) {
                continue;
            }
            kids.clear();
            push_children(&self.nodes[x as usize], &mut kids);
            if children_done {
                let s = kids
                    .iter()
                    .fold(1usize, |acc, k| {
                        acc.saturating_add(size.get(k).copied().unwrap_or(0))
                    })
                    .min(limit.saturating_add(1));
                size.insert(x, s);
            } else {
                stack.push((x, true));
                stack.extend(
                    kids.iter()
                        .filter(|k| !size.contains_key(k))
                        .map(|&k| (k, false)),
                );
            }
        }
        size.get(&e).is_some_and(|&s| s > limit)
    }

    /// Does `e` depend on any variable in `set` (a membership test), ignoring operands of
    /// event relations (frozen inputs) when `skip_event_rel`?
    pub fn depends_on(
        &mut self,
        e: ExprId,
        set: &dyn Fn(VarIx) -> bool,
        skip_event_rel: bool,
    ) -> bool {
        let mut vs = Vec::new();
        self.vars_of(e, skip_event_rel, &mut vs);
        vs.into_iter().any(set)
    }

    /// Rebuild `e` bottom-up with `f` deciding replacements of leaves (Var/Pre). Event
    /// relations are left untouched when `keep_event_rel` (their operands are inputs).
    pub fn substitute(
        &mut self,
        e: ExprId,
        f: &mut dyn FnMut(&mut Arena, &Node) -> Option<ExprId>,
        keep_event_rel: bool,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> ExprId {
        self.rebuild(e, f, &mut None, keep_event_rel, memo)
    }

    /// Rebuild `e` bottom-up, replacing a call `f(args)` (arguments already rebuilt) by
    /// `on_call(f, args)` where that gives a value.
    pub fn rewrite_calls(
        &mut self,
        e: ExprId,
        on_call: &mut CallRewrite<'_>,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> ExprId {
        self.rebuild(e, &mut |_, _| None, &mut Some(on_call), false, memo)
    }

    fn rebuild(
        &mut self,
        e: ExprId,
        f: &mut dyn FnMut(&mut Arena, &Node) -> Option<ExprId>,
        on_call: &mut Option<&mut CallRewrite<'_>>,
        keep_event_rel: bool,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> ExprId {
        if let Some(&r) = memo.get(&e) {
            return r;
        }
        let n = self.node(e).clone();
        let r = match &n {
            Node::Var(_) | Node::Pre(_) => f(self, &n).unwrap_or(e),
            Node::Const(_) | Node::Str(_) | Node::Time | Node::Initial | Node::Terminal => e,
            Node::Sample(_) => e,
            Node::Rel { event: true, .. } if keep_event_rel => e,
            _ => {
                let mut sub =
                    |a: &mut Arena, x: ExprId| a.rebuild(x, f, on_call, keep_event_rel, memo);
                match n {
                    Node::Neg(a) => {
                        let a = sub(self, a);
                        self.neg(a)
                    }
                    Node::Not(a) => {
                        let a = sub(self, a);
                        self.not(a)
                    }
                    Node::Add(a, b) => {
                        let (a, b) = (sub(self, a), sub(self, b));
                        self.add(a, b)
                    }
                    Node::Sub(a, b) => {
                        let (a, b) = (sub(self, a), sub(self, b));
                        self.sub(a, b)
                    }
                    Node::Mul(a, b) => {
                        let (a, b) = (sub(self, a), sub(self, b));
                        self.mul(a, b)
                    }
                    Node::Div(a, b) => {
                        let (a, b) = (sub(self, a), sub(self, b));
                        self.div(a, b)
                    }
                    Node::Pow(a, b) => {
                        let (a, b) = (sub(self, a), sub(self, b));
                        self.pow(a, b)
                    }
                    Node::And(a, b) => {
                        let (a, b) = (sub(self, a), sub(self, b));
                        self.and(a, b)
                    }
                    Node::Or(a, b) => {
                        let (a, b) = (sub(self, a), sub(self, b));
                        self.or(a, b)
                    }
                    Node::Rel {
                        op,
                        lhs,
                        rhs,
                        event,
                    } => {
                        let (a, b) = (sub(self, lhs), sub(self, rhs));
                        self.rel(op, a, b, event)
                    }
                    Node::If(c, a, b) => {
                        let (c, a, b) = (sub(self, c), sub(self, a), sub(self, b));
                        self.if_(c, a, b)
                    }
                    Node::Call(name, args) => {
                        let args: Vec<ExprId> = args.iter().map(|&x| sub(self, x)).collect();
                        match on_call.as_deref_mut().and_then(|g| g(self, &name, &args)) {
                            Some(r) => r,
                            None => self.call(&name, args),
                        }
                    }
                    Node::Array(items) => {
                        let items: Vec<ExprId> = items.iter().map(|&x| sub(self, x)).collect();
                        self.intern(Node::Array(items.into_boxed_slice()))
                    }
                    Node::CallOutput(c, i) => {
                        let c = sub(self, c);
                        self.intern(Node::CallOutput(c, i))
                    }
                    _ => e,
                }
            }
        };
        memo.insert(e, r);
        r
    }

    /// Partial derivative of `e` w.r.t. variable `v` (other variables, `pre` and event
    /// relations are constants). `Err` names a function without a usable derivative.
    pub fn diff_var(
        &mut self,
        e: ExprId,
        v: VarIx,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> Result<ExprId, DiffError> {
        let mut dv = |a: &mut Arena, x: VarIx| {
            if x == v {
                Some(a.one())
            } else {
                None
            }
        };
        let fder = self.fder.clone();
        self.diff(e, &mut dv, &fder, memo)
    }

    /// Generic forward-mode differentiation: `leaf(var)` gives d var (None = 0).
    /// `fder` maps a user function name to its derivative function and input mask
    /// (true = input gets a derivative argument).
    pub fn diff(
        &mut self,
        e: ExprId,
        leaf: &mut dyn FnMut(&mut Arena, VarIx) -> Option<ExprId>,
        fder: &HashMap<String, (String, Vec<bool>)>,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> Result<ExprId, DiffError> {
        if let Some(&r) = memo.get(&e) {
            return Ok(r);
        }
        let n = self.node(e).clone();
        let r = match n {
            Node::Var(x) => match leaf(self, x) {
                Some(d) => d,
                None => self.zero(),
            },
            // the leaf callback sees `time` as the variable index `TIME`
            Node::Time => match leaf(self, TIME) {
                Some(d) => d,
                None => self.zero(),
            },
            Node::Const(_)
            | Node::Str(_)
            | Node::Pre(_)
            | Node::Not(_)
            | Node::And(..)
            | Node::Or(..)
            | Node::Rel { .. }
            | Node::Initial
            | Node::Terminal
            | Node::Sample(_) => self.zero(),
            Node::Neg(a) => {
                let da = self.diff(a, leaf, fder, memo)?;
                self.neg(da)
            }
            Node::Add(a, b) => {
                let da = self.diff(a, leaf, fder, memo)?;
                let db = self.diff(b, leaf, fder, memo)?;
                self.add(da, db)
            }
            Node::Sub(a, b) => {
                let da = self.diff(a, leaf, fder, memo)?;
                let db = self.diff(b, leaf, fder, memo)?;
                self.sub(da, db)
            }
            Node::Mul(a, b) => {
                let da = self.diff(a, leaf, fder, memo)?;
                let db = self.diff(b, leaf, fder, memo)?;
                let t1 = self.mul(da, b);
                let t2 = self.mul(a, db);
                self.add(t1, t2)
            }
            Node::Div(a, b) => {
                // (da*b - a*db)/b^2 written as da/b - a*db/b^2
                let da = self.diff(a, leaf, fder, memo)?;
                let db = self.diff(b, leaf, fder, memo)?;
                let t1 = self.div(da, b);
                let two = self.num(2.0);
                let b2 = self.pow(b, two);
                let adb = self.mul(a, db);
                let t2 = self.div(adb, b2);
                self.sub(t1, t2)
            }
            Node::Pow(a, b) => {
                let da = self.diff(a, leaf, fder, memo)?;
                let db = self.diff(b, leaf, fder, memo)?;
                let mut acc = self.zero();
                if self.as_const(da) != Some(0.0) {
                    // b * a^(b-1) * da
                    let one = self.one();
                    let bm1 = self.sub(b, one);
                    let p = self.pow(a, bm1);
                    let t = self.mul(b, p);
                    let t = self.mul(t, da);
                    acc = self.add(acc, t);
                }
                if self.as_const(db) != Some(0.0) {
                    // a^b * log(a) * db
                    let la = self.call("log", vec![a]);
                    let t = self.mul(e, la);
                    let t = self.mul(t, db);
                    acc = self.add(acc, t);
                }
                acc
            }
            Node::If(c, a, b) => {
                let da = self.diff(a, leaf, fder, memo)?;
                let db = self.diff(b, leaf, fder, memo)?;
                self.if_(c, da, db)
            }
            Node::Call(f, args) => self.diff_call(e, &f, &args, leaf, fder, memo)?,
            // an array argument of a function: element by element
            Node::Array(xs) => {
                let mut d = Vec::with_capacity(xs.len());
                for &x in xs.iter() {
                    d.push(self.diff(x, leaf, fder, memo)?);
                }
                self.intern(Node::Array(d.into_boxed_slice()))
            }
            Node::CallOutput(c, i) => self.diff_call_output(c, i, leaf, fder, memo)?,
        };
        memo.insert(e, r);
        Ok(r)
    }

    /// Output `i` of a call `f(args)`: output `k` of the derivative call, `k` being the
    /// position of output `i` among the Real outputs of `f`.
    fn diff_call_output(
        &mut self,
        c: ExprId,
        i: u32,
        leaf: &mut dyn FnMut(&mut Arena, VarIx) -> Option<ExprId>,
        fder: &HashMap<String, (String, Vec<bool>)>,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> Result<ExprId, DiffError> {
        let Node::Call(f, _) = self.node(c).clone() else {
            return Err(DiffError::SeveralOutputs);
        };
        if !fder.contains_key(f.as_ref()) {
            return Err(DiffError::NoDerivative(f.to_string()));
        }
        let k = match self.fder_outputs.get(f.as_ref()) {
            Some(ix) => match ix.get(i as usize) {
                Some(Some(k)) => *k,
                // a discrete output: no derivative
                Some(None) => return Ok(self.zero()),
                None => return Err(DiffError::NoDerivative(f.to_string())),
            },
            None => i,
        };
        let dc = self.diff(c, leaf, fder, memo)?;
        if self.is_zero_value(dc) {
            return Ok(self.zero());
        }
        Ok(self.intern(Node::CallOutput(dc, k)))
    }

    fn diff_call(
        &mut self,
        e: ExprId,
        f: &str,
        args: &[ExprId],
        leaf: &mut dyn FnMut(&mut Arena, VarIx) -> Option<ExprId>,
        fder: &HashMap<String, (String, Vec<bool>)>,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> Result<ExprId, DiffError> {
        // `time` has a derivative only when differentiating with respect to time
        let wrt_time = leaf(self, TIME).is_some_and(|d| !self.is_num(d, 0.0));
        if !wrt_time {
            // a partial derivative: exact through the inlined value where there is one (the
            // annotation assumes every input is differentiated)
            if let Some(x) = self.inlined_value(e) {
                return self.diff(x, leaf, fder, memo);
            }
        }
        // (not with respect to time: differentiating the point arguments to see whether they
        // vary would create derivative variables)
        if !wrt_time {
            if let Some(r) = self.diff_along_directions(f, args, leaf, fder, memo)? {
                return Ok(r);
            }
        }
        if let Some((fd, mask)) = fder.get(f) {
            self.check_frozen_arguments(f, args, leaf, fder, memo)?;
            return self.diff_user_call(fd, mask, args, leaf, fder, memo, wrt_time);
        }
        let mut d = Vec::with_capacity(args.len());
        for &a in args {
            d.push(self.diff(a, leaf, fder, memo)?);
        }
        if d.iter().all(|&x| self.is_num(x, 0.0)) {
            return Ok(self.zero());
        }
        let x = args.first().copied().unwrap_or(0);
        let dx = d.first().copied().unwrap_or(0);
        let r = match (f, args.len()) {
            ("sin", 1) => {
                let c = self.call("cos", vec![x]);
                self.mul(c, dx)
            }
            ("cos", 1) => {
                let s = self.call("sin", vec![x]);
                let m = self.mul(s, dx);
                self.neg(m)
            }
            ("tan", 1) => {
                let c = self.call("cos", vec![x]);
                let two = self.num(2.0);
                let c2 = self.pow(c, two);
                self.div(dx, c2)
            }
            ("exp", 1) => self.mul(e, dx),
            ("log", 1) => self.div(dx, x),
            ("log10", 1) => {
                let ln10 = self.num(std::f64::consts::LN_10);
                let xl = self.mul(x, ln10);
                self.div(dx, xl)
            }
            ("sqrt", 1) => {
                let two = self.num(2.0);
                let t = self.mul(two, e);
                self.div(dx, t)
            }
            ("asin", 1) | ("acos", 1) => {
                let one = self.one();
                let two = self.num(2.0);
                let x2 = self.pow(x, two);
                let r = self.sub(one, x2);
                let s = self.call("sqrt", vec![r]);
                let q = self.div(dx, s);
                if f == "asin" {
                    q
                } else {
                    self.neg(q)
                }
            }
            ("atan", 1) => {
                let one = self.one();
                let two = self.num(2.0);
                let x2 = self.pow(x, two);
                let r = self.add(one, x2);
                self.div(dx, r)
            }
            ("atan2", 2) => {
                // d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
                let (y, xx) = (args[0], args[1]);
                let (dy, dxx) = (d[0], d[1]);
                let t1 = self.mul(xx, dy);
                let t2 = self.mul(y, dxx);
                let num = self.sub(t1, t2);
                let two = self.num(2.0);
                let a = self.pow(xx, two);
                let b = self.pow(y, two);
                let den = self.add(a, b);
                self.div(num, den)
            }
            ("sinh", 1) => {
                let c = self.call("cosh", vec![x]);
                self.mul(c, dx)
            }
            ("cosh", 1) => {
                let s = self.call("sinh", vec![x]);
                self.mul(s, dx)
            }
            ("tanh", 1) => {
                let one = self.one();
                let two = self.num(2.0);
                let t2 = self.pow(e, two);
                let r = self.sub(one, t2);
                self.mul(r, dx)
            }
            ("abs", 1) => {
                let zero = self.zero();
                let c = self.rel(Rel::Ge, x, zero, false);
                let ndx = self.neg(dx);
                self.if_(c, dx, ndx)
            }
            ("sign", 1) => self.zero(),
            ("min", 2) | ("max", 2) => {
                let op = if f == "min" { Rel::Le } else { Rel::Ge };
                let c = self.rel(op, args[0], args[1], false);
                self.if_(c, d[0], d[1])
            }
            ("Real", 1) | ("noEvent", 1) => dx,
            ("smooth", 2) => d[1],
            ("homotopy", 2) => d[0],
            // a delayed value depends on the past, not on the current values of its
            // arguments: its partial derivatives (Jacobians) are zero
            ("delay", _) if !wrt_time => self.zero(),
            ("semiLinear", 3) => {
                // semiLinear(x, a, b) = if x >= 0 then a*x else b*x
                let zero = self.zero();
                let c = self.rel(Rel::Ge, x, zero, false);
                let ta = {
                    let p = self.mul(d[1], x);
                    let q = self.mul(args[1], dx);
                    self.add(p, q)
                };
                let tb = {
                    let p = self.mul(d[2], x);
                    let q = self.mul(args[2], dx);
                    self.add(p, q)
                };
                self.if_(c, ta, tb)
            }
            // mod(x, y) = x - floor(x/y)*y and rem(x, y) = x - div(x, y)*y: the step part
            // is constant between its jumps (continuous arguments outside noEvent were
            // already rewritten with event-updated helpers; these are the rest)
            ("mod", 2) | ("rem", 2) => {
                let q = if f == "mod" {
                    let ratio = self.div(args[0], args[1]);
                    self.call("floor", vec![ratio])
                } else {
                    self.call("div", vec![args[0], args[1]])
                };
                let t = self.mul(q, d[1]);
                self.sub(d[0], t)
            }
            (s, _) if STEP_FUNCTIONS.contains(&s) => self.zero(),
            _ => return Err(DiffError::NoDerivative(f.to_string())),
        };
        Ok(r)
    }

    /// Derivative of a call of a user function with a `derivative` annotation: the derivative
    /// function gets the original arguments followed by the derivatives of the inputs that
    /// `mask` selects. Inputs outside the mask (`noDerivative`, `zeroDerivative`, non-Real)
    /// are not differentiated at all, so they may be anything (arrays of records, calls).
    /// A zero constant, or an array of them.
    fn is_zero_value(&self, e: ExprId) -> bool {
        match self.node(e) {
            Node::Array(xs) => xs.iter().all(|&x| self.is_zero_value(x)),
            _ => self.is_num(e, 0.0),
        }
    }

    /// A derivative function `f_der(x, dx)` is linear in its directions `dx`: where only
    /// they vary, its derivative is `f_der(x, d dx)`, and no second derivative is needed.
    /// Loops of index-reduced models whose unknowns are derivatives (`der(p)`, `der(T)`
    /// passed to `rho_pT_der`) are then linear, solved in one step. `None` when `f` is no
    /// derivative function or its other arguments vary too.
    fn diff_along_directions(
        &mut self,
        f: &str,
        args: &[ExprId],
        leaf: &mut dyn FnMut(&mut Arena, VarIx) -> Option<ExprId>,
        fder: &HashMap<String, (String, Vec<bool>)>,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> Result<Option<ExprId>, DiffError> {
        let Some(&n) = self.direction_args.get(f) else {
            return Ok(None);
        };
        if n >= args.len() {
            return Ok(None);
        }
        for &a in &args[..n] {
            let d = self.diff(a, leaf, fder, memo)?;
            if !self.is_zero_value(d) {
                return Ok(None);
            }
        }
        let mut new_args = args[..n].to_vec();
        for &a in &args[n..] {
            new_args.push(self.diff(a, leaf, fder, memo)?);
        }
        if new_args[n..].iter().all(|&d| self.is_zero_value(d)) {
            return Ok(Some(self.zero()));
        }
        Ok(Some(self.call(f, new_args)))
    }

    /// `Err` when an argument that `f`'s derivative froze has a derivative that is not zero
    /// here: the derivative function would miss its contribution.
    fn check_frozen_arguments(
        &mut self,
        f: &str,
        args: &[ExprId],
        leaf: &mut dyn FnMut(&mut Arena, VarIx) -> Option<ExprId>,
        fder: &HashMap<String, (String, Vec<bool>)>,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> Result<(), DiffError> {
        let Some(required) = self.fder_zero_required.get(f).cloned() else {
            return Ok(());
        };
        for (i, &a) in args.iter().enumerate() {
            if !required.get(i).copied().unwrap_or(false) {
                continue;
            }
            let d = self.diff(a, leaf, fder, memo)?;
            if !self.is_zero_value(d) {
                return Err(DiffError::FrozenArgument {
                    function: f.to_string(),
                    argument: i + 1,
                });
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn diff_user_call(
        &mut self,
        fd: &str,
        mask: &[bool],
        args: &[ExprId],
        leaf: &mut dyn FnMut(&mut Arena, VarIx) -> Option<ExprId>,
        fder: &HashMap<String, (String, Vec<bool>)>,
        memo: &mut HashMap<ExprId, ExprId>,
        wrt_time: bool,
    ) -> Result<ExprId, DiffError> {
        let mut new_args = args.to_vec();
        for (i, &m) in mask.iter().enumerate() {
            if !m {
                continue;
            }
            let d = match args.get(i) {
                Some(&a) => self.diff(a, leaf, fder, memo)?,
                None => self.zero(),
            };
            new_args.push(d);
        }
        // Zero when the differentiated inputs have zero derivatives, and, with respect to
        // time, the other arguments are constant too: an output may vary with a
        // `noDerivative` input (which is why MSL passes `time` as a dummy argument), and a
        // second derivative with the first-derivative inputs. That is checked structurally,
        // since differentiating them would create derivative variables.
        let masked_zero = new_args[args.len()..]
            .iter()
            .all(|&d| self.is_zero_value(d));
        let others_constant = !wrt_time
            || args
                .iter()
                .all(|&a| !self.any_node(a, &mut |n| matches!(n, Node::Var(_) | Node::Time)));
        if masked_zero && others_constant {
            return Ok(self.zero());
        }
        Ok(self.call(fd, new_args))
    }
}

/// Why an expression has no derivative here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffError {
    /// A call of this function, which has no derivative (no annotation, none generated).
    NoDerivative(String),
    /// A call whose generated derivative holds only where this argument (1-based) is
    /// constant ([`crate::autodiff`] froze it), and it is not constant here.
    FrozenArgument { function: String, argument: usize },
    /// One output of something that is not a call.
    SeveralOutputs,
}

impl DiffError {
    /// The function whose derivative is missing.
    pub fn function(&self) -> Option<&str> {
        match self {
            DiffError::NoDerivative(f) | DiffError::FrozenArgument { function: f, .. } => Some(f),
            DiffError::SeveralOutputs => None,
        }
    }
}

impl Arena {
    /// `e` with the reason a generated derivative failed, where there is one: "function
    /// `f` has no derivative (function `Modelica.Math.Matrices.LAPACK.dgesv` has no
    /// derivative)".
    pub fn explain(&self, e: &DiffError) -> String {
        match e {
            DiffError::NoDerivative(f) => match self.fder_failures.get(f) {
                Some(why) => format!("{e} ({why})"),
                None => e.to_string(),
            },
            _ => e.to_string(),
        }
    }
}

impl std::fmt::Display for DiffError {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiffError::NoDerivative(f) => write!(out, "function `{f}` has no derivative"),
            DiffError::FrozenArgument { function, argument } => write!(
                out,
                "function `{function}` has no derivative with respect to its argument \
                 {argument} (its algorithm passes it to a function that has none)"
            ),
            DiffError::SeveralOutputs => write!(out, "a function with several outputs"),
        }
    }
}

fn push_children(n: &Node, stack: &mut Vec<ExprId>) {
    match n {
        Node::Neg(a) | Node::Not(a) | Node::CallOutput(a, _) => stack.push(*a),
        Node::Add(a, b)
        | Node::Sub(a, b)
        | Node::Mul(a, b)
        | Node::Div(a, b)
        | Node::Pow(a, b)
        | Node::And(a, b)
        | Node::Or(a, b) => {
            stack.push(*a);
            stack.push(*b);
        }
        Node::Rel { lhs, rhs, .. } => {
            stack.push(*lhs);
            stack.push(*rhs);
        }
        Node::If(c, a, b) => {
            stack.push(*c);
            stack.push(*a);
            stack.push(*b);
        }
        Node::Call(_, xs) | Node::Array(xs) => stack.extend(xs.iter().copied()),
        _ => {}
    }
}

/// Modelica-like text of an expression, with variable names from `name`.
pub fn to_text(a: &Arena, e: ExprId, name: &dyn Fn(VarIx) -> String) -> String {
    let mut s = String::new();
    write_expr(a, e, name, 0, &mut s);
    s
}

fn prec(n: &Node) -> u8 {
    match n {
        Node::Or(..) => 1,
        Node::And(..) => 2,
        Node::Not(_) => 3,
        Node::Rel { .. } => 4,
        Node::Add(..) | Node::Sub(..) => 5,
        Node::Neg(_) => 6,
        Node::Mul(..) | Node::Div(..) => 7,
        Node::Pow(..) => 8,
        Node::If(..) => 0,
        _ => 10,
    }
}

fn write_expr(a: &Arena, e: ExprId, name: &dyn Fn(VarIx) -> String, outer: u8, s: &mut String) {
    let n = a.node(e);
    let p = prec(n);
    let paren = p < outer;
    if paren {
        s.push('(');
    }
    let bin = |s: &mut String, x: ExprId, op: &str, y: ExprId, right_bump: u8| {
        write_expr(a, x, name, p, s);
        s.push_str(op);
        write_expr(a, y, name, p + right_bump, s);
    };
    match n {
        Node::Const(_) => {
            let v = a.as_const(e).unwrap_or(0.0);
            s.push_str(&fmt_num(v));
        }
        Node::Str(t) => {
            s.push('"');
            s.push_str(t);
            s.push('"');
        }
        Node::Var(v) => s.push_str(&name(*v)),
        Node::Pre(v) => {
            s.push_str("pre(");
            s.push_str(&name(*v));
            s.push(')');
        }
        Node::Time => s.push_str("time"),
        Node::Neg(x) => {
            s.push('-');
            write_expr(a, *x, name, p + 1, s);
        }
        Node::Not(x) => {
            s.push_str("not ");
            write_expr(a, *x, name, p, s);
        }
        Node::Add(x, y) => bin(s, *x, " + ", *y, 0),
        Node::Sub(x, y) => bin(s, *x, " - ", *y, 1),
        Node::Mul(x, y) => bin(s, *x, "*", *y, 0),
        Node::Div(x, y) => bin(s, *x, "/", *y, 1),
        Node::Pow(x, y) => bin(s, *x, "^", *y, 1),
        Node::And(x, y) => bin(s, *x, " and ", *y, 0),
        Node::Or(x, y) => bin(s, *x, " or ", *y, 0),
        Node::Rel {
            op,
            lhs,
            rhs,
            event,
        } => {
            if !event {
                s.push_str("noEvent(");
            }
            write_expr(a, *lhs, name, 5, s);
            s.push(' ');
            s.push_str(op.text());
            s.push(' ');
            write_expr(a, *rhs, name, 5, s);
            if !event {
                s.push(')');
            }
        }
        Node::If(c, x, y) => {
            s.push_str("if ");
            write_expr(a, *c, name, 0, s);
            s.push_str(" then ");
            write_expr(a, *x, name, 1, s);
            s.push_str(" else ");
            write_expr(a, *y, name, 0, s);
        }
        Node::Call(f, args) => {
            s.push_str(f);
            s.push('(');
            for (i, x) in args.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_expr(a, *x, name, 0, s);
            }
            s.push(')');
        }
        Node::Array(items) => {
            s.push('{');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_expr(a, *x, name, 0, s);
            }
            s.push('}');
        }
        Node::CallOutput(c, i) => {
            write_expr(a, *c, name, 10, s);
            s.push_str(&format!("[output {}]", i + 1));
        }
        Node::Initial => s.push_str("initial()"),
        Node::Terminal => s.push_str("terminal()"),
        Node::Sample(i) => s.push_str(&format!("sample#{i}")),
    }
    if paren {
        s.push(')');
    }
}

/// Shortest round-trip decimal text of a number (integers without a fraction).
pub fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// What [`Arena::gather`] does with a node.
enum Leaf {
    /// Append this variable (and do not descend).
    Take(VarIx),
    /// Neither append nor descend.
    Prune,
    /// Descend into the children.
    Descend,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mod` and `rem` left as calls (inside `noEvent`) differentiate as `x - q*y` with the
    /// quotient `q` constant: d/dx = 1, d/dy = -q; the other step functions have no slope.
    #[test]
    fn mod_and_rem_have_unit_slope_in_their_first_argument() {
        let mut a = Arena::new();
        let (x, y) = (a.var(0), a.var(1));
        for f in ["mod", "rem"] {
            let e = a.call(f, vec![x, y]);
            let dx = a
                .diff_var(e, 0, &mut HashMap::default())
                .expect("differentiable");
            assert_eq!(a.as_const(dx), Some(1.0), "d {f}/dx");
            let dy = a
                .diff_var(e, 1, &mut HashMap::default())
                .expect("differentiable");
            let quotient = if f == "mod" { "floor" } else { "div" };
            let text = to_text(&a, dy, &|v| ["x", "y"][v as usize].to_string());
            assert!(text.contains(quotient), "d {f}/dy = {text}");
        }
        let e = a.call("floor", vec![x]);
        let d = a
            .diff_var(e, 0, &mut HashMap::default())
            .expect("differentiable");
        assert_eq!(a.as_const(d), Some(0.0));
    }

    #[test]
    fn folding_and_identities() {
        let mut a = Arena::new();
        let x = a.var(0);
        let two = a.num(2.0);
        let three = a.num(3.0);
        let five = a.add(two, three);
        assert_eq!(a.as_const(five), Some(5.0));
        let zero = a.zero();
        let one = a.one();
        let t = a.mul(x, one);
        assert_eq!(t, x);
        let t = a.add(t, zero);
        assert_eq!(t, x);
        let nn = a.neg(x);
        let nn = a.neg(nn);
        assert_eq!(nn, x);
        assert_eq!(a.sub(x, x), zero);
        // hash-consing shares equal nodes
        let s1 = a.add(x, two);
        let s2 = a.add(x, two);
        assert_eq!(s1, s2);
    }

    #[test]
    fn derivative_of_sin_product_and_user_function() {
        let mut a = Arena::new();
        let x = a.var(0);
        let y = a.var(1);
        let s = a.call("sin", vec![x]);
        let e = a.mul(s, y);
        let dx = a.diff_var(e, 0, &mut HashMap::default()).unwrap();
        let txt = to_text(&a, dx, &|v| ["x", "y"][v as usize].to_string());
        assert_eq!(txt, "cos(x)*y");
        let f = a.call("f", vec![x]);
        let err = a.diff_var(f, 0, &mut HashMap::default()).unwrap_err();
        assert_eq!(err, DiffError::NoDerivative("f".into()));
        let mut fd = HashMap::default();
        fd.insert("f".to_string(), ("f_der".to_string(), vec![true]));
        let mut leaf = |a: &mut Arena, v: VarIx| if v == 0 { Some(a.one()) } else { None };
        let d = a.diff(f, &mut leaf, &fd, &mut HashMap::default()).unwrap();
        assert_eq!(to_text(&a, d, &|_| "x".into()), "f_der(x, 1)");
    }

    #[test]
    fn array_reductions_expand() {
        let mut a = Arena::new();
        let (x, y, z) = (a.var(0), a.var(1), a.var(2));
        let arr = a.intern(Node::Array(vec![x, y, z].into_boxed_slice()));
        let s = a.call("sum", vec![arr]);
        assert_eq!(
            to_text(&a, s, &|v| ["x", "y", "z"][v as usize].into()),
            "x + y + z"
        );
        let m = a.call("max", vec![arr]);
        assert_eq!(
            to_text(&a, m, &|v| ["x", "y", "z"][v as usize].into()),
            "max(max(x, y), z)"
        );
    }

    #[test]
    fn substitution_keeps_event_relations() {
        let mut a = Arena::new();
        let x = a.var(0);
        let zero = a.zero();
        let r = a.rel(Rel::Gt, x, zero, true);
        let e = a.if_(r, x, zero);
        let mut f = |a: &mut Arena, n: &Node| match n {
            Node::Var(0) => Some(a.num(7.0)),
            _ => None,
        };
        let s = a.substitute(e, &mut f, true, &mut HashMap::default());
        assert_eq!(to_text(&a, s, &|_| "x".into()), "if x > 0 then 7 else 0");
    }
}
