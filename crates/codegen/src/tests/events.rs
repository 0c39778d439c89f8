//! Modes, event iteration, `when`, `pre`, samples, time events, reinit, terminate.

use super::*;

fn when(branches: Vec<(Vec<VarId>, bool, Vec<Block>)>) -> Block {
    Block::When {
        branches: branches
            .into_iter()
            .map(|(conditions, fires_at_initial, body)| WhenBranch {
                conditions,
                fires_at_initial,
                body,
            })
            .collect(),
    }
}

fn boolean(b: &mut B, name: &str) -> VarId {
    b.discrete(name, ValueType::Boolean, 0.0)
}

#[test]
fn relations_are_frozen_in_continuous_mode_and_live_at_events() {
    let mut b = B::new();
    let (x, dx) = b.state("x", -1.0);
    let pos = boolean(&mut b, "pos");
    let r = b.rel(RelOp::Gt, v(x), c(0.0));
    b.assign(pos, r.clone());
    b.assign(dx, ite(r, c(-1.0), c(1.0)));
    let mut m = b.init(0.0);
    assert_eq!(m.relation_values(), &[false]);
    let mut d = [0.0];
    // x crossed zero during a step: still frozen
    m.derivatives(1.5, &[0.5], &mut d).expect("eval");
    assert_eq!(d[0], 1.0);
    let mut g = [0.0];
    m.zero_crossings(1.5, &[0.5], &mut g).expect("zc");
    // x - 0: exact, the relation has not chattered (no hysteresis)
    assert_eq!(g[0], 0.5);
    let mut xs = [0.5];
    let out = m.event_update(1.0, &mut xs).expect("event");
    assert!(!out.states_changed);
    assert_eq!(m.relation_values(), &[true]);
    assert_eq!(value(&m, pos), 1.0);
    m.derivatives(1.5, &[0.5], &mut d).expect("eval");
    assert_eq!(d[0], -1.0);
}

#[test]
fn when_elsewhen_priority_and_pre() {
    let mut b = B::new();
    let count = b.discrete("count", ValueType::Integer, 0.0);
    let c1 = boolean(&mut b, "c1");
    let c2 = boolean(&mut b, "c2");
    let r1 = b.rel(RelOp::Ge, PExpr::Time, c(1.0));
    let r2 = b.rel(RelOp::Ge, PExpr::Time, c(2.0));
    b.assign(c1, r1.clone());
    b.assign(c2, PExpr::Or(Box::new(r1), Box::new(r2)));
    b.p.blocks.push(when(vec![
        (
            vec![c1],
            false,
            vec![Block::Assign {
                var: count,
                expr: add(pre(count), c(1.0)),
            }],
        ),
        (
            vec![c2],
            false,
            vec![Block::Assign {
                var: count,
                expr: add(pre(count), c(10.0)),
            }],
        ),
    ]));
    let mut m = b.init(0.0);
    assert_eq!(value(&m, count), 0.0);
    assert_eq!(m.next_time_event(0.0), Some(1.0));
    let mut x: [f64; 0] = [];
    let out = m.event_update(1.0, &mut x).expect("t=1");
    // both conditions became true: the first branch wins, and fires exactly once
    assert_eq!(value(&m, count), 1.0);
    assert_eq!(out.iterations, 2);
    assert_eq!(m.next_time_event(1.0), Some(2.0));
    // c2 stays true through t=2 (c1 or c2): no new rising edge, so nothing fires
    m.event_update(2.0, &mut x).expect("t=2");
    assert_eq!(value(&m, count), 1.0);
    assert_eq!(m.next_time_event(2.0), None);
}

#[test]
fn elsewhen_fires_when_only_it_rises() {
    let mut b = B::new();
    let count = b.discrete("count", ValueType::Integer, 0.0);
    let c1 = boolean(&mut b, "c1");
    let c2 = boolean(&mut b, "c2");
    let r1 = b.rel(RelOp::Ge, PExpr::Time, c(1.0));
    let r2 = b.rel(RelOp::Ge, PExpr::Time, c(2.0));
    b.assign(c1, r2);
    b.assign(c2, r1);
    b.p.blocks.push(when(vec![
        (
            vec![c1],
            false,
            vec![Block::Assign {
                var: count,
                expr: add(pre(count), c(1.0)),
            }],
        ),
        (
            vec![c2],
            false,
            vec![Block::Assign {
                var: count,
                expr: add(pre(count), c(10.0)),
            }],
        ),
    ]));
    let mut m = b.init(0.0);
    let mut x: [f64; 0] = [];
    m.event_update(1.0, &mut x).expect("t=1");
    assert_eq!(value(&m, count), 10.0);
    m.event_update(2.0, &mut x).expect("t=2");
    assert_eq!(value(&m, count), 11.0);
}

