//! Test support: a minimal evaluator of causal programs, to check numerically that the
//! generated blocks solve the equations (not a substitute for the codegen interpreter).

use crate::program::{ArithOp, Block, CausalProgram, PExpr, RelOp};

pub struct Eval<'p> {
    pub p: &'p CausalProgram,
    pub x: Vec<f64>,
    pub time: f64,
    pub initial: bool,
    /// False once a Newton iteration failed to converge (e.g. no real solution).
    pub converged: bool,
}

impl<'p> Eval<'p> {
    pub fn new(p: &'p CausalProgram) -> Eval<'p> {
        Eval {
            p,
            x: p.vars.iter().map(|v| v.start).collect(),
            time: 0.0,
            initial: false,
            converged: true,
        }
    }

    pub fn get(&self, name: &str) -> f64 {
        if let Some(v) = self.p.var_by_name(name) {
            return self.x[v as usize];
        }
        let a = self
            .p
            .aliases
            .iter()
            .find(|a| a.name == name)
            .unwrap_or_else(|| panic!("no variable {name}"));
        a.scale * self.x[a.target as usize] + a.offset
    }

    pub fn set(&mut self, name: &str, value: f64) {
        let v = self
            .p
            .var_by_name(name)
            .unwrap_or_else(|| panic!("no slot {name}"));
        self.x[v as usize] = value;
    }

    pub fn expr(&self, e: &PExpr) -> f64 {
        let b = |v: bool| if v { 1.0 } else { 0.0 };
        match e {
            PExpr::Const(c) => *c,
            PExpr::Str(_) => 0.0,
            PExpr::Var(v) | PExpr::Pre(v) => self.x[*v as usize],
            PExpr::Time => self.time,
            PExpr::Neg(a) => -self.expr(a),
            PExpr::Not(a) => b(self.expr(a) == 0.0),
            PExpr::Arith(op, l, r) => {
                let (l, r) = (self.expr(l), self.expr(r));
                match op {
                    ArithOp::Add => l + r,
                    ArithOp::Sub => l - r,
                    ArithOp::Mul => l * r,
                    ArithOp::Div => l / r,
                    ArithOp::Pow => l.powf(r),
                }
            }
            PExpr::And(l, r) => b(self.expr(l) != 0.0 && self.expr(r) != 0.0),
            PExpr::Or(l, r) => b(self.expr(l) != 0.0 || self.expr(r) != 0.0),
            PExpr::Rel { op, lhs, rhs, .. } => {
                let (l, r) = (self.expr(lhs), self.expr(rhs));
                b(match op {
                    RelOp::Lt => l < r,
                    RelOp::Le => l <= r,
                    RelOp::Gt => l > r,
                    RelOp::Ge => l >= r,
                    RelOp::Eq => l == r,
                    RelOp::Ne => l != r,
                })
            }
            PExpr::If(c, a, e) => {
                if self.expr(c) != 0.0 {
                    self.expr(a)
                } else {
                    self.expr(e)
                }
            }
            PExpr::Call { func, args } => {
                let a: Vec<f64> = args.iter().map(|x| self.expr(x)).collect();
                match func.as_str() {
                    "sin" => a[0].sin(),
                    "cos" => a[0].cos(),
                    "exp" => a[0].exp(),
                    "log" => a[0].ln(),
                    "sqrt" => a[0].sqrt(),
                    "abs" => a[0].abs(),
                    "floor" => a[0].floor(),
                    "sign" => {
                        if a[0] > 0.0 {
                            1.0
                        } else if a[0] < 0.0 {
                            -1.0
                        } else {
                            0.0
                        }
                    }
                    "tan" => a[0].tan(),
                    crate::state_sets::WEIGHT => {
                        crate::state_sets::weight(a[0] as i64, a[1] as i64, a[2] as i64 - 1)
                    }
                    crate::state_sets::QUALITY => crate::state_sets::quality(
                        a[0] as i64,
                        a[1] as usize,
                        a[2] as usize,
                        &a[3..],
                    ),
                    crate::state_sets::SELECT => crate::state_sets::select(
                        a[0] as i64,
                        a[1] as usize,
                        a[2] as usize,
                        &a[3..],
                    ) as f64,
                    other => panic!("test evaluator: no function {other}"),
                }
            }
            PExpr::Array(_) => panic!("test evaluator: array"),
            PExpr::Initial => b(self.initial),
            PExpr::Terminal => 0.0,
            PExpr::Sample(_) => 0.0,
        }
    }

    /// Run the blocks repeatedly until no value changes, like the runtime's event iteration
    /// (relations are inputs for sorting, so they may read values of the previous pass).
    /// Returns false when no fixed point was reached (inconsistent mixed system).
    pub fn run_to_fixed_point(&mut self, blocks: &[Block]) -> bool {
        for _ in 0..20 {
            let before = self.x.clone();
            self.run(blocks);
            let same = before
                .iter()
                .zip(&self.x)
                .all(|(a, b)| a == b || (a - b).abs() <= 1e-13 * (1.0 + a.abs().min(1e300)));
            if same {
                return true;
            }
        }
        false
    }

    pub fn run(&mut self, blocks: &[Block]) {
        for b in blocks {
            self.block(b);
        }
    }

    fn block(&mut self, b: &Block) {
        match b {
            Block::Assign { var, expr } => self.x[*var as usize] = self.expr(expr),
            Block::SolveScalar { var, residual, .. } => {
                let v = *var as usize;
                self.newton(&[v], &mut |ev| vec![ev.expr(residual)], &[]);
            }
            Block::Linear { vars, matrix, rhs } => {
                let n = vars.len();
                let mut a = vec![vec![0.0; n]; n];
                for (r, c, e) in matrix {
                    a[*r as usize][*c as usize] += self.expr(e);
                }
                let bv: Vec<f64> = rhs.iter().map(|e| self.expr(e)).collect();
                let x = solve_dense(a, bv);
                for (i, &v) in vars.iter().enumerate() {
                    self.x[v as usize] = x[i];
                }
            }
            Block::Nonlinear {
                iteration_vars,
                inner,
                residuals,
                ..
            } => {
                let vars: Vec<usize> = iteration_vars.iter().map(|&v| v as usize).collect();
                self.newton(&vars, &mut |ev| ev.residuals(residuals), inner);
            }
            Block::When { .. } | Block::Reinit { .. } | Block::Assert { .. } => {}
            other => panic!("test evaluator: unsupported block {other:?}"),
        }
    }

    fn residuals(&self, rs: &[PExpr]) -> Vec<f64> {
        rs.iter().map(|r| self.expr(r)).collect()
    }

    fn newton(&mut self, vars: &[usize], f: &mut dyn FnMut(&Eval) -> Vec<f64>, inner: &[Block]) {
        for _ in 0..50 {
            self.run(inner);
            let r0 = f(self);
            if r0.iter().all(|r| r.abs() < 1e-12) {
                return;
            }
            let n = vars.len();
            let mut jac = vec![vec![0.0; n]; n];
            for (c, &v) in vars.iter().enumerate() {
                let h = 1e-7 * (1.0 + self.x[v].abs());
                self.x[v] += h;
                self.run(inner);
                let r1 = f(self);
                self.x[v] -= h;
                for r in 0..n {
                    jac[r][c] = (r1[r] - r0[r]) / h;
                }
            }
            let dx = solve_dense(jac, r0);
            for (c, &v) in vars.iter().enumerate() {
                self.x[v] -= dx[c];
            }
        }
        self.run(inner);
        if f(self).iter().any(|r| r.is_nan() || r.abs() >= 1e-9) {
            self.converged = false;
        }
    }
}

/// Gaussian elimination with partial pivoting.
pub fn solve_dense(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs()))
            .unwrap_or(k);
        a.swap(k, p);
        b.swap(k, p);
        let (top, rest) = a.split_at_mut(k + 1);
        let pivot = &top[k];
        for (i, row) in rest.iter_mut().enumerate() {
            let f = row[k] / pivot[k];
            for (x, p) in row[k..].iter_mut().zip(&pivot[k..]) {
                *x -= f * p;
            }
            b[k + 1 + i] -= f * b[k];
        }
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|j| a[i][j] * x[j]).sum();
        x[i] = (b[i] - s) / a[i][i];
    }
    x
}
