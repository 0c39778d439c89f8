//! Overconstrained connectors (spec 9.4): the virtual connection graph.
//!
//! An overdetermined type or record is one that declares a function `equalityConstraint`.
//! Each instance of it inside a connector is a node of the graph. `connect` between two
//! connectors adds an optional edge for each pair of such instances, `Connections.branch`
//! a required edge; `Connections.root`/`potentialRoot` mark roots. A spanning forest is built
//! (all required edges, then optional edges that join separate trees) with exactly one root
//! per connected component. Optional edges in the forest give the ordinary equalities (their
//! variables join the connection sets); the others close loops and give
//! `zeros(n) = equalityConstraint(a, b)` instead, so the model stays balanced.

use crate::connect::Connections;
use crate::ctx::{format_indices, index_tuples, Flattener};
use crate::expand::{qualified, Cx};
use crate::flat::{Equation, Expr, FlatModel, Origin};
use crate::inst::*;
use crate::loader::ClassId;
use moss_syntax::ast::{self, ConnectorPrefix, FunctionArgs};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Name of the placeholder call that stands for `Connections.isRoot(a)` until the graph is
/// solved; its argument is the node name as a String literal.
pub const IS_ROOT: &str = "Connections.isRoot";
/// Placeholder for `Connections.rooted(a)` (and the deprecated `rooted(a)`).
pub const ROOTED: &str = "Connections.rooted";

/// A pending union of two connection-set elements: (variable, outside) and connector name
/// for both sides, and the kind of the variable.
pub type PendingUnion = (
    (String, bool),
    String,
    (String, bool),
    String,
    Option<ConnectorPrefix>,
);

/// An optional edge (from `connect`).
pub struct OptionalEdge {
    pub a: String,
    pub b: String,
    /// Equalities made if the edge is in the spanning tree.
    pub unions: Vec<PendingUnion>,
    /// `zeros(n) = equalityConstraint(a, b)`, used if the edge closes a loop.
    pub constraint: Vec<Equation>,
    pub origin: Origin,
}

#[derive(Default)]
pub struct Graph {
    pub optional: Vec<OptionalEdge>,
    pub branches: Vec<(String, String, Origin)>,
    pub roots: Vec<(String, Origin)>,
    pub potential_roots: Vec<(String, i64, Origin)>,
}

/// What the solved graph tells: the selected roots and each node's distance to its root.
#[derive(Default)]
pub struct Solution {
    pub roots: HashSet<String>,
    pub depth: HashMap<String, usize>,
    /// Branches by node, for `rooted`.
    pub branch_other: HashMap<String, String>,
}

/// Union-find over node indices; each tree knows the definite root it contains.
struct Forest {
    parent: Vec<usize>,
    /// The definite root (`Connections.root`) in the tree, by representative.
    root: Vec<Option<usize>>,
}

impl Forest {
    /// The definite roots of the trees of `a` and `b` when both have one (then joining
    /// them would give a tree with two roots).
    fn both_roots(&mut self, a: usize, b: usize) -> Option<(usize, usize)> {
        let (x, y) = (self.find(a), self.find(b));
        Some((self.root[x]?, self.root[y]?))
    }

    fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }
    /// Joins the trees of `a` and `b`; false when they were already one tree.
    fn join(&mut self, a: usize, b: usize) -> bool {
        let (x, y) = (self.find(a), self.find(b));
        if x == y {
            return false;
        }
        self.parent[x] = y;
        self.root[y] = self.root[y].or(self.root[x]);
        true
    }
}

impl Graph {
    pub fn is_empty(&self) -> bool {
        self.optional.is_empty()
            && self.branches.is_empty()
            && self.roots.is_empty()
            && self.potential_roots.is_empty()
    }

