//! `moss flatten` output is valid Modelica: reading it back gives the same flat model
//! (same variables, same equations), for fixture models and the bundled library's examples.

use crate::common;
use common::*;
use moss_frontend::print::print_model;
use moss_frontend::stats::stats;

fn roundtrip(model: &str) {
    let m = flat(model);
    let text = print_model(&m);
    let again = flat_text("Roundtrip", &text).unwrap_or_else(|e| panic!("{model}: {e}\n{text}"));
    assert_eq!(var_names(&again), var_names(&m), "{model}");
    assert_eq!(equations(&again), equations(&m), "{model}");
    assert_eq!(stats(&again), stats(&m), "{model}");
    assert_eq!(
        print_model(&again).lines().skip(1).count(),
        text.lines().skip(1).count()
    );
}

#[test]
fn fixture_models_read_back() {
    for m in [
        "Basics.Chain",
        "Lookup.Imports",
        "Modifiers.Redeclared",
        "Structure.Enums",
        "Structure.Records",
        "Functions.Use",
        "Functions.UseRecord",
        "Functions.UsePair",
        "Arrays.Ops",
        "Streams.Pair",
    ] {
        roundtrip(m);
    }
}

#[test]
fn bundled_examples_flatten_balanced_and_read_back() {
    for m in [
        "Modelica.Mechanics.Rotational.Examples.First",
        "Modelica.Mechanics.Rotational.Examples.CoupledClutches",
    ] {
        let f = flat(m);
        let s = stats(&f);
        assert_eq!(s.equations, s.variables, "{m} is not balanced");
        assert!(s.states > 0, "{m}");
        assert!(f.experiment.stop_time.is_some(), "{m}");
        roundtrip(m);
    }
}
