//! Events on a picosecond time scale (the MSL's Spice3 examples): a `sample` tick is due at
//! its own instant, judged relative to the time itself, not within an absolute 1e-12 s.

use crate::library_support;

use library_support::{assert_close, simulate_source};

/// The pulse source of `Modelica.Electrical.Spice3.Sources.V_pulse`: a period starts at
/// each tick of `sample(TD, PER)` (4 ps, then every 2 ps); rise 0.1 ps, width 1 ps, fall
/// 0.1 ps. With ticks due 1 ps early, the event at the end of the width (5.1 ps) counted as
/// the next tick (6 ps) and restarted the period: the source rose again instead of falling.
#[test]
fn sample_ticks_of_a_picosecond_pulse_come_at_their_own_instants() {
    let run = simulate_source(
        "PicoPulse",
        "model PicoPulse
  parameter Real V1 = 0, V2 = 5, TD = 4e-12, TR = 0.1e-12, TF = TR, PW = 1e-12, PER = 2e-12;
  parameter Real Trising = TR, Twidth = Trising + PW, Tfalling = Twidth + TF;
  Real T0(final start = TD, fixed = true);
  Integer counter(start = -1, fixed = true);
  Integer counter2(start = -1, fixed = true);
  Real v;
equation
  when pre(counter2) <> 0 and sample(TD, PER) then
    T0 = time;
    counter2 = pre(counter);
    counter = pre(counter) - (if pre(counter) > 0 then 1 else 0);
  end when;
  v = V1 + (if time < TD or counter2 == 0 or time >= T0 + Tfalling then 0
    else if time < T0 + Trising then (time - T0)*(V2 - V1)/Trising
    else if time < T0 + Twidth then V2 - V1
    else (T0 + Tfalling - time)*(V2 - V1)/(Tfalling - Twidth));
  annotation(experiment(StopTime = 1e-11, Interval = 2.5e-15));
end PicoPulse;",
        &[],
    );
    // the first period starts at the first tick and lasts until the second
    assert_close(
        "T0 in the first period",
        run.at("T0", 5.5e-12),
        4e-12,
        1e-24,
    );
    assert_close("T0 in the second period", run.at("T0", 7e-12), 6e-12, 1e-24);
    // high in the middle of the width, half-way down in the middle of the fall, low after
    assert_close("v during the width", run.at("v", 4.6e-12), 5.0, 1e-9);
    assert_close("v while falling", run.at("v", 5.15e-12), 2.5, 1e-6);
    assert_close("v after the fall", run.at("v", 5.5e-12), 0.0, 1e-9);
    assert_close("v rising again", run.at("v", 6.05e-12), 2.5, 1e-6);
}