    /// Build the spanning forest: add its optional edges' equalities to `conns`, return the
    /// equality-constraint equations of the loop-closing edges and the solution.
    pub fn solve(self, conns: &mut Connections) -> Res<(Vec<Equation>, Solution)> {
        let mut index: HashMap<String, usize> = HashMap::default();
        let mut names: Vec<String> = Vec::new();
        let mut id = |n: &str| -> usize {
            if let Some(i) = index.get(n) {
                return *i;
            }
            names.push(n.to_string());
            index.insert(n.to_string(), names.len() - 1);
            names.len() - 1
        };
        let branches: Vec<(usize, usize, Origin)> = self
            .branches
            .iter()
            .map(|(a, b, o)| (id(a), id(b), o.clone()))
            .collect();
        let optional: Vec<(usize, usize)> =
            self.optional.iter().map(|e| (id(&e.a), id(&e.b))).collect();
        let roots: Vec<(usize, Origin)> =
            self.roots.iter().map(|(a, o)| (id(a), o.clone())).collect();
        let potential: Vec<(usize, i64, Origin)> = self
            .potential_roots
            .iter()
            .map(|(a, p, o)| (id(a), *p, o.clone()))
            .collect();
        let n = names.len();
        // Where each node is first mentioned (for diagnostics about its part of the graph).
        let mut first_seen: Vec<Option<moss_syntax::Span>> = vec![None; n];
        let mentions = branches.iter().map(|(a, b, o)| (*a, *b, o.span)).chain(
            optional
                .iter()
                .zip(&self.optional)
                .map(|((a, b), e)| (*a, *b, e.origin.span)),
        );
        for (a, b, span) in mentions {
            for i in [a, b] {
                first_seen[i].get_or_insert(span);
            }
        }
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut tree = Forest {
            parent: (0..n).collect(),
            root: vec![None; n],
        };
        for (r, _) in &roots {
            tree.root[*r] = Some(*r);
        }
        // Required edges first: they must all be in the tree, so they may not form a loop.
        for (a, b, o) in &branches {
            if let Some((ra, rb)) = tree.both_roots(*a, *b).filter(|(x, y)| x != y) {
                return err(
                    o.span,
                    format!(
                        "Connections.branch({}, {}) joins the definite roots `{}` and `{}`",
                        names[*a], names[*b], names[ra], names[rb]
                    ),
                )
                .map_err(|d| Box::new(d.with_help("definite roots (Connections.root) can only be separated at connect equations, not at branches; make one of them Connections.potentialRoot")));
            }
            if !tree.join(*a, *b) {
                return err(
                    o.span,
                    format!(
                        "Connections.branch({}, {}) closes a loop of branches in the connection graph",
                        names[*a], names[*b]
                    ),
                )
                .map_err(|d| Box::new(d.with_help("required edges (branches) must form a tree; remove one branch of the loop")));
            }
            adj[*a].push(*b);
            adj[*b].push(*a);
        }
        let mut eqs = Vec::new();
        // An optional edge between two trees that each have a definite root is a breaking
        // edge (spec 9.4.2: a part with n roots is divided into n spanning trees): like an
        // edge that closes a loop, it gives the equalityConstraint residues.
        for (edge, (a, b)) in self.optional.into_iter().zip(optional) {
            if tree.both_roots(a, b).is_none() && tree.join(a, b) {
                adj[a].push(b);
                adj[b].push(a);
                for (ka, ca, kb, cb, kind) in edge.unions {
                    let _ = conns.union_names(ka, &ca, kb, &cb, kind, &edge.origin);
                }
            } else {
                eqs.extend(edge.constraint);
            }
        }
        let selected = select_roots(&mut tree, &names, &first_seen, &roots, &potential)?;
        let mut sol = Solution::default();
        let mut queue = std::collections::VecDeque::new();
        let mut depth: Vec<Option<usize>> = vec![None; n];
        for r in selected {
            sol.roots.insert(names[r].clone());
            depth[r] = Some(0);
            queue.push_back(r);
        }
        while let Some(i) = queue.pop_front() {
            let d = depth[i].unwrap_or(0);
            for &j in &adj[i] {
                if depth[j].is_none() {
                    depth[j] = Some(d + 1);
                    queue.push_back(j);
                }
            }
        }
        for (i, d) in depth.into_iter().enumerate() {
            if let Some(d) = d {
                sol.depth.insert(names[i].clone(), d);
            }
        }
        for (a, b, _) in &self.branches {
            sol.branch_other.insert(a.clone(), b.clone());
        }
        Ok((eqs, sol))
    }
}

