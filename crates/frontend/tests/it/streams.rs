//! Stream connectors (spec chapter 15): `inStream` of a two-connector set is the other side.

use crate::common;
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

/// `actualStream` multiplied by its own flow (`port.m_flow*actualStream(port.h_outflow)`) is
/// continuous, so its direction test is wrapped in `noEvent` (spec 15.3 leaves it to the
/// tool); used alone (a monitored enthalpy) it keeps its event.
#[test]
fn actual_stream_times_its_flow_needs_no_event() {
    let text = r#"
package S
  connector Port
    Real p;
    flow Real m_flow;
    stream Real h_outflow;
  end Port;
  model Source
    Port port;
    parameter Real h = 3;
  equation
    port.h_outflow = h;
    port.m_flow = -sin(time);
    port.p = 1;
  end Source;
  model Volume
    Port port;
    Real H_flow;
    Real h_seen;
    Real h = 1;
  equation
    port.h_outflow = h;
    H_flow = port.m_flow*actualStream(port.h_outflow);
    h_seen = actualStream(port.h_outflow);
  end Volume;
end S;
model M
  S.Source src;
  S.Volume vol;
equation
  connect(src.port, vol.port);
end M;
"#;
    let m = flat_text("S", text).expect("flattens");
    let eqs = equations(&m);
    let product = eqs
        .iter()
        .find(|e| e.starts_with("'vol.H_flow' = "))
        .expect("energy flow equation");
    assert!(
        product.contains("noEvent('vol.port.m_flow' > 0)"),
        "{product}"
    );
    let monitor = eqs
        .iter()
        .find(|e| e.starts_with("'vol.h_seen' = "))
        .expect("monitoring equation");
    assert!(
        monitor.contains("if 'vol.port.m_flow' > 0 then") && !monitor.contains("noEvent"),
        "{monitor}"
    );
}
