//! Connections: resolving the sides of `connect` into connector elements, the scalar
//! leaves and type signatures of connectors (for the checks of spec 9.3 and the connection
//! sets of [`crate::connect`]), `cardinality`, and connections of expandable connectors,
//! which are deferred to [`crate::expandable`]. Apart from equations because it works on
//! instances (connectors) rather than on expressions.

use crate::connect::{ConnElem, Connections};
use crate::ctx::{format_indices, index_tuples, Flattener};
use crate::expand::{cref_text, qualified, qualified_at, Cx, Val};
use crate::flat::{Expr, Origin};
use crate::fold;
use crate::inst::*;
use moss_syntax::ast::{self, ClassKind, ExprKind};
use moss_syntax::Span;

/// One scalar variable of a connector: its suffix after the connector name and its kind.
type Leaf = (String, Option<ast::ConnectorPrefix>);

impl<'a> Flattener<'a> {
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

    pub(super) fn connect(
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
