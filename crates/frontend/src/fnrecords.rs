//! Record-valued expressions inside function bodies (spec 12.6 record constructors, chapter
//! 14 operator overloading). A record local, input or output of a function is scalarized
//! into one function variable per field (`c.re`, `c.im`; arrays of records into one array
//! per field), so a record-valued expression is translated to the expressions of its
//! fields ([`FVal::R`]): references (`v[j]`), record constructors (`Complex(a, b)`, or the
//! record's `'constructor'` operator), calls of functions returning records, operators on
//! operator records (`a*b + c`, `-c`, chosen by the kinds of the operands like
//! `operators.rs` does for model equations, scalars converted by `'constructor'`),
//! if-expressions and array constructors of records. Calls are hoisted into temporaries
//! assigned by a tuple assignment right before the statement, so that nothing downstream
//! has to know about records.

use crate::ctx::Flattener;
use crate::expand::{Cx, Val};
use crate::flat::{BinaryOp as FB, Expr, Statement, Subscript, UnaryOp as FU};
use crate::flatten::origin;
use crate::funcs::FnEnv;
use crate::inst::*;
use crate::loader::ClassId;
use moss_syntax::ast::{self, ExprKind, FunctionArgs};
use moss_syntax::Span;
use std::rc::Rc;

/// A record value inside a function body: the expressions of its scalarized fields, in
/// the order of `record_field_list(class)`.
#[derive(Clone, Debug)]
pub(crate) struct RecExpr {
    pub class: ClassId,
    pub fields: Vec<Expr>,
    /// Array dimensions of the value (0: one record).
    pub rank: usize,
}

/// The value of an expression of a function body.
#[derive(Clone, Debug)]
pub(crate) enum FVal {
    S(Expr),
    R(RecExpr),
}

impl FVal {
    pub fn scalar(self, span: Span) -> Res<Expr> {
        match self {
            FVal::S(e) => Ok(e),
            FVal::R(r) => err(
                span,
                format!(
                    "a record (of {} fields) is used where a scalar or array is expected",
                    r.fields.len()
                ),
            ),
        }
    }
}

/// A guess of the number of array dimensions of a scalar-side expression (only literal
/// arrays are known to be arrays; used to choose among operator functions).
fn rank_guess(e: &Expr) -> usize {
    match e {
        Expr::Array(items) => 1 + items.first().map(rank_guess).unwrap_or(0),
        _ => 0,
    }
}

impl<'a> Flattener<'a> {
    /// The record class of component `name` of record class `class`, if it is a record.
    pub(crate) fn record_member_class(&self, class: ClassId, name: &str) -> Option<ClassId> {
        let node = self.package_node(class);
        let elems = self.elems(&node);
        let c = elems.comps.iter().find(|c| &*c.name == name)?;
        match self.comp_type(&node, c).ok()?.base {
            Base::Class(rc) if self.is_record_class(rc) => Some(self.lk.follow_short_class(rc)),
            _ => None,
        }
    }

    /// `r`, `v[j]`, `r.sub` for a record-typed local of the function: its field variables.
    pub(crate) fn record_ref(&self, c: &ast::ComponentRef, fenv: &FnEnv) -> Res<Option<RecExpr>> {
        if c.global {
            return Ok(None);
        }
        let root = c.parts[0].name.as_str();
        let Some((mut class, rank)) = fenv.hoist.record_classes.borrow().get(root).copied() else {
            return Ok(None);
        };
        let Some(all) = fenv.hoist.records.borrow().get(root).cloned() else {
            return Ok(None);
        };
        let mut prefix = String::new();
        for p in &c.parts[1..] {
            match self.record_member_class(class, p.name.as_str()) {
                Some(sub) => {
                    class = sub;
                    prefix.push_str(p.name.as_str());
                    prefix.push('.');
                }
                None => return Ok(None),
            }
        }
        let fields: Vec<_> = all.iter().filter(|f| f.path.starts_with(&prefix)).collect();
        let Some(first) = fields.first() else {
            return Ok(None);
        };
        let base = Expr::Var {
            name: format!("{root}.{}", first.path),
            subscripts: Vec::new(),
        };
        let mut subs = Vec::new();
        let mut dropped = 0;
        let all_subs: Vec<&ast::Subscript> =
            c.parts.iter().flat_map(|p| p.subscripts.iter()).collect();
        for (k, s) in all_subs.iter().enumerate() {
            subs.push(match s {
                ast::Subscript::Colon(_) => Subscript::All,
                ast::Subscript::Expr(e) => {
                    let end = Expr::Call {
                        func: "size".into(),
                        args: vec![base.clone(), Expr::Integer(k as i64 + 1)],
                    };
                    let x = self.fval_end(e, fenv, Some(&end))?.scalar(e.span)?;
                    if !matches!(x, Expr::Range { .. } | Expr::Array(_)) {
                        dropped += 1;
                    }
                    Subscript::Index(x)
                }
            });
        }
        Ok(Some(RecExpr {
            class,
            fields: fields
                .iter()
                .map(|f| Expr::Var {
                    name: format!("{root}.{}", f.path),
                    subscripts: subs.clone(),
                })
                .collect(),
            rank: rank.saturating_sub(dropped),
        }))
    }