/// One root per tree: the definite root, else the potential root with the lowest priority
/// number (the first declared on ties).
fn select_roots(
    tree: &mut Forest,
    names: &[String],
    first_seen: &[Option<moss_syntax::Span>],
    roots: &[(usize, Origin)],
    potential: &[(usize, i64, Origin)],
) -> Res<Vec<usize>> {
    let n = names.len();
    let mut definite: HashMap<usize, (usize, &Origin)> = HashMap::default();
    for (r, o) in roots {
        let t = tree.find(*r);
        if let Some((other, _)) = definite.get(&t) {
            if other != r {
                return err(
                    o.span,
                    format!(
                        "`{}` and `{}` are both definite roots (Connections.root) of the same connected part of the connection graph",
                        names[*other], names[*r]
                    ),
                )
                .map_err(|d| Box::new(d.with_help("a connected overconstrained subsystem has exactly one root; make one of them Connections.potentialRoot, or disconnect the two subsystems")));
            }
        }
        definite.insert(t, (*r, o));
    }
    let mut best: HashMap<usize, (usize, i64)> = HashMap::default();
    for (r, p, _) in potential {
        let t = tree.find(*r);
        match best.get(&t) {
            Some((_, q)) if q <= p => {}
            _ => {
                best.insert(t, (*r, *p));
            }
        }
    }
    let mut out = Vec::new();
    let mut seen = HashSet::default();
    for i in 0..n {
        let t = tree.find(i);
        if !seen.insert(t) {
            continue;
        }
        match (definite.get(&t), best.get(&t)) {
            (Some((r, _)), _) => out.push(*r),
            (None, Some((r, _))) => out.push(*r),
            (None, None) => {
                let members: Vec<&str> = (0..n)
                    .filter(|&j| tree.find(j) == t)
                    .map(|j| names[j].as_str())
                    .collect();
                return Err(Box::new(moss_syntax::Diagnostic::error(
                    (0..n)
                        .filter(|&j| tree.find(j) == t)
                        .find_map(|j| first_seen[j])
                        .unwrap_or_default(),
                    format!(
                        "the connection graph part made of {} has no root",
                        members.join(", ")
                    ),
                ).with_help("add Connections.root or Connections.potentialRoot for one of these overdetermined variables (usually in the component that fixes their value)")));
            }
        }
    }
    Ok(out)
}

/// Replace the placeholder calls of `isRoot`/`rooted` and `cardinality` by their values
/// everywhere (equations, algorithms and parameter bindings), fold the expressions that held
/// them, and keep only the selected branch of if-equations whose condition became a literal
/// (`if Connections.isRoot(R) then ... else ... end if`, `if cardinality(p) == 0 then ...`).
pub fn replace_queries(
    model: &mut FlatModel,
    sol: &Solution,
    occurrences: &HashMap<String, usize>,
) {
    let mut f = |e: &mut Expr| {
        replace_query(e, sol, occurrences);
    };
    crate::walk::model_equation_exprs_mut(model, &mut f);
    for v in &mut model.variables {
        if let Some(b) = &mut v.binding {
            f(b);
        }
    }
    model.equations = select_literal_branches(std::mem::take(&mut model.equations));
    model.initial_equations = select_literal_branches(std::mem::take(&mut model.initial_equations));
}

/// The value of one placeholder call, `None` for any other expression.
fn query_value(
    func: &str,
    node: &str,
    sol: &Solution,
    occurrences: &HashMap<String, usize>,
) -> Option<Expr> {
    match func {
        IS_ROOT => Some(Expr::Boolean(sol.roots.contains(node))),
        ROOTED => {
            let d = |n: &str| sol.depth.get(n).copied().unwrap_or(usize::MAX);
            let closer = match sol.branch_other.get(node) {
                Some(other) => d(node) < d(other),
                None => sol.roots.contains(node),
            };
            Some(Expr::Boolean(closer))
        }
        crate::connect::CARDINALITY => {
            let n = occurrences.get(node).copied().unwrap_or(0);
            Some(Expr::Integer(n as i64))
        }
        _ => None,
    }
}

