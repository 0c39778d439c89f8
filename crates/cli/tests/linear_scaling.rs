//! Structural guard of near-linear translation: the number of heap allocations made while
//! flattening and translating a generated model must grow in proportion to the model, not
//! faster. Allocations, unlike wall-clock time, do not depend on the machine or its load, and
//! every quadratic pass found so far allocated in its inner loop (an expression tree copied at
//! each level of a visit, a type vector rebuilt per message, a sum rebuilt per member).
//!
//! The model is what a user builds: arrays of library components (the bundled Rotational
//! library), modifiers with `each`, `connect` in `for` loops, and one large connection set (a
//! damper from every inertia to one fixed flange), at two sizes.
//!
//! This file holds a single test so that no other test allocates in the same process while
//! it counts.

#[path = "it/library_support/mod.rs"]
mod library_support;

use library_support::scratch_dir;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// The system allocator, counting allocations (all threads: translation runs on its own
/// thread with a large stack).
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn chain(n: usize) -> String {
    format!(
        "model Chain{n}
  parameter Integer N = {n};
  Modelica.Mechanics.Rotational.Components.Inertia J[N](each J = 1.0, each phi(fixed = true, start = 0), each w(fixed = true, start = 0));
  Modelica.Mechanics.Rotational.Components.Spring sp[N - 1](each c = 1e4);
  Modelica.Mechanics.Rotational.Components.Damper dmp[N](each d = 0.1);
  Modelica.Mechanics.Rotational.Components.Fixed fixed;
  Modelica.Mechanics.Rotational.Sources.ConstantTorque tau(tau_constant = 1);
equation
  connect(tau.flange, J[1].flange_a);
  connect(tau.support, fixed.flange);
  for i in 1:N - 1 loop
    connect(J[i].flange_b, sp[i].flange_a);
    connect(sp[i].flange_b, J[i + 1].flange_a);
  end for;
  for i in 1:N loop
    connect(J[i].flange_b, dmp[i].flange_a);
    connect(dmp[i].flange_b, fixed.flange);
  end for;
end Chain{n};
"
    )
}

/// The shape of a discretised pipe (`Modelica.Fluid.Pipes.DynamicPipe`): an array of
/// records bound as a whole to the segments' states (`flowModel(states = mediums.state)`),
/// and one equation that reads a constant of every segment (the nominal friction loss, a
/// sum over all segments' roughnesses). Both were quadratic: the binding was expanded whole
/// for each element, and each constant was substituted into the sum on its own.
fn segments(n: usize) -> String {
    format!(
        "model Segments{n}
  record State
    Real p;
    Real T;
  end State;
  model Segment
    State state;
    Real roughness;
  end Segment;
  model Friction
    parameter Integer n;
    input State states[n];
    input Real roughnesses[n];
    Real dp_nominal;
  equation
    dp_nominal = sum(states[i].p*roughnesses[i] for i in 1:n);
  end Friction;
  parameter Integer N = {n};
  Segment seg[N](each roughness = 2.5e-5);
  Friction friction(n = N, states = seg.state, roughnesses = seg.roughness);
equation
  for i in 1:N loop
    seg[i].state.p = 1e5 + i*time;
    seg[i].state.T = 300 + time;
  end for;
end Segments{n};
"
    )
}

/// Allocations made by flattening and translating the chain of `n` inertias, and its number
/// of scalar equations.
fn allocations_to_translate(n: usize) -> (u64, usize) {
    allocations_to_translate_model(&format!("Chain{n}"), &chain(n))
}

/// Allocations made by flattening and translating `source` (class `name`), and its number of
/// scalar equations.
fn allocations_to_translate_model(name: &str, source: &str) -> (u64, usize) {
    // the counter is global: one measurement at a time
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let n = name;
    let dir = scratch_dir(&format!("linear-scaling-{n}"));
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).expect("writable scratch folder");
    let opts = moss_frontend::LoadOptions {
        libs: Vec::new(),
        use_modelicapath: false,
        use_bundled: true,
    };
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let flat = moss_frontend::flatten_model(&opts, &file.to_string_lossy())
        .unwrap_or_else(|e| panic!("{n} does not flatten: {:?}", e.diagnostics));
    let equations = flat.model.equations.len();
    let program = moss_symbolic::translate(&flat.model)
        .unwrap_or_else(|e| panic!("{n} does not translate: {e:?}"));
    let model = moss_codegen::Interpreter::new(program).expect("compiles");
    let used = ALLOCATIONS.load(Ordering::Relaxed) - before;
    drop(model);
    let _ = std::fs::remove_dir_all(&dir);
    (used, equations)
}

#[test]
fn allocations_grow_linearly_with_the_number_of_components() {
    // Load the bundled library once, so that parsing it is not counted in the first size.
    let _ = allocations_to_translate(5);
    let (small, eq_small) = allocations_to_translate(50);
    let (large, eq_large) = allocations_to_translate(800);
    let size_ratio = eq_large as f64 / eq_small as f64;
    let alloc_ratio = large as f64 / small as f64;
    eprintln!(
        "{eq_small} equations: {small} allocations; {eq_large} equations: {large} allocations; \
         ratios {size_ratio:.2} (size) and {alloc_ratio:.2} (allocations)"
    );
    assert!(
        size_ratio > 12.0,
        "the large model should be about sixteen times the small one ({size_ratio:.2})"
    );
    // Linear: the ratios agree; a pass quadratic in the size would make the allocation ratio
    // approach the square of the size ratio (about 256). The slack covers n log n passes and
    // the per-model constant.
    assert!(
        alloc_ratio < 1.25 * size_ratio,
        "allocations grow faster than the model: x{alloc_ratio:.2} for x{size_ratio:.2} equations"
    );
}

#[test]
fn allocations_of_a_discretised_pipe_grow_linearly() {
    let _ = allocations_to_translate(5);
    let (small, eq_small) = allocations_to_translate_model("Segments50", &segments(50));
    let (large, eq_large) = allocations_to_translate_model("Segments800", &segments(800));
    let size_ratio = eq_large as f64 / eq_small as f64;
    let alloc_ratio = large as f64 / small as f64;
    eprintln!(
        "{eq_small} equations: {small} allocations; {eq_large} equations: {large} allocations; \
         ratios {size_ratio:.2} (size) and {alloc_ratio:.2} (allocations)"
    );
    assert!(size_ratio > 12.0, "sizes {eq_small} and {eq_large}");
    assert!(
        alloc_ratio < 1.25 * size_ratio,
        "allocations grow faster than the model: x{alloc_ratio:.2} for x{size_ratio:.2} equations"
    );
}
