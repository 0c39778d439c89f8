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