/// Replace queries below `e`; returns whether any was replaced (then `e` is folded again).
fn replace_query(e: &mut Expr, sol: &Solution, occurrences: &HashMap<String, usize>) -> bool {
    if let Expr::Call { func, args } = e {
        if let [Expr::String(node)] = args.as_slice() {
            if let Some(v) = query_value(func, node, sol, occurrences) {
                *e = v;
                return true;
            }
        }
    }
    let mut changed = false;
    crate::walk::exprs_mut(e, &mut |x| changed |= replace_query(x, sol, occurrences));
    if changed {
        *e = refold(std::mem::replace(e, Expr::Integer(0)));
    }
    changed
}

/// Fold one node again after its operands changed.
fn refold(e: Expr) -> Expr {
    match e {
        Expr::If { branches, else_ } => crate::fold::if_expr(branches, *else_),
        Expr::Unary { op, arg } => crate::fold::unary(op, *arg),
        Expr::Binary { op, lhs, rhs } => crate::fold::binary(op, *lhs, *rhs),
        Expr::Call { func, args } => crate::fold::call(&func, args),
        other => other,
    }
}

/// If-equations: branches with a literal false condition are dropped, a literal true one
/// replaces the whole if-equation.
fn select_literal_branches(eqs: Vec<Equation>) -> Vec<Equation> {
    // Most equations are not if-equations: leave the list as it is then (a large model has
    // 10^5 and more, and moving each costs more than looking).
    if !eqs.iter().any(|e| matches!(e, Equation::If { .. })) {
        return eqs;
    }
    let mut out = Vec::with_capacity(eqs.len());
    for eq in eqs {
        let Equation::If {
            branches,
            else_,
            origin,
        } = eq
        else {
            out.push(eq);
            continue;
        };
        let mut kept = Vec::new();
        let mut chosen = None;
        for (c, body) in branches {
            match c {
                Expr::Boolean(false) => {}
                Expr::Boolean(true) if kept.is_empty() => {
                    chosen = Some(body);
                    break;
                }
                c => kept.push((c, select_literal_branches(body))),
            }
        }
        match (chosen, kept.is_empty()) {
            (Some(body), _) => out.extend(select_literal_branches(body)),
            (None, true) => out.extend(select_literal_branches(else_)),
            (None, false) => out.push(Equation::If {
                branches: kept,
                else_: select_literal_branches(else_),
                origin,
            }),
        }
    }
    out
}

/// Whether a called name is one of the graph statements or queries; returns its operator.
pub fn connections_operator(function: &ast::ComponentRef) -> Option<&str> {
    match function.parts.as_slice() {
        [p, op] if p.name.as_str() == "Connections" => Some(op.name.as_str()),
        [op] if op.name.as_str() == "rooted" => Some("rooted"),
        _ => None,
    }
}

/// An overdetermined variable inside a connector: its suffix below the connector, the
/// `equalityConstraint` function and the shape of its arguments (field path and dims).
pub struct OdPart {
    pub suffix: String,
    pub function: ClassId,
    pub fields: Vec<(String, Vec<usize>)>,
}

impl<'a> Flattener<'a> {
    /// The `equalityConstraint` function declared in an overdetermined class.
    fn equality_constraint_of(&self, class: ClassId) -> Option<ClassId> {
        match self.lk.member(class, "equalityConstraint")? {
            Found::Class(f) => {
                let f = self.lk.follow_short_class(f);
                matches!(self.lk.kind(f), ast::ClassKind::Function { .. }).then_some(f)
            }
            _ => None,
        }
    }