#[test]
fn friction_like_mixed_loop_settles_in_event_iteration() {
    let mut b = B::new();
    let (vel, dvel) = b.state("v", 0.0);
    let fmax = b.param("fmax", 2.0);
    let locked = b.discrete("locked", ValueType::Boolean, 1.0);
    let boost = b.discrete("boost", ValueType::Real, 0.0);
    let fext = b.real("fext", 0.0);
    let cond = boolean(&mut b, "cond");
    // block order: `locked` uses a relation of `fext`, which is computed after it and
    // depends on `boost`, which a when-clause changes at t = 1
    let r_lock = b.rel(RelOp::Le, v(fext), v(fmax));
    b.assign(locked, r_lock);
    let r_t = b.rel(RelOp::Ge, PExpr::Time, c(1.0));
    b.assign(cond, r_t);
    b.p.blocks.push(when(vec![(
        vec![cond],
        false,
        vec![Block::Assign {
            var: boost,
            expr: c(3.0),
        }],
    )]));
    b.assign(fext, add(mul(c(0.1), PExpr::Time), v(boost)));
    b.assign(dvel, ite(v(locked), c(0.0), sub(v(fext), v(fmax))));
    let mut m = b.init(0.0);
    assert_eq!(value(&m, locked), 1.0);
    let mut x = [0.0];
    let out = m.event_update(1.0, &mut x).expect("event");
    // pass 1: when fires (boost = 3); pass 2: locked becomes false; pass 3: fixed point
    assert_eq!(out.iterations, 3);
    assert_eq!(value(&m, locked), 0.0);
    assert_eq!(value(&m, boost), 3.0);
    let mut d = [0.0];
    m.derivatives(1.0, &x, &mut d).expect("eval");
    assert!(close(d[0], 3.1 - 2.0, 1e-12));
    assert_eq!(m.relation_values(), &[false, true]);
    let _ = vel;
}

#[test]
fn chattering_is_reported_with_the_variables() {
    let mut b = B::new();
    let d = b.discrete("flip.state", ValueType::Boolean, 0.0);
    b.assign(d, PExpr::Not(Box::new(pre(d))));
    let e = b.build().initialize(0.0).expect_err("never settles");
    assert!(e.message.contains("did not converge"), "{e}");
    assert!(e.details.iter().any(|l| l.contains("flip.state")), "{e}");
}

#[test]
fn samples_fire_at_their_instants() {
    let mut b = B::new();
    b.p.samples.push(SampleDef {
        start: c(0.0),
        interval: c(1.0),
    });
    b.p.samples.push(SampleDef {
        start: c(0.5),
        interval: c(0.5),
    });
    let s0 = boolean(&mut b, "s0");
    let s1 = boolean(&mut b, "s1");
    let n0 = b.discrete("n0", ValueType::Integer, 0.0);
    let n1 = b.discrete("n1", ValueType::Integer, 0.0);
    b.assign(s0, PExpr::Sample(0));
    b.assign(s1, PExpr::Sample(1));
    b.p.blocks.push(when(vec![(
        vec![s0],
        false,
        vec![Block::Assign {
            var: n0,
            expr: add(pre(n0), c(1.0)),
        }],
    )]));
    b.p.blocks.push(when(vec![(
        vec![s1],
        false,
        vec![Block::Assign {
            var: n1,
            expr: add(pre(n1), c(1.0)),
        }],
    )]));
    let mut m = b.init(0.0);
    // sample(0, 1) is due at the start time
    assert_eq!((value(&m, n0), value(&m, n1)), (1.0, 0.0));
    let mut x: [f64; 0] = [];
    let mut t = 0.0;
    let mut instants = vec![];
    while let Some(te) = m.next_time_event(t) {
        if te > 2.0 {
            break;
        }
        m.event_update(te, &mut x).expect("event");
        instants.push(te);
        t = te;
        // between events the sample conditions are false again
        let mut g: [f64; 0] = [];
        m.zero_crossings(t, &x, &mut g).expect("eval");
        assert_eq!((value(&m, s0), value(&m, s1)), (0.0, 0.0));
    }
    assert_eq!(instants, vec![0.5, 1.0, 1.5, 2.0]);
    assert_eq!((value(&m, n0), value(&m, n1)), (3.0, 4.0));
}

