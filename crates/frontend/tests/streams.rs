//! Stream connectors (spec chapter 15): `inStream` of a two-connector set is the other side.

mod common;
use common::*;

#[test]
fn in_stream_of_two_connectors() {
    let m = flat("Streams.Pair");
    let eqs = equations(&m);
    assert!(
        eqs.contains(&"'snk.hin' = 'src.port.h';".to_string()),
        "{eqs:#?}"
    );
    assert!(
        eqs.contains(&"'src.port.m_flow' + 'snk.port.m_flow' = 0;".to_string()),
        "{eqs:#?}"
    );
    // stream variables are not equated by the connection
    assert!(
        !eqs.iter()
            .any(|e| e.starts_with("'src.port.h' = 'snk.port.h'")),
        "{eqs:#?}"
    );
}

#[test]
fn streams_through_outside_connectors() {
    let m = flat("Streams.Chain");
    let eqs = equations(&m);
    for e in [
        // inside the pass-through model, each outside port carries what enters the other
        "'pass.a.h' = 'snk.port.h';",
        "'pass.b.h' = 'src.port.h';",
        // inStream of an outside connector is resolved one level up
        "'pass.hin_a' = 'src.port.h';",
        "'snk.hin' = 'pass.b.h';",
    ] {
        assert!(eqs.contains(&e.to_string()), "{e} missing in {eqs:#?}");
    }
    let s = moss_frontend::stats::stats(&m);
    assert_eq!(s.equations, s.variables);
}