    /// The overdetermined variables of a connector instance (searched through nested records).
    pub fn overdetermined_parts(
        &self,
        node: &NodeRef,
        prefix: &str,
        out: &mut Vec<OdPart>,
    ) -> Res<()> {
        let elems = self.elems(node);
        for comp in &elems.comps {
            if !self.comp_enabled(node, comp)?
                || matches!(
                    comp.tprefixes.variability,
                    Some(ast::Variability::Parameter | ast::Variability::Constant)
                )
            {
                continue;
            }
            let ty = self.comp_type(node, comp)?;
            let dims = self.comp_dims(node, comp)?;
            let f = ty.class.and_then(|c| self.equality_constraint_of(c));
            let (own, shape) = match ty.base {
                Base::Class(_) => (dims.clone(), Vec::new()),
                _ => {
                    let k = dims.len().saturating_sub(ty.dims.len());
                    (dims[..k].to_vec(), dims[k..].to_vec())
                }
            };
            for idx in index_tuples(&own) {
                let mut name = format!("{prefix}.{}", crate::ctx::flat_ident(&comp.name));
                if !idx.is_empty() {
                    name.push_str(&format_indices(&idx));
                }
                match (f, &ty.base) {
                    (Some(function), Base::Class(rc)) => {
                        let fields = self
                            .record_field_list(*rc, comp.span)?
                            .into_iter()
                            .map(|f| (f.path, f.dims))
                            .collect();
                        out.push(OdPart {
                            suffix: name,
                            function,
                            fields,
                        });
                    }
                    (Some(function), _) => out.push(OdPart {
                        suffix: name,
                        function,
                        fields: vec![(String::new(), shape.clone())],
                    }),
                    (None, Base::Class(_)) => {
                        let child = self.child_node(node, comp, &idx)?;
                        self.overdetermined_parts(&child, &name, out)?;
                    }
                    (None, _) => {}
                }
            }
        }
        Ok(())
    }

    /// `zeros(n) = f(a, b)` for an overdetermined variable `a`/`b` (as `{0.0, ...} = f(a, b)`,
    /// an array literal of the output's shape): every residue is an implicit equation in the
    /// variables of `a` and `b`; the symbolic stage inlines `f` to split it into scalar
    /// equations. None when the function returns no residue.
    pub fn equality_constraint_equations(
        &self,
        part: &OdPart,
        a: &str,
        b: &str,
        origin: &Origin,
    ) -> Res<Vec<Equation>> {
        let fnode = self.package_node(part.function);
        let elems = self.elems(&fnode);
        let Some(out) = elems
            .comps
            .iter()
            .find(|c| self.comp_causality(&fnode, c) == Some(ast::Causality::Output))
        else {
            return err(
                origin.span,
                format!(
                    "`{}` has no output: an equalityConstraint function returns its residues",
                    self.lk.name_of(part.function)
                ),
            );
        };
        let dims = self.comp_dims(&fnode, out)?;
        if dims.iter().product::<usize>() == 0 {
            return Ok(Vec::new());
        }
        let name = self.lk.name_of(part.function);
        self.functions
            .borrow_mut()
            .insert(name.clone(), part.function);
        let mut args = Vec::new();
        for base in [a, b] {
            for (path, dims) in &part.fields {
                let var = if path.is_empty() {
                    base.to_string()
                } else {
                    format!("{base}.{path}")
                };
                args.push(array_of_vars(&var, dims, &mut Vec::new()));
            }
        }
        Ok(vec![Equation::Equal {
            lhs: zeros(&dims),
            rhs: Expr::Call { func: name, args },
            origin: origin.clone(),
        }])
    }

    /// The graph node named by the argument of `Connections.*` (an overdetermined variable).
    pub fn graph_node_name(&self, e: &ast::Expr, env: &Env, cx: &mut Cx) -> Res<String> {
        let ast::ExprKind::Ref(c) = &e.kind else {
            return err(
                e.span,
                "the argument of a Connections operator must name an overdetermined variable of a connector",
            );
        };
        let mut node = env.node.clone();
        let mut name = String::new();
        for (k, part) in c.parts.iter().enumerate() {
            let Some(comp) = self.find_comp(&node, part.name.as_str()) else {
                return err(part.name.span, format!("unknown component `{}`", part.name));
            };
            let mut idx = Vec::new();
            for s in &part.subscripts {
                let ast::Subscript::Expr(x) = s else {
                    return err(e.span, "`:` cannot select one node of the connection graph");
                };
                let v = self.eval_expr(x, env, &mut cx.clone())?;
                match crate::fold::as_i64(&v.to_expr()) {
                    Some(i) if i >= 1 => idx.push(i as usize),
                    _ => return err(x.span, "expected a positive Integer index"),
                }
            }
            name = qualified(&node, &comp.name);
            if !idx.is_empty() {
                name.push_str(&format_indices(&idx));
            }
            if k + 1 < c.parts.len() {
                node = self.child_node(&node, &comp, &idx)?;
            }
        }
        Ok(name)
    }

