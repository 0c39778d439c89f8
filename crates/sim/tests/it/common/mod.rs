//! A hand-written `ExecutableModel` built from closures, for testing the simulator without
//! the compiler pipeline. Slot layout: states, then their derivatives, then extra outputs.
#![allow(dead_code)]

use moss_codegen::{EventOutcome, ExecutableModel, ModelStats, RuntimeError};
use moss_symbolic::program::{Alias, PExpr, ProgVar, RelOp, ValueType, VarKind, ZeroCrossing};
use moss_symbolic::CausalProgram;

/// Right-hand side: time, states, frozen relation values, derivatives out.
pub type Rhs = Box<dyn FnMut(f64, &[f64], &[bool], &mut [f64]) -> Result<(), String>>;
pub type Crossing = Box<dyn Fn(f64, &[f64]) -> f64>;
/// Event handler: time, states (may be changed: reinit), relation values before the event,
/// relation values now. Returns `Some(message)` to terminate.
pub type Handler = Box<dyn FnMut(f64, &mut [f64], &[bool], &[bool]) -> Option<String>>;
/// Extra output variables computed from (t, x).
pub type Output = Box<dyn Fn(f64, &[f64]) -> f64>;
/// A symbolic Jacobian-vector product: time, states, seed, product out (or an error).
pub type Tangent = Box<dyn FnMut(f64, &[f64], &[f64], &mut [f64]) -> Result<(), String>>;

pub struct TestModel {
    names: Vec<String>,
    x0: Vec<f64>,
    x: Vec<f64>,
    rhs: Rhs,
    crossings: Vec<(RelOp, Crossing, String)>,
    handler: Handler,
    outputs: Vec<(String, Output)>,
    /// Time events: `(start, period)`; period 0 means a single event.
    time_events: Vec<(f64, f64)>,
    relations: Vec<bool>,
    values: Vec<f64>,
    pattern: Vec<(u32, u32)>,
    params: Vec<(String, f64)>,
    aliases: Vec<(String, String, f64, f64)>,
    tangent: Option<Tangent>,
    stats: ModelStats,
}

impl TestModel {
    pub fn new(
        names: &[&str],
        x0: &[f64],
        rhs: impl FnMut(f64, &[f64], &mut [f64]) + 'static,
    ) -> Self {
        let mut rhs = rhs;
        let n = names.len();
        TestModel {
            names: names.iter().map(|s| s.to_string()).collect(),
            x0: x0.to_vec(),
            x: x0.to_vec(),
            rhs: Box::new(move |t, x, _rel, dx| {
                rhs(t, x, dx);
                Ok(())
            }),
            crossings: Vec::new(),
            handler: Box::new(|_, _, _, _| None),
            outputs: Vec::new(),
            time_events: Vec::new(),
            relations: Vec::new(),
            values: vec![0.0; 2 * n],
            pattern: Vec::new(),
            params: Vec::new(),
            aliases: Vec::new(),
            tangent: None,
            stats: ModelStats::default(),
        }
    }

    /// A symbolic Jacobian (`J seed` into the last argument), as a translated model's
    /// tangent program provides; a model without one is differenced by the simulator.
    pub fn tangent(
        mut self,
        f: impl FnMut(f64, &[f64], &[f64], &mut [f64]) -> Result<(), String> + 'static,
    ) -> Self {
        self.tangent = Some(Box::new(f));
        self
    }

    /// A right-hand side that sees the frozen relations and can fail (assert-like errors).
    pub fn full_rhs(
        mut self,
        rhs: impl FnMut(f64, &[f64], &[bool], &mut [f64]) -> Result<(), String> + 'static,
    ) -> Self {
        self.rhs = Box::new(rhs);
        self
    }

    /// `name = scale * target + offset`.
    pub fn alias(mut self, name: &str, target: &str, scale: f64, offset: f64) -> Self {
        self.aliases
            .push((name.to_string(), target.to_string(), scale, offset));
        self
    }

    pub fn crossing(
        mut self,
        op: RelOp,
        desc: &str,
        g: impl Fn(f64, &[f64]) -> f64 + 'static,
    ) -> Self {
        self.crossings.push((op, Box::new(g), desc.to_string()));
        self
    }

    pub fn on_event(
        mut self,
        h: impl FnMut(f64, &mut [f64], &[bool], &[bool]) -> Option<String> + 'static,
    ) -> Self {
        self.handler = Box::new(h);
        self
    }

    pub fn output(mut self, name: &str, f: impl Fn(f64, &[f64]) -> f64 + 'static) -> Self {
        self.outputs.push((name.to_string(), Box::new(f)));
        self
    }

    pub fn time_event(mut self, start: f64, period: f64) -> Self {
        self.time_events.push((start, period));
        self
    }

    pub fn pattern(mut self, p: Vec<(u32, u32)>) -> Self {
        self.pattern = p;
        self
    }

    pub fn parameter(mut self, name: &str, value: f64) -> Self {
        self.params.push((name.to_string(), value));
        self
    }

