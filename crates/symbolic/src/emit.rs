//! Emission of program blocks and expressions from the working form: variables are mapped
//! to runtime slots, event-generating relations get zero-crossing indices (shared between
//! equal relations thanks to hash-consing), `time <op> parameter-expression` relations also
//! carry their event time.

use crate::ir::{ExprId, Node, Rel, VarIx};
use crate::model::{Effect, EqBody, Model, SEq, WhenItem};
use crate::program::{ArithOp, Block, PExpr, RelOp, ValueType, VarId, WhenBranch, ZeroCrossing};
use crate::solve::WBlock;
use rustc_hash::FxHashMap as HashMap;

pub struct Emitter {
    /// Working variable -> runtime slot.
    pub slot: Vec<Option<VarId>>,
    /// Zero-crossing index of each event relation node (equal relations share one).
    zc_of: HashMap<ExprId, u32>,
    pub zero_crossings: Vec<ZeroCrossing>,
    /// When false, relations are emitted without zero-crossing indices (parameter blocks).
    pub events: bool,
    /// When false, only relations that already have a zero crossing keep it (initialization:
    /// relations are live there, and a relation used only during initialization must not
    /// become an event source of the simulation).
    pub new_zero_crossings: bool,
}

fn rel_op(r: Rel) -> RelOp {
    match r {
        Rel::Lt => RelOp::Lt,
        Rel::Le => RelOp::Le,
        Rel::Gt => RelOp::Gt,
        Rel::Ge => RelOp::Ge,
        Rel::Eq => RelOp::Eq,
        Rel::Ne => RelOp::Ne,
    }
}

impl Emitter {
    pub fn new(slot: Vec<Option<VarId>>) -> Emitter {
        Emitter {
            slot,
            zc_of: HashMap::default(),
            zero_crossings: Vec::new(),
            events: true,
            new_zero_crossings: true,
        }
    }

    fn var(&self, v: VarIx) -> PExpr {
        match self.slot.get(v as usize).copied().flatten() {
            Some(s) => PExpr::Var(s),
            None => PExpr::Const(0.0),
        }
    }

    pub fn slot_of(&self, v: VarIx) -> VarId {
        self.slot.get(v as usize).copied().flatten().unwrap_or(0)
    }

    pub fn expr(&mut self, m: &mut Model, e: ExprId) -> PExpr {
        let n = m.arena.node(e).clone();
        let b = |x: PExpr| Box::new(x);
        match n {
            Node::Const(_) => PExpr::Const(m.arena.as_const(e).unwrap_or(0.0)),
            Node::Str(s) => PExpr::Str(s.to_string()),
            Node::Var(v) => self.var(v),
            Node::Pre(v) => match self.var(v) {
                PExpr::Var(s) => PExpr::Pre(s),
                other => other,
            },
            Node::Time => PExpr::Time,
            Node::Neg(x) => PExpr::Neg(b(self.expr(m, x))),
            Node::Not(x) => PExpr::Not(b(self.expr(m, x))),
            Node::Add(x, y) => self.arith(m, ArithOp::Add, x, y),
            Node::Sub(x, y) => self.arith(m, ArithOp::Sub, x, y),
            Node::Mul(x, y) => self.arith(m, ArithOp::Mul, x, y),
            Node::Div(x, y) => self.arith(m, ArithOp::Div, x, y),
            Node::Pow(x, y) => self.arith(m, ArithOp::Pow, x, y),
            Node::And(x, y) => {
                let (x, y) = (self.expr(m, x), self.expr(m, y));
                PExpr::And(b(x), b(y))
            }
            Node::Or(x, y) => {
                let (x, y) = (self.expr(m, x), self.expr(m, y));
                PExpr::Or(b(x), b(y))
            }
            Node::Rel {
                op,
                lhs,
                rhs,
                event,
            } => {
                // a relation between parameter values cannot cross during a simulation, and
                // one between Strings has no crossing function: it changes at events only
                let constant = m.is_parameter_expr(lhs) && m.is_parameter_expr(rhs);
                let strings = string_valued(m, lhs) || string_valued(m, rhs);
                let varies = event && !constant && !strings;
                let zc = if !varies || !self.events {
                    None
                } else if self.new_zero_crossings {
                    Some(self.zero_crossing(m, e, op, lhs, rhs))
                } else {
                    self.zc_of.get(&e).copied()
                };
                let (l, r) = (self.expr(m, lhs), self.expr(m, rhs));
                PExpr::Rel {
                    op: rel_op(op),
                    lhs: b(l),
                    rhs: b(r),
                    zc,
                }
            }
            Node::If(c, x, y) => {
                let (c, x, y) = (self.expr(m, c), self.expr(m, x), self.expr(m, y));
                PExpr::If(b(c), b(x), b(y))
            }
            Node::Call(f, args) => {
                let args = args.iter().map(|&a| self.expr(m, a)).collect();
                PExpr::Call {
                    func: f.to_string(),
                    args,
                }
            }
            Node::Array(items) => PExpr::Array(items.iter().map(|&a| self.expr(m, a)).collect()),
            Node::CallOutput(c, i) => {
                // output i of a call: the runtime's `Call` returns output 0, so other outputs
                // are expressed through the pseudo-function `$output(i, call)`
                let call = self.expr(m, c);
                if i == 0 {
                    call
                } else {
                    PExpr::Call {
                        func: "$output".into(),
                        args: vec![PExpr::Const(i as f64), call],
                    }
                }
            }
            Node::Initial => PExpr::Initial,
            Node::Terminal => PExpr::Terminal,
            Node::Sample(i) => PExpr::Sample(i),
        }
    }