    /// `Connections.branch/root/potentialRoot` used as an equation: recorded in the graph.
    pub fn graph_statement(
        &self,
        op: &str,
        args: &FunctionArgs,
        env: &Env,
        cx: &mut Cx,
        conns: Option<&mut Connections>,
        o: Origin,
    ) -> Res<()> {
        let FunctionArgs::List { positional, named } = args else {
            return err(
                o.span,
                format!("Connections.{op} takes a list of arguments"),
            );
        };
        let Some(conns) = conns.filter(|_| !cx.guarded) else {
            return err(
                o.span,
                format!("Connections.{op} is not allowed inside a when-equation, an if-equation with a condition that is not a parameter expression, or an initial equation"),
            )
            .map_err(|d| Box::new(d.with_help("the connection graph is fixed at translation time: state the graph outside such equations")));
        };
        let arg = |k: usize, n: &str| {
            positional
                .get(k)
                .or_else(|| named.iter().find(|a| a.name == n).map(|a| &a.value))
        };
        let g = &mut conns.graph;
        match op {
            "branch" => {
                let (Some(a), Some(b)) = (arg(0, "a"), arg(1, "b")) else {
                    return err(o.span, "Connections.branch needs two arguments");
                };
                let (a, b) = (
                    self.graph_node_name(a, env, cx)?,
                    self.graph_node_name(b, env, cx)?,
                );
                g.branches.push((a, b, o));
            }
            "root" => {
                let Some(a) = arg(0, "a") else {
                    return err(o.span, "Connections.root needs one argument");
                };
                g.roots.push((self.graph_node_name(a, env, cx)?, o));
            }
            "potentialRoot" => {
                let Some(a) = arg(0, "a") else {
                    return err(o.span, "Connections.potentialRoot needs an argument");
                };
                let a = self.graph_node_name(a, env, cx)?;
                let p = match arg(1, "priority") {
                    Some(p) => {
                        let v = self.eval_expr(p, env, &mut cx.clone())?.to_expr();
                        match crate::fold::as_i64(&v) {
                            Some(i) if i >= 0 => i,
                            _ => return err(p.span, "the priority of Connections.potentialRoot must be a non-negative Integer parameter expression"),
                        }
                    }
                    None => 0,
                };
                g.potential_roots.push((a, p, o));
            }
            _ => {
                return err(
                    o.span,
                    format!("Connections.{op} is not an equation; use it inside an expression"),
                )
            }
        }
        Ok(())
    }
}

/// An array literal of zeros of dimensions `dims` (`{{0.0, 0.0}, {0.0, 0.0}}`).
fn zeros(dims: &[usize]) -> Expr {
    match dims.split_first() {
        None => Expr::Real(0.0),
        Some((&n, rest)) => Expr::Array(vec![zeros(rest); n]),
    }
}

/// `{{a[1,1], a[1,2]}, ...}` for a variable `a` of dimensions `dims` (just `a` for scalars).
fn array_of_vars(name: &str, dims: &[usize], idx: &mut Vec<usize>) -> Expr {
    match dims.split_first() {
        None if idx.is_empty() => Expr::Var {
            name: name.to_string(),
            subscripts: Vec::new(),
        },
        None => Expr::Var {
            name: format!("{name}{}", format_indices(idx)),
            subscripts: Vec::new(),
        },
        Some((&d, rest)) => Expr::Array(
            (1..=d)
                .map(|i| {
                    idx.push(i);
                    let x = array_of_vars(name, rest, idx);
                    idx.pop();
                    x
                })
                .collect(),
        ),
    }
}