    /// The causal program describing this model's variables and zero crossings.
    pub fn program(&self) -> CausalProgram {
        let var = |name: &str, kind: VarKind| ProgVar {
            name: name.to_string(),
            kind,
            ty: ValueType::Real,
            start: 0.0,
            nominal: 1.0,
            min: None,
            max: None,
            unit: String::new(),
            description: String::new(),
            hidden: false,
        };
        let n = self.names.len();
        let mut p = CausalProgram {
            name: "Test".into(),
            ..Default::default()
        };
        for name in &self.names {
            p.vars.push(var(name, VarKind::State));
        }
        for name in &self.names {
            p.vars
                .push(var(&format!("der({name})"), VarKind::Derivative));
        }
        for (name, _) in &self.outputs {
            p.vars.push(var(name, VarKind::Algebraic));
        }
        for (name, _) in &self.params {
            p.vars.push(var(name, VarKind::Parameter));
        }
        for (name, target, scale, offset) in &self.aliases {
            let target = p.var_by_name(target).expect("alias target exists");
            p.aliases.push(Alias {
                name: name.clone(),
                target,
                scale: *scale,
                offset: *offset,
                unit: String::new(),
                description: String::new(),
                kind: p.vars[target as usize].kind,
                hidden: false,
            });
        }
        p.states = (0..n as u32).collect();
        p.derivatives = (n as u32..2 * n as u32).collect();
        for (op, _, desc) in &self.crossings {
            p.zero_crossings.push(ZeroCrossing {
                expr: PExpr::Const(0.0),
                op: *op,
                time_event: None,
                description: desc.clone(),
            });
        }
        p
    }

    fn compute(&mut self, t: f64, x: &[f64]) -> Result<(), RuntimeError> {
        let n = self.names.len();
        let mut dx = vec![0.0; n];
        (self.rhs)(t, x, &self.relations, &mut dx).map_err(|message| RuntimeError {
            time: t,
            message,
            details: vec![],
        })?;
        self.stats.derivative_evaluations += 1;
        self.values.clear();
        self.values.extend_from_slice(x);
        self.values.extend_from_slice(&dx);
        for (_, f) in &self.outputs {
            self.values.push(f(t, x));
        }
        for (_, v) in &self.params {
            self.values.push(*v);
        }
        Ok(())
    }

    fn live_relations(&self, t: f64, x: &[f64]) -> Vec<bool> {
        self.crossings
            .iter()
            .map(|(op, g, _)| {
                let g = g(t, x);
                match op {
                    RelOp::Gt => g > 0.0,
                    RelOp::Ge => g >= 0.0,
                    RelOp::Lt => g < 0.0,
                    RelOp::Le => g <= 0.0,
                    RelOp::Eq => g == 0.0,
                    RelOp::Ne => g != 0.0,
                }
            })
            .collect()
    }
}

impl ExecutableModel for TestModel {
    fn n_states(&self) -> usize {
        self.names.len()
    }
    fn n_zero_crossings(&self) -> usize {
        self.crossings.len()
    }
    fn set_parameter(&mut self, name: &str, value: f64) -> Result<(), RuntimeError> {
        match self.params.iter_mut().find(|(n, _)| n == name) {
            Some(p) => {
                p.1 = value;
                Ok(())
            }
            None => Err(RuntimeError {
                time: 0.0,
                message: format!("no parameter `{name}`"),
                details: vec![],
            }),
        }
    }
    fn initialize(&mut self, t0: f64) -> Result<(), RuntimeError> {
        self.x = self.x0.clone();
        self.relations = self.live_relations(t0, &self.x.clone());
        let x = self.x.clone();
        self.compute(t0, &x)
    }
    fn states(&self, x: &mut [f64]) {
        x.copy_from_slice(&self.x);
    }
    fn derivatives(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RuntimeError> {
        self.compute(t, x)?;
        // As the interpreter: the states of the last evaluation are the current ones.
        self.x.copy_from_slice(x);
        let n = x.len();
        dx.copy_from_slice(&self.values[n..2 * n]);
        Ok(())
    }
    fn zero_crossings(&mut self, t: f64, x: &[f64], g: &mut [f64]) -> Result<(), RuntimeError> {
        self.stats.zero_crossing_evaluations += 1;
        for (gi, (_, f, _)) in g.iter_mut().zip(&self.crossings) {
            *gi = f(t, x);
        }
        Ok(())
    }
    fn relation_values(&self) -> &[bool] {
        &self.relations
    }
    fn event_update(&mut self, t: f64, x: &mut [f64]) -> Result<EventOutcome, RuntimeError> {
        let before = self.relations.clone();
        let now = self.live_relations(t, x);
        let x_old = x.to_vec();
        let terminate = (self.handler)(t, x, &before, &now);
        self.relations = self.live_relations(t, x);
        self.x = x.to_vec();
        self.compute(t, x)?;
        self.stats.event_iterations += 1;
        Ok(EventOutcome {
            states_changed: x_old != x,
            terminate,
            iterations: 1,
        })
    }
    fn next_time_event(&self, t: f64) -> Option<f64> {
        self.time_events
            .iter()
            .filter_map(|&(start, period)| {
                if start > t {
                    Some(start)
                } else if period > 0.0 {
                    let k = ((t - start) / period).floor() + 1.0;
                    let mut te = start + k * period;
                    if te <= t {
                        te += period;
                    }
                    Some(te)
                } else {
                    None
                }
            })
            .min_by(|a, b| a.total_cmp(b))
    }
    fn terminate(&mut self, _t: f64, _x: &[f64]) -> Result<(), RuntimeError> {
        Ok(())
    }
    fn values(&self) -> &[f64] {
        &self.values
    }
    fn jacobian_pattern(&self) -> &[(u32, u32)] {
        &self.pattern
    }
    fn has_symbolic_jacobian(&self) -> bool {
        self.tangent.is_some()
    }
    fn jacobian_times(
        &mut self,
        t: f64,
        x: &[f64],
        seed: &[f64],
        out: &mut [f64],
    ) -> Result<(), RuntimeError> {
        let f = self.tangent.as_mut().ok_or_else(|| RuntimeError {
            time: t,
            message: "no symbolic Jacobian".into(),
            details: vec![],
        })?;
        f(t, x, seed, out).map_err(|message| RuntimeError {
            time: t,
            message,
            details: vec![],
        })
    }
    fn stats(&self) -> ModelStats {
        self.stats.clone()
    }
}
