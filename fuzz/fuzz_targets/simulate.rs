//! Fuzz target `simulate`: `translate`, then a short simulation with a bounded amount of
//! work: the fixed-step explicit Euler method over 0.01 s with 10 steps, so a run ends
//! whatever the model does (events are still located and chattering is still detected).
//! Runtime failures (division by zero, failed asserts, singular systems) must come back as
//! errors, never as a panic.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use moss_sim::{SimOptions, Solver};

fuzz_target!(|data: &[u8]| {
    let Some(flat) = common::flatten(data) else {
        return;
    };
    let Ok(program) = moss_symbolic::translate(&flat.model) else {
        return;
    };
    let Ok(mut model) = moss_codegen::Interpreter::new(program.clone()) else {
        return;
    };
    let opts = SimOptions {
        start_time: Some(0.0),
        stop_time: Some(0.01),
        intervals: Some(5),
        solver: Solver::Euler,
        max_step: Some(0.001),
        ..Default::default()
    };
    let _ = moss_sim::simulate(&mut model, &program, &opts);
});