impl<'a> Flattener<'a> {
    /// For each overdetermined variable of two connected connectors: take its leaves out of
    /// the ordinary connection (`lx`, `ly`) and record an optional edge of the graph instead.
    pub fn overdetermined_edges(
        &self,
        x: &crate::connect::ConnElem,
        lx: &mut Vec<(String, Option<ConnectorPrefix>)>,
        y: &crate::connect::ConnElem,
        ly: &mut Vec<(String, Option<ConnectorPrefix>)>,
        conns: &mut Connections,
        o: &Origin,
    ) -> Res<()> {
        let Some(node) = &x.node else {
            return Ok(());
        };
        let mut parts = Vec::new();
        self.overdetermined_parts(node, "", &mut parts)?;
        // Mismatched connectors are reported by `Connections::add`.
        if parts.is_empty() || lx.len() != ly.len() {
            return Ok(());
        }
        for part in parts {
            let below = |s: &str| {
                s.strip_prefix(part.suffix.as_str())
                    .is_some_and(|r| r.is_empty() || r.starts_with('.') || r.starts_with('['))
            };
            let mut unions = Vec::new();
            let (mut kx, mut ky) = (Vec::new(), Vec::new());
            for ((sa, ka), (sb, kb)) in lx.drain(..).zip(ly.drain(..)) {
                if below(&sa) && sa == sb {
                    unions.push((
                        (format!("{}{sa}", x.name), x.outside),
                        x.name.clone(),
                        (format!("{}{sb}", y.name), y.outside),
                        y.name.clone(),
                        ka,
                    ));
                } else {
                    kx.push((sa, ka));
                    ky.push((sb, kb));
                }
            }
            *lx = kx;
            *ly = ky;
            let a = format!("{}{}", x.name, part.suffix);
            let b = format!("{}{}", y.name, part.suffix);
            let constraint = self.equality_constraint_equations(&part, &a, &b, o)?;
            conns.graph.optional.push(OptionalEdge {
                a,
                b,
                unions,
                constraint,
                origin: o.clone(),
            });
        }
        Ok(())
    }
}

impl<'a> Flattener<'a> {
    /// `Connections.isRoot(a)` / `rooted(a)`: a placeholder call, replaced by its value once
    /// the graph is solved.
    pub fn graph_query(
        &self,
        op: &str,
        positional: &[ast::Expr],
        named: &[ast::NamedArg],
        env: &Env,
        cx: &mut Cx,
        span: moss_syntax::Span,
    ) -> Res<crate::expand::Val> {
        let Some(a) = positional.first().or(named.first().map(|n| &n.value)) else {
            return err(span, format!("Connections.{op} needs one argument"));
        };
        let node = self.graph_node_name(a, env, cx)?;
        let func = if op == "isRoot" { IS_ROOT } else { ROOTED };
        Ok(crate::expand::Val::S(Expr::Call {
            func: func.to_string(),
            args: vec![Expr::String(node)],
        }))
    }
}

impl<'a> Flattener<'a> {
    /// For an overdetermined component: the number of residues of all its elements (what it
    /// counts as potential variables in a connector); `None` for other components.
    pub fn overdetermined_size(
        &self,
        node: &NodeRef,
        comp: &std::rc::Rc<Comp>,
        ty: &ResolvedType,
    ) -> Res<Option<usize>> {
        let Some(f) = ty.class.and_then(|c| self.equality_constraint_of(c)) else {
            return Ok(None);
        };
        let dims = self.comp_dims(node, comp)?;
        let own: usize = match ty.base {
            Base::Class(_) => dims.iter().product(),
            _ => dims[..dims.len().saturating_sub(ty.dims.len())]
                .iter()
                .product(),
        };
        let fnode = self.package_node(f);
        let elems = self.elems(&fnode);
        let mut residues = 0;
        if let Some(out) = elems
            .comps
            .iter()
            .find(|c| self.comp_causality(&fnode, c) == Some(ast::Causality::Output))
        {
            residues = self.comp_dims(&fnode, out)?.iter().product();
        }
        Ok(Some(own * residues))
    }
}
