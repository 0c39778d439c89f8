//! Replaceable medium packages in the style of Modelica.Media, simulated: the test medium
//! packages of the frontend's fixture `MediaLike.mo` (a partial package completed by the
//! packages that extend it, with constants given only by their extends modifiers) are used by
//! a model that redeclares `Medium` one and two levels up. The values come from the concrete
//! packages: molar masses, heat capacities, record constants and the functions that replace
//! the partial ones.

use crate::library_support;

use library_support::{assert_close, simulate_source};

const MEDIA: &str = include_str!("../../../frontend/tests/fixtures/MediaLike.mo");

fn with_model(model: &str) -> String {
    format!("{MEDIA}\n{model}\n")
}

#[test]
fn water_redeclared_two_levels_up_gives_the_water_values() {
    let run = simulate_source(
        "media_water",
        &with_model(
            "model WaterRun
               MediaLike.TwoLevels two(redeclare package Medium = MediaLike.Water);
               annotation(experiment(StopTime = 1, Interval = 0.01));
             end WaterRun;",
        ),
        &[],
    );
    // h = cp*(T - 273.15) with cp = 4184 given by Water's extends modifier, T = 300 + time.
    for t in [0.0, 0.5, 1.0] {
        let h = 4184.0 * (300.0 + t - 273.15);
        assert_close("medium.h", run.at("two.user.medium.h", t), h, 1e-6 * h);
        assert_close("h2", run.at("two.user.h2", t), h, 1e-6 * h);
        assert_close("h3", run.at("two.user.h3", t), h, 1e-6 * h);
    }
    assert_close("MM", run.last("two.user.medium.MM"), 0.018, 1e-12);
    assert_close("Tc", run.last("two.user.Tc"), 647.0, 1e-9);
    // setSmoothState of the concrete package: state_a for x > 0 (after t = 0.5).
    assert_close(
        "smooth.T early",
        run.at("two.user.smooth.T", 0.2),
        350.0,
        1e-9,
    );
    assert_close(
        "smooth.T late",
        run.at("two.user.smooth.T", 0.9),
        300.9,
        1e-6,
    );
}

#[test]
fn mixture_with_its_own_base_properties() {
    let run = simulate_source(
        "media_mixture",
        &with_model(
            "model MixtureRun
               extends MediaLike.UseMedium(redeclare package Medium = MediaLike.Mixture);
               annotation(experiment(StopTime = 1, Interval = 0.01));
             end MixtureRun;",
        ),
        &[],
    );
    // Two substances (the size of `substanceNames` from the extends modifier).
    assert_close("X[2]", run.last("medium.X[2]"), 0.5, 1e-12);
    assert_close("Xsum", run.last("medium.Xsum"), 1.0, 1e-12);
    assert_close("TcMax", run.last("TcMax"), 500.0, 1e-9);
    assert_close("MM2", run.last("MM2"), 0.06, 1e-12);
    let h = 1000.0 * (301.0 - 273.15);
    assert_close("medium.h", run.last("medium.h"), h, 1e-6 * h);
}