    fn arith(&mut self, m: &mut Model, op: ArithOp, x: ExprId, y: ExprId) -> PExpr {
        let (x, y) = (self.expr(m, x), self.expr(m, y));
        PExpr::Arith(op, Box::new(x), Box::new(y))
    }

    fn zero_crossing(
        &mut self,
        m: &mut Model,
        e: ExprId,
        op: Rel,
        lhs: ExprId,
        rhs: ExprId,
    ) -> u32 {
        if let Some(&i) = self.zc_of.get(&e) {
            return i;
        }
        let i = self.zero_crossings.len() as u32;
        self.zc_of.insert(e, i);
        let diff = m.arena.sub(lhs, rhs);
        let lt = *m.arena.node(lhs) == Node::Time;
        let rt = *m.arena.node(rhs) == Node::Time;
        let time_event = if lt && m.is_parameter_expr(rhs) {
            Some(rhs)
        } else if rt && m.is_parameter_expr(lhs) {
            Some(lhs)
        } else {
            None
        };
        let description = format!("{} {} {}", m.text(lhs), op.text(), m.text(rhs));
        // placeholder first so nested relations get later indices consistently
        self.zero_crossings.push(ZeroCrossing {
            expr: PExpr::Const(0.0),
            op: rel_op(op),
            time_event: None,
            description,
        });
        let expr = self.expr(m, diff);
        let te = time_event.map(|t| self.expr(m, t));
        let zc = &mut self.zero_crossings[i as usize];
        zc.expr = expr;
        zc.time_event = te;
        i
    }

    pub fn block(&mut self, m: &mut Model, eqs: &[SEq], b: &WBlock) -> Vec<Block> {
        match b {
            WBlock::Assign { var, expr } => vec![Block::Assign {
                var: self.slot_of(*var),
                expr: self.expr(m, *expr),
            }],
            WBlock::SolveScalar {
                var,
                residual,
                derivative,
            } => vec![Block::SolveScalar {
                var: self.slot_of(*var),
                residual: self.expr(m, *residual),
                derivative: derivative.map(|d| self.expr(m, d)),
            }],
            WBlock::Linear { vars, matrix, rhs } => vec![Block::Linear {
                vars: vars.iter().map(|&v| self.slot_of(v)).collect(),
                matrix: matrix
                    .iter()
                    .map(|&(r, c, e)| (r, c, self.expr(m, e)))
                    .collect(),
                rhs: rhs.iter().map(|&e| self.expr(m, e)).collect(),
            }],
            WBlock::Nonlinear {
                iteration_vars,
                inner,
                residuals,
                jacobian,
                linear,
                fallback,
            } => {
                let inner = inner.iter().flat_map(|b| self.block(m, eqs, b)).collect();
                let fallback = fallback.as_ref().and_then(|f| {
                    match self.block(m, eqs, f).into_iter().next() {
                        Some(b @ Block::Nonlinear { .. }) => Some(Box::new(b)),
                        _ => None,
                    }
                });
                vec![Block::Nonlinear {
                    iteration_vars: iteration_vars.iter().map(|&v| self.slot_of(v)).collect(),
                    inner,
                    residuals: residuals.iter().map(|&e| self.expr(m, e)).collect(),
                    jacobian: jacobian
                        .as_ref()
                        .map(|j| j.iter().map(|&(r, c, e)| (r, c, self.expr(m, e))).collect()),
                    linear: *linear,
                    fallback,
                }]
            }
            WBlock::Unit(e) => self.unit(m, &eqs[*e as usize]),
        }
    }