    /// A record value known at translation time (a package constant such as
    /// `ComplexMath.j`) as field expressions.
    fn record_of_val(&self, v: &Val, span: Span) -> Res<Option<RecExpr>> {
        let (rank, elem) = match v {
            Val::R(_) => (0, v),
            Val::A(items) => match items.first() {
                Some(x @ Val::R(_)) => (1, x),
                _ => return Ok(None),
            },
            Val::S(_) => return Ok(None),
        };
        let Some(class) = self.record_class_of(elem) else {
            return Ok(None);
        };
        let fields = self.record_field_list(class, span)?;
        let mut out = Vec::new();
        for f in &fields {
            match crate::records::field_value(v, &f.path) {
                Some(x) => out.push(x.to_expr()),
                None => return Ok(None),
            }
        }
        Ok(Some(RecExpr {
            class,
            fields: out,
            rank,
        }))
    }

    /// Translate an expression of a function body that may be record-valued.
    pub(crate) fn fval(&self, e: &ast::Expr, fenv: &FnEnv) -> Res<FVal> {
        self.fval_end(e, fenv, None)
    }

    pub(crate) fn fval_end(&self, e: &ast::Expr, fenv: &FnEnv, end: Option<&Expr>) -> Res<FVal> {
        Ok(match &e.kind {
            ExprKind::Ref(c) => {
                if let Some(r) = self.record_ref(c, fenv)? {
                    return Ok(FVal::R(r));
                }
                let first = c.parts[0].name.as_str();
                if c.global || !fenv.locals.contains(first) {
                    // A record constant, or an element of an array of them chosen by values
                    // of the function (`data[i]` in a loop).
                    let v = match self.expand_cref(c, &fenv.env, &mut Cx::eval()) {
                        Ok(v) => Some(v),
                        Err(_) => self
                            .constant_at_local_subscripts(c, fenv)
                            .and_then(|r| r.ok()),
                    };
                    if let Some(v) = v {
                        if let Some(r) = self.record_of_val(&v, e.span)? {
                            return Ok(FVal::R(r));
                        }
                    }
                }
                FVal::S(self.fexpr_end(e, fenv, end)?)
            }
            ExprKind::Call { function, args } => {
                self.fval_call(function, args, fenv, e.span, end)?
            }
            ExprKind::Unary { op, operand } => {
                let a = self.fval_end(operand, fenv, end)?;
                match (op, a) {
                    (ast::UnaryOp::Plus | ast::UnaryOp::ElemPlus, a) => a,
                    (ast::UnaryOp::Neg | ast::UnaryOp::ElemNeg, FVal::R(r)) => {
                        self.record_operator("'-'", vec![FVal::R(r)], fenv, e.span)?
                    }
                    (ast::UnaryOp::Neg | ast::UnaryOp::ElemNeg, FVal::S(a)) => {
                        FVal::S(crate::fold::unary(FU::Neg, a))
                    }
                    (ast::UnaryOp::Not, a) => {
                        FVal::S(crate::fold::unary(FU::Not, a.scalar(e.span)?))
                    }
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.fval_end(lhs, fenv, end)?;
                let b = self.fval_end(rhs, fenv, end)?;
                match (a, b) {
                    (FVal::S(a), FVal::S(b)) => FVal::S(Expr::Binary {
                        op: *op,
                        lhs: Box::new(a),
                        rhs: Box::new(b),
                    }),
                    (a, b) => {
                        let Some(name) = crate::operators::operator_name(*op) else {
                            return err(e.span, "operator not defined for records");
                        };
                        self.record_operator(name, vec![a, b], fenv, e.span)?
                    }
                }
            }
            ExprKind::If {
                branches,
                else_branch,
            } => self.fval_if(branches, else_branch, fenv, end, e.span)?,
            ExprKind::Array(items) => {
                let mut vals = Vec::new();
                for i in items {
                    vals.push(self.fval_end(i, fenv, end)?);
                }
                if vals.iter().all(|v| matches!(v, FVal::S(_))) {
                    FVal::S(Expr::Array(
                        vals.into_iter()
                            .map(|v| v.scalar(e.span))
                            .collect::<Res<Vec<_>>>()?,
                    ))
                } else {
                    let mut recs = Vec::new();
                    for v in vals {
                        match v {
                            FVal::R(r) => recs.push(r),
                            FVal::S(_) => {
                                return err(e.span, "an array cannot mix records and other values")
                            }
                        }
                    }
                    let class = recs[0].class;
                    let rank = recs[0].rank;
                    let n = recs[0].fields.len();
                    if recs.iter().any(|r| r.fields.len() != n || r.rank != rank) {
                        return err(e.span, "the records of an array must have the same type");
                    }
                    let fields = (0..n)
                        .map(|k| Expr::Array(recs.iter().map(|r| r.fields[k].clone()).collect()))
                        .collect();
                    FVal::R(RecExpr {
                        class,
                        fields,
                        rank: rank + 1,
                    })
                }
            }
            ExprKind::ArrayComprehension { body, indices } => {
                match self.record_comprehension(body, indices, fenv, e.span)? {
                    Some(r) => FVal::R(r),
                    None => FVal::S(self.fexpr_end(e, fenv, end)?),
                }
            }
            _ => FVal::S(self.fexpr_end(e, fenv, end)?),
        })
    }

    /// `{r(i) for i in range}` with a record body: one array temporary per field, filled
    /// by a loop (what the body needs computed inside the loop). `None` when the body is
    /// not a record.
    fn record_comprehension(
        &self,
        body: &ast::Expr,
        indices: &[ast::ForIndex],
        fenv: &FnEnv,
        span: Span,
    ) -> Res<Option<RecExpr>> {
        let [idx] = indices else {
            return Ok(None);
        };
        let Some(r) = &idx.range else {
            return Ok(None);
        };
        let mut inner = FnEnv {
            env: fenv.env.clone(),
            locals: fenv.locals.clone(),
            hoist: fenv.hoist.clone(),
        };
        inner.locals.insert(idx.name.to_string());
        let saved_type = fenv
            .hoist
            .types
            .borrow_mut()
            .insert(idx.name.to_string(), crate::flat::ScalarType::Integer);
        let saved = std::mem::take(&mut *fenv.hoist.pre.borrow_mut());
        let v = self.fval(body, &inner);
        let mut stmts = std::mem::replace(&mut *fenv.hoist.pre.borrow_mut(), saved);
        {
            let mut types = fenv.hoist.types.borrow_mut();
            match saved_type {
                Some(t) => types.insert(idx.name.to_string(), t),
                None => types.remove(idx.name.as_str()),
            };
        }
        let rec =
            match v? {
                FVal::R(rec) if rec.rank == 0 => rec,
                FVal::R(_) => return err(
                    span,
                    "array constructors of arrays of records are not supported inside functions",
                ),
                // Not a record: translated again as before (the temporaries made here stay
                // unused).
                FVal::S(_) => return Ok(None),
            };
        let o = origin(span, &fenv.env.node);
        let range = self.fval(r, fenv)?.scalar(r.span)?;
        let count = crate::funcs::range_length(&range);
        let fields = self.record_field_list(rec.class, span)?;
        let temps = self.record_temps(fenv, &fields, 1, Some(&[Some(count)]));
        let k = Expr::Var {
            name: fenv
                .hoist
                .temp(crate::flat::ScalarType::Integer, Vec::new()),
            subscripts: Vec::new(),
        };
        stmts.insert(
            0,
            Statement::Assign {
                target: k.clone(),
                value: Expr::Binary {
                    op: FB::Add,
                    lhs: Box::new(k.clone()),
                    rhs: Box::new(Expr::Integer(1)),
                },
                origin: o.clone(),
            },
        );
        for (t, v) in temps.iter().zip(rec.fields) {
            stmts.push(Statement::Assign {
                target: index_var(t, &k),
                value: v,
                origin: o.clone(),
            });
        }
        let mut pre = fenv.hoist.pre.borrow_mut();
        pre.push(Statement::Assign {
            target: k.clone(),
            value: Expr::Integer(0),
            origin: o.clone(),
        });
        pre.push(Statement::For {
            var: idx.name.to_string(),
            range,
            body: stmts,
            origin: o,
        });
        Ok(Some(RecExpr {
            class: rec.class,
            fields: temps,
            rank: 1,
        }))
    }

    /// `if c then a else b` with record branches: field-wise if-expressions, or (when a
    /// branch needs statements of its own, a call) an if-statement filling temporaries,
    /// so that only the chosen branch is computed.
    fn fval_if(
        &self,
        branches: &[(ast::Expr, ast::Expr)],
        else_branch: &ast::Expr,
        fenv: &FnEnv,
        end: Option<&Expr>,
        span: Span,
    ) -> Res<FVal> {
        let mut conds = Vec::new();
        for (c, _) in branches {
            conds.push(self.fval_end(c, fenv, end)?.scalar(c.span)?);
        }
        let mut values = Vec::new();
        let mut pres = Vec::new();
        for v in branches
            .iter()
            .map(|(_, v)| v)
            .chain(std::iter::once(else_branch))
        {
            let saved = std::mem::take(&mut *fenv.hoist.pre.borrow_mut());
            let r = self.fval_end(v, fenv, end);
            let mine = std::mem::replace(&mut *fenv.hoist.pre.borrow_mut(), saved);
            values.push(r?);
            pres.push(mine);
        }
        if values.iter().all(|v| matches!(v, FVal::S(_))) {
            // As before records: statements of the branches run before the statement.
            for p in pres {
                fenv.hoist.pre.borrow_mut().extend(p);
            }
            let mut vs: Vec<Expr> = values
                .into_iter()
                .map(|v| v.scalar(span))
                .collect::<Res<_>>()?;
            let else_ = vs.pop().unwrap_or(Expr::Integer(0));
            return Ok(FVal::S(Expr::If {
                branches: conds.into_iter().zip(vs).collect(),
                else_: Box::new(else_),
            }));
        }
        let mut recs = Vec::new();
        for v in values {
            match v {
                FVal::R(r) => recs.push(r),
                FVal::S(_) => {
                    return err(
                        span,
                        "the branches of an if-expression must all be records of one type",
                    )
                }
            }
        }
        let class = recs[0].class;
        let rank = recs[0].rank;
        let n = recs[0].fields.len();
        if recs.iter().any(|r| r.fields.len() != n) {
            return err(
                span,
                "the branches of an if-expression must all be records of one type",
            );
        }
        if pres.iter().all(|p| p.is_empty()) {
            let else_rec = recs
                .pop()
                .expect("`values` has the else branch chained last, so `recs` is never empty");
            let fields = (0..n)
                .map(|k| Expr::If {
                    branches: conds
                        .iter()
                        .cloned()
                        .zip(recs.iter().map(|r| r.fields[k].clone()))
                        .collect(),
                    else_: Box::new(else_rec.fields[k].clone()),
                })
                .collect();
            return Ok(FVal::R(RecExpr {
                class,
                fields,
                rank,
            }));
        }
        let field_list = self.record_field_list(class, span)?;
        let temps = self.record_temps(fenv, &field_list, rank, None);
        let o = origin(span, &fenv.env.node);
        let assign = |r: &RecExpr, mut pre: Vec<Statement>| {
            pre.extend(temps.iter().zip(&r.fields).map(|(t, v)| Statement::Assign {
                target: t.clone(),
                value: v.clone(),
                origin: o.clone(),
            }));
            pre
        };
        let mut pres = pres.into_iter();
        let mut bs = Vec::new();
        for (c, r) in conds.into_iter().zip(&recs[..recs.len() - 1]) {
            bs.push((c, assign(r, pres.next().unwrap_or_default())));
        }
        let else_ = assign(&recs[recs.len() - 1], pres.next().unwrap_or_default());
        fenv.hoist.pre.borrow_mut().push(Statement::If {
            branches: bs,
            else_,
            origin: o.clone(),
        });
        Ok(FVal::R(RecExpr {
            class,
            fields: temps,
            rank,
        }))
    }

    /// Temporaries for the fields of a record value (`rank` unknown dimensions before the
    /// fields' own, or the given outer dimensions).
    fn record_temps(
        &self,
        fenv: &FnEnv,
        fields: &[crate::records::RecordField],
        rank: usize,
        outer: Option<&[Option<Expr>]>,
    ) -> Vec<Expr> {
        fields
            .iter()
            .map(|f| {
                let mut dims: Vec<Option<Expr>> = match outer {
                    Some(o) => o.to_vec(),
                    None => vec![None; rank],
                };
                dims.extend(f.dims.iter().map(|d| Some(Expr::Integer(*d as i64))));
                let name = fenv.hoist.temp(f.ty.clone(), dims);
                Expr::Var {
                    name,
                    subscripts: Vec::new(),
                }
            })
            .collect()
    }

    /// The outputs of a call of a function whose outputs are plain expressions of its
    /// inputs (no locals, each output assigned once, e.g. `Complex`'s operators and
    /// constructor), with the arguments put in: the call inlined. Arguments used more
    /// than once that are not variables or literals go into temporaries first. `None`
    /// when the function is not of that form.
    pub(crate) fn inline_simple_call(&self, call: &Expr, fenv: &FnEnv) -> Option<Vec<Expr>> {
        let Expr::Call { func: name, args } = call else {
            return None;
        };
        let id = *self.functions.borrow().get(name)?;
        let d = self.depth.get();
        if d > 50 {
            return None;
        }
        self.depth.set(d + 1);
        let func = self.translate_function(name, id);
        self.depth.set(d);
        let func = func.ok()?;
        let crate::flat::FunctionBody::Algorithm(body) = &func.body else {
            return None;
        };
        if !func.locals.is_empty()
            || func.is_impure
            || func.inputs.len() != args.len()
            || func
                .inputs
                .iter()
                .chain(&func.outputs)
                .any(|v| !v.dims.is_empty())
        {
            return None;
        }
        let mut outs: Vec<(String, Expr)> = Vec::new();
        for o in &func.outputs {
            if let Some(d) = &o.default {
                let mut x = d.clone();
                crate::funcs::substitute(&mut x, &outs);
                outs.push((o.name.clone(), x));
            }
        }
        for s in body {
            let Statement::Assign {
                target: Expr::Var { name, subscripts },
                value,
                ..
            } = s
            else {
                return None;
            };
            if !subscripts.is_empty() || !func.outputs.iter().any(|o| &o.name == name) {
                return None;
            }
            let mut x = value.clone();
            crate::funcs::substitute(&mut x, &outs);
            outs.retain(|(n, _)| n != name);
            outs.push((name.clone(), x));
        }
        let mut values = Vec::new();
        for o in &func.outputs {
            values.push(outs.iter().find(|(n, _)| *n == o.name)?.1.clone());
        }
        // Inputs: substituted directly when trivial or used at most once.
        let mut map = Vec::new();
        for (input, arg) in func.inputs.iter().zip(args) {
            let mut uses = 0;
            for v in &values {
                crate::walk::visit(v, &mut |y| {
                    if matches!(y, Expr::Var { name, subscripts } if *name == input.name && subscripts.is_empty())
                    {
                        uses += 1;
                    }
                });
            }
            let trivial = crate::fold::is_literal(arg)
                || matches!(arg, Expr::Var { subscripts, .. }
                    if subscripts.iter().all(|s| matches!(s, Subscript::Index(i) if crate::fold::is_literal(i) || matches!(i, Expr::Var { subscripts, .. } if subscripts.is_empty()))));
            let value = if trivial || uses <= 1 {
                arg.clone()
            } else {
                let t = fenv.hoist.temp(input.ty.clone(), Vec::new());
                let tv = Expr::Var {
                    name: t,
                    subscripts: Vec::new(),
                };
                fenv.hoist.pre.borrow_mut().push(Statement::Assign {
                    target: tv.clone(),
                    value: arg.clone(),
                    origin: func.origin.clone(),
                });
                tv
            };
            map.push((input.name.clone(), value));
        }
        for v in &mut values {
            crate::funcs::substitute(v, &map);
        }
        Some(values)
    }

    /// A call whose first output is a record: its fields into temporaries (or the
    /// expressions of its outputs, when it can be inlined).
    fn hoist_record_call(
        &self,
        call: Expr,
        class: ClassId,
        outer: Vec<Option<Expr>>,
        fenv: &FnEnv,
        span: Span,
    ) -> Res<FVal> {
        let fields = self.record_field_list(class, span)?;
        let rank = outer.len();
        if rank == 0 {
            if let Some(values) = self.inline_simple_call(&call, fenv) {
                if values.len() >= fields.len() {
                    return Ok(FVal::R(RecExpr {
                        class,
                        fields: values.into_iter().take(fields.len()).collect(),
                        rank,
                    }));
                }
            }
        }
        let temps = self.record_temps(fenv, &fields, rank, Some(&outer));
        fenv.hoist.pre.borrow_mut().push(Statement::TupleAssign {
            targets: temps.iter().cloned().map(Some).collect(),
            value: call,
            origin: origin(span, &fenv.env.node),
        });
        Ok(FVal::R(RecExpr {
            class,
            fields: temps,
            rank,
        }))
    }

    /// A call inside a function body that may return a record.
    fn fval_call(
        &self,
        function: &ast::ComponentRef,
        args: &FunctionArgs,
        fenv: &FnEnv,
        span: Span,
        end: Option<&Expr>,
    ) -> Res<FVal> {
        let class = self.lk.resolve_class_name(
            (!function.global).then_some(fenv.env.scope),
            &crate::expand::cref_to_name(function),
            false,
        );
        if let (Some(rc), FunctionArgs::List { positional, named }) = (class, args) {
            if self.is_record_class(rc) {
                let rc = self.lk.follow_short_class(rc);
                if matches!(self.lk.member(rc, "'constructor'"), Some(Found::Class(_))) {
                    let mut vals = Vec::new();
                    for a in positional {
                        vals.push(self.fval_end(a, fenv, end)?);
                    }
                    let mut nvals = Vec::new();
                    for n in named {
                        nvals.push((n.name.name.to_string(), self.fval_end(&n.value, fenv, end)?));
                    }
                    return self.operator_call(rc, "'constructor'", vals, nvals, fenv, span);
                }
                let fields = self.record_field_list(rc, span)?;
                let values = self.constructor_fields(rc, args, &fields, fenv, span)?;
                return Ok(FVal::R(RecExpr {
                    class: rc,
                    fields: values,
                    rank: 0,
                }));
            }
        }
        if let FunctionArgs::List { positional, .. } = args {
            let fname = crate::expand::cref_text(function);
            if class.is_none() && fname == "fill" && !positional.is_empty() {
                if let FVal::R(r) = self.fval_end(&positional[0], fenv, end)? {
                    let mut dims = Vec::new();
                    for a in &positional[1..] {
                        dims.push(self.fval_end(a, fenv, end)?.scalar(a.span)?);
                    }
                    let n = dims.len();
                    return Ok(FVal::R(RecExpr {
                        class: r.class,
                        fields: r
                            .fields
                            .into_iter()
                            .map(|f| {
                                let mut args = vec![f];
                                args.extend(dims.iter().cloned());
                                Expr::Call {
                                    func: "fill".into(),
                                    args,
                                }
                            })
                            .collect(),
                        rank: r.rank + n,
                    }));
                }
            }
        }
        let info = self.fcall_info(function, args, fenv, span, end)?;
        if let Some(v) = info.value {
            return Ok(v);
        }
        match info.record_output {
            Some((rc, outer)) => self.hoist_record_call(info.call, rc, outer, fenv, span),
            None => Ok(FVal::S(info.call)),
        }
    }

    /// Does function `f` accept these argument values (by count and kind)?
    fn accepts_fvals(&self, f: ClassId, args: &[FVal], named: &[(String, FVal)]) -> bool {
        let fnode = self.package_node(f);
        let elems = self.elems(&fnode);
        let inputs: Vec<&Rc<Comp>> = elems
            .comps
            .iter()
            .filter(|c| self.comp_causality(&fnode, c) == Some(ast::Causality::Input))
            .collect();
        if args.len() > inputs.len() {
            return false;
        }
        let mut given: Vec<Option<&FVal>> = vec![None; inputs.len()];
        for (k, a) in args.iter().enumerate() {
            given[k] = Some(a);
        }
        for (n, a) in named {
            match inputs.iter().position(|c| &*c.name == n.as_str()) {
                Some(k) if given[k].is_none() => given[k] = Some(a),
                _ => return false,
            }
        }
        inputs.iter().zip(&given).all(|(c, a)| {
            let Some(a) = a else {
                return c.mods.binding.is_some();
            };
            let Ok(ty) = self.comp_type(&fnode, c) else {
                return false;
            };
            let dims = c.decl.subscripts.len() + c.type_subs.len() + ty.dims.len();
            match (a, &ty.base) {
                (FVal::R(r), Base::Class(rc)) if self.is_record_class(*rc) => {
                    self.lk.follow_short_class(*rc) == r.class && dims == r.rank
                }
                (FVal::R(_), _) => false,
                (FVal::S(x), base) => base.is_primitive() && dims == rank_guess(x),
            }
        })
    }

    /// Operator `op` of record class `class` applied to `args` (operator functions chosen
    /// by the kinds of the arguments; scalars converted by the `'constructor'`).
    pub(crate) fn operator_call(
        &self,
        class: ClassId,
        op: &str,
        args: Vec<FVal>,
        named: Vec<(String, FVal)>,
        fenv: &FnEnv,
        span: Span,
    ) -> Res<FVal> {
        let candidates = self.operator_functions(class, op);
        if let Some(f) = candidates
            .iter()
            .find(|f| self.accepts_fvals(**f, &args, &named))
        {
            return self.call_with_fvals(*f, args, named, fenv, span);
        }
        if op != "'constructor'" && args.iter().any(|a| matches!(a, FVal::S(_))) {
            let mut converted = Vec::new();
            for a in args {
                converted.push(match a {
                    FVal::S(x) if rank_guess(&x) == 0 => self.operator_call(
                        class,
                        "'constructor'",
                        vec![FVal::S(x)],
                        Vec::new(),
                        fenv,
                        span,
                    )?,
                    other => other,
                });
            }
            if let Some(f) = candidates
                .iter()
                .find(|f| self.accepts_fvals(**f, &converted, &named))
            {
                return self.call_with_fvals(*f, converted, named, fenv, span);
            }
        }
        err(
            span,
            format!(
                "no operator {op} of `{}` accepts these arguments",
                self.lk.name_of(class)
            ),
        )
    }

    /// An operator on record operands: the operator of the first record operand's class,
    /// else of the other's.
    fn record_operator(&self, op: &str, args: Vec<FVal>, fenv: &FnEnv, span: Span) -> Res<FVal> {
        let mut classes: Vec<ClassId> = Vec::new();
        for a in &args {
            if let FVal::R(r) = a {
                if !classes.contains(&r.class) {
                    classes.push(r.class);
                }
            }
        }
        let mut first_err = None;
        for c in classes {
            match self.operator_call(c, op, args.clone(), Vec::new(), fenv, span) {
                Ok(v) => return Ok(v),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => err(
                span,
                format!("operator {op} is not defined for these values"),
            ),
        }
    }

    /// Call function `f` with argument values (records passed field by field, defaults of
    /// the inputs not given filled in).
    fn call_with_fvals(
        &self,
        f: ClassId,
        args: Vec<FVal>,
        named: Vec<(String, FVal)>,
        fenv: &FnEnv,
        span: Span,
    ) -> Res<FVal> {
        let fnode = self.package_node(f);
        let elems = self.elems(&fnode);
        let inputs: Vec<Rc<Comp>> = elems
            .comps
            .iter()
            .filter(|c| self.comp_causality(&fnode, c) == Some(ast::Causality::Input))
            .cloned()
            .collect();
        let mut slots: Vec<Option<FVal>> = vec![None; inputs.len()];
        for (k, a) in args.into_iter().enumerate() {
            if k < slots.len() {
                slots[k] = Some(a);
            }
        }
        for (n, a) in named {
            if let Some(k) = inputs.iter().position(|c| &*c.name == n.as_str()) {
                slots[k] = Some(a);
            }
        }
        let info = self.finish_call(f, &fnode, &elems, &inputs, slots, fenv, span)?;
        if let Some(v) = info.value {
            return Ok(v);
        }
        match info.record_output {
            Some((rc, outer)) => self.hoist_record_call(info.call, rc, outer, fenv, span),
            None => Ok(FVal::S(info.call)),
        }
    }
}

/// A translated call of a user function inside a function body.
pub(crate) struct FCall {
    pub call: Expr,
    /// The value when the call was computed into temporaries already (a vectorized call).
    pub value: Option<FVal>,
    /// When the first output is a record: its class and the output's array dimensions.
    pub record_output: Option<(ClassId, Vec<Option<Expr>>)>,
}

impl<'a> Flattener<'a> {
    /// Place the argument values of a call of `id` (defaults filled in, records passed
    /// field by field) and say whether its first output is a record.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finish_call(
        &self,
        id: ClassId,
        fnode: &NodeRef,
        elems: &Elems,
        inputs: &[Rc<Comp>],
        mut slots: Vec<Option<FVal>>,
        fenv: &FnEnv,
        span: Span,
    ) -> Res<FCall> {
        let full = self.lk.name_of(id);
        self.functions.borrow_mut().insert(full.clone(), id);
        let callee_locals: rustc_hash::FxHashSet<String> =
            elems.comps.iter().map(|c| c.name.to_string()).collect();
        let given = |slots: &[Option<FVal>]| -> Vec<(String, Expr)> {
            inputs
                .iter()
                .zip(slots)
                .filter_map(|(c, s)| match s {
                    Some(FVal::S(x)) => Some((c.name.to_string(), x.clone())),
                    _ => None,
                })
                .collect()
        };
        for k in 0..inputs.len() {
            if slots[k].is_some() {
                continue;
            }
            let Some(b) = &inputs[k].mods.binding else {
                return err(
                    span,
                    format!("missing argument `{}` in call of `{full}`", inputs[k].name),
                );
            };
            let cenv = FnEnv {
                env: b.env.clone(),
                locals: callee_locals.clone(),
                hoist: fenv.hoist.clone(),
            };
            let mut d = self.fval(&b.expr, &cenv)?;
            let g = given(&slots);
            match &mut d {
                FVal::S(x) => crate::funcs::substitute(x, &g),
                FVal::R(r) => {
                    for x in &mut r.fields {
                        crate::funcs::substitute(x, &g);
                    }
                }
            }
            slots[k] = Some(d);
        }
        // A record argument with one dimension more than its input: the call is applied
        // to each element (spec 12.4.6), in a loop filling temporaries.
        for (c, slot) in inputs.iter().zip(&slots) {
            let Some(FVal::R(r)) = slot else { continue };
            let declared = c.decl.subscripts.len()
                + c.type_subs.len()
                + self.comp_type(fnode, c).map(|t| t.dims.len()).unwrap_or(0);
            if r.rank == declared + 1 {
                return self.vectorized_call(id, fnode, elems, inputs, slots, fenv, span);
            }
        }
        let g = given(&slots);
        let mut args = Vec::new();
        for (c, slot) in inputs.iter().zip(slots.into_iter().flatten()) {
            let record = match self.comp_type(fnode, c)?.base {
                Base::Class(rc) if self.is_record_class(rc) => Some(rc),
                _ => None,
            };
            match (record, slot) {
                (Some(_), FVal::R(r)) => args.extend(r.fields),
                (Some(rc), FVal::S(_)) => {
                    return err(
                        span,
                        format!(
                            "argument `{}` of `{full}` must be a `{}` record",
                            c.name,
                            self.lk.name_of(rc)
                        ),
                    )
                }
                (None, FVal::S(x)) => args.push(x),
                (None, FVal::R(_)) => {
                    return err(
                        span,
                        format!("argument `{}` of `{full}` cannot be a record", c.name),
                    )
                }
            }
        }
        let call = Expr::Call { func: full, args };
        // The first output: a record?
        let out = elems
            .comps
            .iter()
            .find(|c| self.comp_causality(fnode, c) == Some(ast::Causality::Output));
        let mut record_output = None;
        if let Some(out) = out {
            let ty = self.comp_type(fnode, out)?;
            if let Base::Class(rc) = ty.base {
                if self.is_record_class(rc) {
                    let oenv = FnEnv {
                        env: Env {
                            node: fnode.clone(),
                            scope: out.scope,
                        },
                        locals: callee_locals.clone(),
                        hoist: fenv.hoist.clone(),
                    };
                    let mut outer = Vec::new();
                    for s in out.decl.subscripts.iter().chain(out.type_subs.iter()) {
                        outer.push(match s {
                            ast::Subscript::Colon(_) => None,
                            ast::Subscript::Expr(e) => {
                                let mut x = self.fval(e, &oenv)?.scalar(e.span)?;
                                // a size naming inputs not given as plain values is unknown
                                let mut unknown = false;
                                crate::walk::visit(&x, &mut |y| {
                                    if let Expr::Var { name, .. } = y {
                                        unknown |= !g.iter().any(|(n, _)| n == name);
                                    }
                                });
                                crate::funcs::substitute(&mut x, &g);
                                (!unknown).then_some(x)
                            }
                        });
                    }
                    record_output = Some((self.lk.follow_short_class(rc), outer));
                }
            }
        }
        Ok(FCall {
            call,
            value: None,
            record_output,
        })
    }

    /// `f(v)` with `v` an array of records where `f` takes one record: a loop over the
    /// elements filling an array temporary per output field (or one for a scalar output).
    #[allow(clippy::too_many_arguments)]
    fn vectorized_call(
        &self,
        id: ClassId,
        fnode: &NodeRef,
        elems: &Elems,
        inputs: &[Rc<Comp>],
        slots: Vec<Option<FVal>>,
        fenv: &FnEnv,
        span: Span,
    ) -> Res<FCall> {
        let o = origin(span, &fenv.env.node);
        let index = fenv.hoist.fresh_name("moss_i");
        let iv = Expr::Var {
            name: index.clone(),
            subscripts: Vec::new(),
        };
        let mut count = None;
        let mut elem_slots = Vec::new();
        for (c, slot) in inputs.iter().zip(slots) {
            let declared = c.decl.subscripts.len()
                + c.type_subs.len()
                + self.comp_type(fnode, c).map(|t| t.dims.len()).unwrap_or(0);
            elem_slots.push(match slot {
                Some(FVal::R(r)) if r.rank == declared + 1 => {
                    let mut fields = Vec::new();
                    for f in r.fields {
                        let base = match f {
                            Expr::Var { ref subscripts, .. } if subscripts.is_empty() => f,
                            other => {
                                let ty = infer_type_of(&other, fenv);
                                let t = Expr::Var {
                                    name: fenv.hoist.temp(ty, Vec::new()),
                                    subscripts: Vec::new(),
                                };
                                fenv.hoist.pre.borrow_mut().push(Statement::Assign {
                                    target: t.clone(),
                                    value: other,
                                    origin: o.clone(),
                                });
                                t
                            }
                        };
                        count.get_or_insert_with(|| Expr::Call {
                            func: "size".into(),
                            args: vec![base.clone(), Expr::Integer(1)],
                        });
                        let Expr::Var { name, .. } = base else {
                            return err(span, "internal error: vectorized argument");
                        };
                        fields.push(Expr::Var {
                            name,
                            subscripts: vec![Subscript::Index(iv.clone())],
                        });
                    }
                    Some(FVal::R(RecExpr {
                        class: r.class,
                        fields,
                        rank: r.rank - 1,
                    }))
                }
                other => other,
            });
        }
        let Some(count) = count else {
            return err(span, "internal error: vectorized call without array");
        };
        // The call on one element, with what it needs computed inside the loop.
        let saved = std::mem::take(&mut *fenv.hoist.pre.borrow_mut());
        let one = self.finish_call(id, fnode, elems, inputs, elem_slots, fenv, span);
        let one = one.and_then(|info| match info.value {
            Some(v) => Ok(v),
            None => match info.record_output {
                Some((rc, outer)) if outer.is_empty() => {
                    self.hoist_record_call(info.call, rc, outer, fenv, span)
                }
                Some(_) => err(
                    span,
                    "a function returning arrays of records cannot be applied element-wise",
                ),
                None => Ok(FVal::S(info.call)),
            },
        });
        let mut body = std::mem::replace(&mut *fenv.hoist.pre.borrow_mut(), saved);
        let one = one?;
        let (targets, result) = match one {
            FVal::R(r) => {
                let fields = self.record_field_list(r.class, span)?;
                let temps = self.record_temps(fenv, &fields, 1, Some(&[Some(count.clone())]));
                for (t, v) in temps.iter().zip(r.fields) {
                    body.push(Statement::Assign {
                        target: index_var(t, &iv),
                        value: v,
                        origin: o.clone(),
                    });
                }
                let result = FVal::R(RecExpr {
                    class: r.class,
                    fields: temps.clone(),
                    rank: 1,
                });
                (temps, result)
            }
            FVal::S(x) => {
                let out = elems
                    .comps
                    .iter()
                    .find(|c| self.comp_causality(fnode, c) == Some(ast::Causality::Output));
                let ty = match out.map(|c| self.comp_type(fnode, c)).transpose()? {
                    Some(t) => match t.base {
                        Base::Integer => crate::flat::ScalarType::Integer,
                        Base::Boolean => crate::flat::ScalarType::Boolean,
                        Base::String => crate::flat::ScalarType::String,
                        _ => crate::flat::ScalarType::Real,
                    },
                    None => return err(span, "a function without outputs has no value"),
                };
                let t = Expr::Var {
                    name: fenv.hoist.temp(ty, vec![Some(count.clone())]),
                    subscripts: Vec::new(),
                };
                body.push(Statement::Assign {
                    target: index_var(&t, &iv),
                    value: x,
                    origin: o.clone(),
                });
                (vec![t.clone()], FVal::S(t))
            }
        };
        let _ = targets;
        fenv.hoist.pre.borrow_mut().push(Statement::For {
            var: index,
            range: Expr::Range {
                start: Box::new(Expr::Integer(1)),
                step: None,
                stop: Box::new(count),
            },
            body,
            origin: o,
        });
        let call = match &result {
            FVal::S(x) => x.clone(),
            FVal::R(r) => r.fields[0].clone(),
        };
        Ok(FCall {
            call,
            value: Some(result),
            record_output: None,
        })
    }
}

/// `t[i]` for a temporary `t`.
fn index_var(t: &Expr, i: &Expr) -> Expr {
    match t {
        Expr::Var { name, .. } => Expr::Var {
            name: name.clone(),
            subscripts: vec![Subscript::Index(i.clone())],
        },
        other => other.clone(),
    }
}

fn infer_type_of(e: &Expr, fenv: &FnEnv) -> crate::flat::ScalarType {
    crate::funcs::infer_type(e, &fenv.hoist.types.borrow())
}
