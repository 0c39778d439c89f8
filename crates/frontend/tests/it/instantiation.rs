//! Instantiation, modifiers, arrays of components and connections on small fixture models.

use crate::common;
use common::*;
use moss_frontend::stats::stats;

#[test]
fn arrays_of_components_get_per_element_modifiers() {
    let m = flat("Basics.Chain");
    let j: Vec<String> = m
        .variables
        .iter()
        .filter(|v| v.name.ends_with(".J"))
        .map(|v| {
            format!(
                "{} = {}",
                v.name,
                moss_frontend::print::print_expr(v.binding.as_ref().unwrap())
            )
        })
        .collect();
    assert_eq!(j, ["m[1].J = 1", "m[2].J = 2", "m[3].J = 3"]);
    let phi2 = m.variables.iter().find(|v| v.name == "m[2].phi").unwrap();
    assert_eq!(phi2.attrs.fixed, Some(true));
    assert_eq!(phi2.attrs.unit.as_deref(), Some("rad"));
    assert_eq!(phi2.attrs.display_unit.as_deref(), Some("deg"));
}

#[test]
fn connections_make_potential_and_flow_equations() {
    let m = flat("Basics.Chain");
    let eqs = equations(&m);
    assert!(
        eqs.contains(&"'fixed.flange.phi' = 's[1].flange_a.phi';".to_string()),
        "{eqs:#?}"
    );
    assert!(
        eqs.contains(&"'fixed.flange.tau' + 's[1].flange_a.tau' = 0;".to_string()),
        "{eqs:#?}"
    );
    // for-loop connections
    assert!(
        eqs.contains(&"'s[2].flange_b.tau' + 'm[2].flange_a.tau' = 0;".to_string()),
        "{eqs:#?}"
    );
    // unconnected inside flows are zero
    assert!(
        eqs.contains(&"'m[3].flange_a.tau' = 0;".to_string()),
        "{eqs:#?}"
    );
    assert!(
        eqs.contains(&"'m[1].flange_b.tau' = 0;".to_string()),
        "{eqs:#?}"
    );
    let s = stats(&m);
    assert_eq!(s.equations, s.variables, "balanced");
}
