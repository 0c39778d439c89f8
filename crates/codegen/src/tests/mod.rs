//! Tests on hand-built causal programs (the symbolic stage is developed separately).

mod blocks;
mod derivatives;
mod events;
mod functions;

use crate::{ExecutableModel, Interpreter};
use moss_frontend::flat::{
    AssertLevel, BinaryOp, Expr, Function, FunctionBody, FunctionVar, Origin, ScalarType, Statement,
};
use moss_symbolic::program::*;
use moss_symbolic::CausalProgram;

/// Small builder for causal programs.
pub struct B {
    pub p: CausalProgram,
}

impl B {
    pub fn new() -> B {
        B {
            p: CausalProgram {
                name: "Test".into(),
                ..CausalProgram::default()
            },
        }
    }

    pub fn var(&mut self, name: &str, kind: VarKind, ty: ValueType, start: f64) -> VarId {
        self.p.vars.push(ProgVar {
            name: name.into(),
            kind,
            ty,
            start,
            nominal: 1.0,
            min: None,
            max: None,
            unit: String::new(),
            description: String::new(),
            hidden: false,
        });
        (self.p.vars.len() - 1) as VarId
    }

    pub fn real(&mut self, name: &str, start: f64) -> VarId {
        self.var(name, VarKind::Algebraic, ValueType::Real, start)
    }

    pub fn param(&mut self, name: &str, value: f64) -> VarId {
        self.var(name, VarKind::Parameter, ValueType::Real, value)
    }

    pub fn discrete(&mut self, name: &str, ty: ValueType, start: f64) -> VarId {
        self.var(name, VarKind::Discrete, ty, start)
    }

    /// A state and its derivative slot.
    pub fn state(&mut self, name: &str, start: f64) -> (VarId, VarId) {
        let x = self.var(name, VarKind::State, ValueType::Real, start);
        let dx = self.var(
            &format!("der({name})"),
            VarKind::Derivative,
            ValueType::Real,
            0.0,
        );
        self.p.states.push(x);
        self.p.derivatives.push(dx);
        (x, dx)
    }

    pub fn assign(&mut self, var: VarId, expr: PExpr) {
        self.p.blocks.push(Block::Assign { var, expr });
    }

    /// Zero crossing for `lhs op rhs`; returns its index.
    pub fn zc(&mut self, op: RelOp, lhs: PExpr, rhs: PExpr, time_event: Option<PExpr>) -> u32 {
        self.p.zero_crossings.push(ZeroCrossing {
            expr: sub(lhs, rhs),
            op,
            time_event,
            description: format!("zc{}", self.p.zero_crossings.len()),
        });
        (self.p.zero_crossings.len() - 1) as u32
    }

    /// Event-generating relation `lhs op rhs` with its zero crossing.
    pub fn rel(&mut self, op: RelOp, lhs: PExpr, rhs: PExpr) -> PExpr {
        let te = match (&lhs, &rhs) {
            (PExpr::Time, r) if matches!(r, PExpr::Const(_)) => Some(r.clone()),
            _ => None,
        };
        let zc = self.zc(op, lhs.clone(), rhs.clone(), te);
        PExpr::Rel {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
            zc: Some(zc),
        }
    }

    pub fn build(self) -> Interpreter {
        match Interpreter::new(self.p) {
            Ok(i) => i,
            Err(e) => panic!("compile error: {e}"),
        }
    }

    pub fn init(self, t0: f64) -> Interpreter {
        let mut m = self.build();
        if let Err(e) = m.initialize(t0) {
            panic!("initialize failed: {e}");
        }
        m
    }
}

pub fn c(x: f64) -> PExpr {
    PExpr::Const(x)
}
pub fn v(id: VarId) -> PExpr {
    PExpr::Var(id)
}
pub fn pre(id: VarId) -> PExpr {
    PExpr::Pre(id)
}
fn ar(op: ArithOp, a: PExpr, b: PExpr) -> PExpr {
    PExpr::Arith(op, Box::new(a), Box::new(b))
}
pub fn add(a: PExpr, b: PExpr) -> PExpr {
    ar(ArithOp::Add, a, b)
}
pub fn sub(a: PExpr, b: PExpr) -> PExpr {
    ar(ArithOp::Sub, a, b)
}
pub fn mul(a: PExpr, b: PExpr) -> PExpr {
    ar(ArithOp::Mul, a, b)
}
pub fn div(a: PExpr, b: PExpr) -> PExpr {
    ar(ArithOp::Div, a, b)
}
pub fn pow(a: PExpr, b: PExpr) -> PExpr {
    ar(ArithOp::Pow, a, b)
}
pub fn call(f: &str, args: Vec<PExpr>) -> PExpr {
    PExpr::Call {
        func: f.into(),
        args,
    }
}
pub fn ite(cnd: PExpr, a: PExpr, b: PExpr) -> PExpr {
    PExpr::If(Box::new(cnd), Box::new(a), Box::new(b))
}
pub fn live(op: RelOp, a: PExpr, b: PExpr) -> PExpr {
    PExpr::Rel {
        op,
        lhs: Box::new(a),
        rhs: Box::new(b),
        zc: None,
    }
}

pub fn value(m: &Interpreter, id: VarId) -> f64 {
    m.values()[id as usize]
}

pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

// ---- flat (function body) builders ----

pub fn fv(name: &str) -> Expr {
    Expr::Var {
        name: name.into(),
        subscripts: vec![],
    }
}
pub fn fidx(name: &str, subs: Vec<Expr>) -> Expr {
    Expr::Var {
        name: name.into(),
        subscripts: subs
            .into_iter()
            .map(moss_frontend::flat::Subscript::Index)
            .collect(),
    }
}
pub fn fi(i: i64) -> Expr {
    Expr::Integer(i)
}
pub fn fr(x: f64) -> Expr {
    Expr::Real(x)
}
pub fn fb(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary {
        op,
        lhs: Box::new(a),
        rhs: Box::new(b),
    }
}
pub fn fcall(f: &str, args: Vec<Expr>) -> Expr {
    Expr::Call {
        func: f.into(),
        args,
    }
}
pub fn set(target: Expr, value: Expr) -> Statement {
    Statement::Assign {
        target,
        value,
        origin: Origin::default(),
    }
}
pub fn fvar(
    name: &str,
    ty: ScalarType,
    dims: Vec<Option<Expr>>,
    default: Option<Expr>,
) -> FunctionVar {
    FunctionVar {
        name: name.into(),
        ty,
        dims,
        default,
    }
}
pub fn real_in(name: &str) -> FunctionVar {
    fvar(name, ScalarType::Real, vec![], None)
}
pub fn function(
    name: &str,
    inputs: Vec<FunctionVar>,
    outputs: Vec<FunctionVar>,
    locals: Vec<FunctionVar>,
    body: Vec<Statement>,
) -> Function {
    Function {
        name: name.into(),
        inputs,
        outputs,
        locals,
        body: FunctionBody::Algorithm(body),
        derivatives: vec![],
        inline: false,
        smooth_order: None,
        inverses: Vec::new(),
        is_impure: false,
        origin: Origin::default(),
    }
}