#[test]
fn reinit_sets_states_changed() {
    let mut b = B::new();
    let (h, dh) = b.state("h", 1.0);
    let (vv, dv) = b.state("v", 0.0);
    let hit = boolean(&mut b, "hit");
    let r = b.rel(RelOp::Lt, v(h), c(0.0));
    b.assign(hit, r);
    b.assign(dh, v(vv));
    b.assign(dv, c(-9.81));
    b.p.blocks.push(when(vec![(
        vec![hit],
        false,
        vec![Block::Reinit {
            var: vv,
            value: mul(c(-0.8), pre(vv)),
        }],
    )]));
    let mut m = b.init(0.0);
    let mut x = [-1e-9, -3.0];
    let out = m.event_update(0.45, &mut x).expect("bounce");
    assert!(out.states_changed);
    assert!(close(x[1], 2.4, 1e-12), "{x:?}");
    let mut y = [0.0; 2];
    m.states(&mut y);
    assert_eq!(y, x);
    // a later event without reinit does not report a state change
    let out = m.event_update(0.5, &mut [0.1, 2.0]).expect("no bounce");
    assert!(!out.states_changed);
}

#[test]
fn initialization_when_initial_and_init_blocks() {
    let mut b = B::new();
    let (x, dx) = b.state("x", 0.0);
    let k = b.discrete("k", ValueType::Integer, 0.0);
    let ci = boolean(&mut b, "ci");
    // init: x := 5 (fixed start from an initial equation), when initial() then k := 7
    b.p.init_blocks.push(Block::Assign {
        var: x,
        expr: c(5.0),
    });
    b.p.init_blocks.push(Block::Assign {
        var: ci,
        expr: PExpr::Initial,
    });
    b.p.init_blocks.push(when(vec![(
        vec![ci],
        true,
        vec![Block::Assign {
            var: k,
            expr: c(7.0),
        }],
    )]));
    b.p.init_blocks.push(Block::Assign {
        var: dx,
        expr: mul(c(-1.0), v(x)),
    });
    b.assign(ci, PExpr::Initial);
    b.p.blocks.push(when(vec![(
        vec![ci],
        true,
        vec![Block::Assign {
            var: k,
            expr: c(99.0),
        }],
    )]));
    b.assign(dx, mul(c(-1.0), v(x)));
    let m = b.init(0.0);
    let mut xs = [0.0];
    m.states(&mut xs);
    assert_eq!(xs, [5.0]);
    assert_eq!(value(&m, k), 7.0);
    assert_eq!(value(&m, dx), -5.0);
}

#[test]
fn terminal_and_terminate() {
    let mut b = B::new();
    let ct = boolean(&mut b, "ct");
    let done = b.discrete("done", ValueType::Boolean, 0.0);
    let stop = boolean(&mut b, "stop");
    b.assign(ct, PExpr::Terminal);
    b.p.blocks.push(when(vec![(
        vec![ct],
        false,
        vec![Block::Assign {
            var: done,
            expr: c(1.0),
        }],
    )]));
    let r = b.rel(RelOp::Ge, PExpr::Time, c(3.0));
    b.assign(stop, r);
    b.p.blocks.push(when(vec![(
        vec![stop],
        false,
        vec![Block::Terminate {
            message: PExpr::Str("reached 3".into()),
        }],
    )]));
    let mut m = b.init(0.0);
    let mut x: [f64; 0] = [];
    let out = m.event_update(3.0, &mut x).expect("event");
    assert_eq!(out.terminate.as_deref(), Some("reached 3"));
    assert_eq!(value(&m, done), 0.0);
    m.terminate(3.0, &x).expect("terminal");
    assert_eq!(value(&m, done), 1.0);
}

#[test]
fn algorithm_when_statement_fires_on_rising_edge() {
    use moss_frontend::flat::{Expr, Statement};
    let mut b = B::new();
    let (x, dx) = b.state("x", 0.0);
    let n = b.discrete("n", ValueType::Integer, 0.0);
    b.assign(dx, c(1.0));
    let cond = Expr::Binary {
        op: BinaryOp::Gt,
        lhs: Box::new(fv("x")),
        rhs: Box::new(fr(1.0)),
    };
    let stmts = vec![Statement::When {
        branches: vec![(
            cond,
            vec![set(
                fv("n"),
                fb(BinaryOp::Add, fcall("pre", vec![fv("n")]), fi(1)),
            )],
        )],
        origin: Origin::default(),
    }];
    b.p.blocks.push(Block::Algorithm {
        statements: stmts,
        inputs: vec![x],
        outputs: vec![n],
    });
    let mut m = b.init(0.0);
    let mut xs = [0.5];
    m.event_update(0.5, &mut xs).expect("below");
    assert_eq!(value(&m, n), 0.0);
    let mut xs = [1.5];
    m.event_update(1.5, &mut xs).expect("rises");
    assert_eq!(value(&m, n), 1.0);
    let mut d = [0.0];
    m.derivatives(1.6, &[1.6], &mut d).expect("continuous");
    assert_eq!(value(&m, n), 1.0);
    m.event_update(1.7, &mut [1.7]).expect("still above");
    assert_eq!(value(&m, n), 1.0);
}

