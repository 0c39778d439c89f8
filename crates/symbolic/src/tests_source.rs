//! End-to-end tests from small Modelica sources written here: flattened by the real frontend
//! (no bundled library), then translated. Used where the symbolic stage depends on what the
//! frontend produces (connection equations, top-level connectors, functions).

use crate::api::translate_here;
use crate::program::{CausalProgram, VarKind};
use crate::testeval::Eval;
use moss_frontend::{flatten_model, FlatModel, LoadOptions};
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// Flatten the last class of `source` (written to a fresh temporary file).
pub fn flatten_source(source: &str) -> FlatModel {
    let dir = std::env::temp_dir().join(format!(
        "moss-symbolic-test-{}-{}",
        std::process::id(),
        NEXT_DIR.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let file = dir.join("Test.mo");
    std::fs::write(&file, source).expect("write test source");
    let opts = LoadOptions {
        libs: Vec::new(),
        use_modelicapath: false,
        use_bundled: false,
    };
    let result = flatten_model(&opts, &file.to_string_lossy());
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Ok(f) => f.model,
        Err(e) => panic!(
            "flattening failed: {}",
            e.diagnostics
                .iter()
                .map(|d| d.render(&e.sources))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

pub fn translate_source(source: &str) -> CausalProgram {
    let flat = flatten_source(source);
    match translate_here(&flat) {
        Ok(p) => p,
        Err(d) => panic!(
            "translation failed: {}",
            d.iter()
                .map(|d| d.render(&flat.sources))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

pub fn kind(p: &CausalProgram, name: &str) -> Option<VarKind> {
    p.var_by_name(name).map(|v| p.vars[v as usize].kind)
}

/// Evaluate the initialization and one pass of the simulation blocks at the start values.
pub fn evaluate(p: &CausalProgram) -> Eval<'_> {
    let mut ev = Eval::new(p);
    ev.run(&p.parameter_blocks);
    ev.initial = true;
    ev.run(&p.init_blocks);
    ev.initial = false;
    ev.run(&p.blocks);
    ev
}

const PINS: &str = "
connector Pin
  Real v;
  flow Real i;
end Pin;
connector RealInput = input Real;
connector RealOutput = output Real;
";

#[test]
fn connected_top_level_input_stays_an_input() {
    let src = format!(
        "{PINS}
block Gain
  parameter Real k = 2;
  RealInput u;
  RealOutput y;
equation
  y = k*u;
end Gain;
model Top
  RealInput u(start = 3);
  RealOutput y;
  Gain g;
equation
  connect(u, g.u);
  connect(g.y, y);
end Top;
"
    );
    let p = translate_source(&src);
    assert_eq!(kind(&p, "u"), Some(VarKind::Input));
    let ev = evaluate(&p);
    assert_eq!(ev.get("y"), 6.0);
}

#[test]
fn bound_top_level_input_is_computed() {
    let p = translate_source(
        "model Top
  input Real u = 2*time + 1;
  output Real y;
equation
  y = 3*u;
end Top;",
    );
    assert_ne!(kind(&p, "u"), Some(VarKind::Input));
    assert_eq!(evaluate(&p).get("y"), 3.0);
}

#[test]
fn floating_component_pins_are_grounded_one_at_a_time() {
    let src = format!(
        "{PINS}
model Resistor
  parameter Real R = 2;
  Real v;
  Real i;
  Pin p;
  Pin n(v(start = 1));
equation
  v = p.v - n.v;
  0 = p.i + n.i;
  i = p.i;
  v = R*i;
end Resistor;
"
    );
    let p = translate_source(&src);
    // one reference potential is enough: the last pin is grounded, the other stays open
    assert_eq!(kind(&p, "n.v"), Some(VarKind::Input));
    assert_ne!(kind(&p, "p.v"), Some(VarKind::Input));
    assert!(p.report.warnings.iter().any(|w| w.contains("`n.v`")));
    let ev = evaluate(&p);
    // open pin p: no current, so both pins sit at the grounded potential (start value 1)
    assert_eq!(ev.get("i"), 0.0);
    assert_eq!(ev.get("p.v"), 1.0);
}

#[test]
fn determined_pins_stay_open() {
    let src = format!(
        "{PINS}
model Source
  parameter Real V = 5;
  Pin p;
equation
  p.v = V;
end Source;
"
    );
    let p = translate_source(&src);
    assert_ne!(kind(&p, "p.v"), Some(VarKind::Input));
    assert!(p.report.warnings.iter().all(|w| !w.contains("top-level")));
    assert_eq!(evaluate(&p).get("p.v"), 5.0);
}