    fn unit(&mut self, m: &mut Model, eq: &SEq) -> Vec<Block> {
        match &eq.body {
            EqBody::Eq { .. } => Vec::new(),
            EqBody::Call {
                outputs,
                func,
                args,
            } => vec![Block::CallOutputs {
                outputs: outputs.iter().map(|o| o.map(|v| self.slot_of(v))).collect(),
                func: func.clone(),
                args: args.iter().map(|&a| self.expr(m, a)).collect(),
            }],
            EqBody::Algorithm {
                index,
                outputs,
                inputs,
            } => vec![Block::Algorithm {
                statements: m.algorithms[*index].clone(),
                inputs: inputs.iter().map(|&v| self.slot_of(v)).collect(),
                outputs: outputs.iter().map(|&v| self.slot_of(v)).collect(),
            }],
            EqBody::When(branches) => {
                let branches = branches
                    .iter()
                    .map(|b| WhenBranch {
                        conditions: b.slots.iter().map(|&s| self.slot_of(s)).collect(),
                        fires_at_initial: b.initial,
                        body: b.items.iter().map(|it| self.when_item(m, it)).collect(),
                    })
                    .collect();
                vec![Block::When { branches }]
            }
            EqBody::Effect(eff) => vec![self.effect(m, eff)],
        }
    }

    fn when_item(&mut self, m: &mut Model, it: &WhenItem) -> Block {
        match it {
            WhenItem::Assign { var, expr } => Block::Assign {
                var: self.slot_of(*var),
                expr: self.expr(m, *expr),
            },
            WhenItem::Reinit { var, expr } => Block::Reinit {
                var: self.slot_of(*var),
                value: self.expr(m, *expr),
            },
            WhenItem::Assert { cond, msg, level } => Block::Assert {
                condition: self.expr(m, *cond),
                message: self.expr(m, *msg),
                level: *level,
            },
            WhenItem::Terminate { msg } => Block::Terminate {
                message: self.expr(m, *msg),
            },
            WhenItem::CallOutputs {
                outputs,
                func,
                args,
            } => Block::CallOutputs {
                outputs: outputs.iter().map(|o| o.map(|v| self.slot_of(v))).collect(),
                func: func.clone(),
                args: args.iter().map(|&a| self.expr(m, a)).collect(),
            },
        }
    }

    fn effect(&mut self, m: &mut Model, eff: &Effect) -> Block {
        match eff {
            Effect::Assert { cond, msg, level } => Block::Assert {
                condition: self.expr(m, *cond),
                message: self.expr(m, *msg),
                level: *level,
            },
            Effect::Terminate { msg } => Block::Terminate {
                message: self.expr(m, *msg),
            },
            Effect::Call { func, args } => Block::CallOutputs {
                outputs: Vec::new(),
                func: func.clone(),
                args: args.iter().map(|&a| self.expr(m, a)).collect(),
            },
        }
    }
}

/// Is `e` a String: a literal, a String variable, `String(...)`, a concatenation or choice
/// of such? (User functions returning Strings are not recognized; their comparisons keep
/// a zero crossing, which codegen then refuses with a message.)
fn string_valued(m: &Model, e: ExprId) -> bool {
    match m.arena.node(e) {
        Node::Str(_) => true,
        Node::Var(v) | Node::Pre(v) => m.vars[*v as usize].ty == ValueType::String,
        Node::Call(f, _) => &**f == "String",
        Node::Add(a, b) => string_valued(m, *a) || string_valued(m, *b),
        Node::If(_, a, b) => string_valued(m, *a) || string_valued(m, *b),
        _ => false,
    }
}