#[test]
fn terminate_during_initialization_is_reported() {
    let mut b = B::new();
    let c0 = boolean(&mut b, "c0");
    b.assign(c0, PExpr::Sample(0));
    b.p.samples.push(SampleDef {
        start: c(0.0),
        interval: c(1.0),
    });
    b.p.blocks.push(when(vec![(
        vec![c0],
        false,
        vec![Block::Terminate {
            message: PExpr::Str("at once".into()),
        }],
    )]));
    let mut m = b.init(0.0);
    assert_eq!(m.take_initial_terminate().as_deref(), Some("at once"));
    assert_eq!(m.take_initial_terminate(), None);
}

#[test]
fn interpreter_can_move_to_another_thread() {
    fn is_send<T: Send>() {}
    is_send::<Interpreter>();
}

#[test]
fn zero_crossings_follow_discrete_changes_at_the_same_point() {
    // when x > 0.3 + 0.2 k then k := pre(k) + 1: the crossing moves after each event
    let mut b = B::new();
    let (x, dx) = b.state("x", 0.0);
    let k = b.discrete("k", ValueType::Integer, 0.0);
    let cnd = boolean(&mut b, "cnd");
    b.assign(dx, c(1.0));
    let r = b.rel(RelOp::Gt, v(x), add(c(0.3), mul(c(0.2), v(k))));
    b.assign(cnd, r);
    b.p.blocks.push(when(vec![(
        vec![cnd],
        false,
        vec![Block::Assign {
            var: k,
            expr: add(pre(k), c(1.0)),
        }],
    )]));
    let mut m = b.init(0.0);
    let (t, xs) = (0.31, [0.31]);
    let mut d = [0.0];
    let mut g = [0.0];
    m.derivatives(t, &xs, &mut d).expect("eval");
    m.zero_crossings(t, &xs, &mut g).expect("zc");
    assert!(close(g[0], 0.01, 1e-9), "{g:?}");
    let mut x2 = xs;
    let out = m.event_update(t, &mut x2).expect("event");
    assert_eq!(value(&m, k), 1.0);
    assert_eq!(out.iterations, 3);
    m.zero_crossings(t, &xs, &mut g).expect("zc");
    assert!(close(g[0], 0.31 - 0.5, 1e-9), "{g:?}");
    assert_eq!(m.relation_values(), &[false]);
    let _ = x;
}

#[test]
fn relation_that_chatters_gets_a_hysteresis_band() {
    // pos = x > 0, with x (nominal 1) at rounding-noise distance from zero
    let mut b = B::new();
    let (x, dx) = b.state("x", 1.0);
    let pos = boolean(&mut b, "pos");
    let r = b.rel(RelOp::Gt, v(x), c(0.0));
    b.assign(pos, r);
    b.assign(dx, c(-1.0));
    let mut m = b.init(0.0);
    assert_eq!(m.relation_values(), &[true]);
    let eps = crate::compile::RELATION_HYSTERESIS;
    let noise = 1e-3 * eps;
    // while it behaves, it switches exactly at zero ...
    let mut xs = [-noise];
    m.event_update(1.0, &mut xs).expect("event");
    assert_eq!(m.relation_values(), &[false]);
    // ... and switching back at an event right after makes it a chattering relation
    let mut xs = [noise];
    m.event_update(1.0, &mut xs).expect("event");
    assert_eq!(m.relation_values(), &[true]);
    // from now on noise below zero does not switch it off ...
    let mut xs = [-noise];
    m.event_update(1.0, &mut xs).expect("event");
    assert_eq!(m.relation_values(), &[true]);
    assert_eq!(value(&m, pos), 1.0);
    // ... and is not reported as a crossing either
    let mut g = [0.0];
    m.zero_crossings(1.0, &xs, &mut g).expect("zc");
    assert!(g[0] > 0.0, "{g:?}");
    // a real change is
    let mut xs = [-2.0 * eps];
    m.zero_crossings(1.0, &xs, &mut g).expect("zc");
    assert!(g[0] < 0.0, "{g:?}");
    m.event_update(1.0, &mut xs).expect("event");
    assert_eq!(m.relation_values(), &[false]);
    // and switching back needs the same margin on the other side
    let mut xs = [noise];
    m.event_update(1.5, &mut xs).expect("event");
    assert_eq!(m.relation_values(), &[false]);
}

#[test]
fn initialization_evaluates_relations_without_hysteresis() {
    let mut b = B::new();
    let (x, dx) = b.state("x", 1e-3 * crate::compile::RELATION_HYSTERESIS);
    let pos = boolean(&mut b, "pos");
    let r = b.rel(RelOp::Gt, v(x), c(0.0));
    b.assign(pos, r);
    b.assign(dx, c(-1.0));
    let m = b.init(0.0);
    assert_eq!(m.relation_values(), &[true]);
    assert_eq!(value(&m, pos), 1.0);
}
