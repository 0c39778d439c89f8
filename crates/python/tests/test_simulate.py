"""Loading, simulating, parameters and start values without translating again."""

import math
import pickle

import numpy as np
import pytest

import moss_modelica as mm
from conftest import COUPLED_CLUTCHES, model_file


def damped(t, c, d, x0, v0=0.0, m=1.0):
    """Closed form of the Oscillator model started at x0 with speed v0 (underdamped)."""
    a = d / (2 * m)
    wd = math.sqrt(c / m - a * a)
    return np.exp(-a * t) * (x0 * np.cos(wd * t) + (v0 + a * x0) / wd * np.sin(wd * t))


def test_coupled_clutches_matches_the_cli_result_file(clutches, clutches_cli_result):
    cli = mm.read_result(clutches_cli_result)
    ours = clutches.simulate()
    assert set(ours.names) == set(cli.names)
    np.testing.assert_allclose(ours.time, cli.time, rtol=0, atol=1e-12)
    for name in ["J1.w", "J2.w", "J3.w", "J4.w", "clutch1.tau", "clutch3.mode"]:
        np.testing.assert_allclose(ours[name], cli[name], rtol=1e-9, atol=1e-9, err_msg=name)


def test_result_carries_units_descriptions_stats_and_events(clutches):
    r = clutches.simulate(stop=1.2)
    assert r.time[0] == 0 and r.time[-1] == pytest.approx(1.2)
    assert len(r["J1.w"]) == len(r.time) == len(r)
    units = {v.name: v.unit for v in r.variables}
    assert units["J1.w"] == "rad/s" and units["J1.phi"] == "rad"
    kinds = {v.name: v.kind for v in r.variables}
    assert kinds["J1.J"] == "parameter" and kinds["clutch1.mode"] == "discrete"
    # the clutches switch mode: state events, and the step at T2 = 0.4 s a time event
    assert r.stats["state_events"] > 0 and r.stats["steps"] > 0
    assert np.any(np.isclose(r.events, 0.4))
    i = np.flatnonzero(r.time == r.events[0])
    assert len(i) == 2, "an event is two points at the same time"


def test_parameters_change_without_translating_again(oscillator):
    before = mm.translation_count()
    for c, d in [(10, 0.5), (20, 0.5), (5, 1.0)]:
        r = oscillator.simulate(params={"c": c, "d": d}, tolerance=1e-8)
        np.testing.assert_allclose(r["x"], damped(r.time, c, d, 1.0), atol=1e-5)
        assert r["c"][0] == c
    assert mm.translation_count() == before


def test_start_values_change_without_translating_again(oscillator):
    before = mm.translation_count()
    # x starts at the parameter x0, so it is set through x0; v has a literal start
    assert oscillator.start_values == {"v": 0.0}
    r = oscillator.simulate(start_values={"v": 2.0}, tolerance=1e-8)
    assert r["v"][0] == 2.0
    np.testing.assert_allclose(r["x"], damped(r.time, 10, 0.5, 1.0, v0=2.0), atol=1e-5)
    r = oscillator.simulate(params={"x0": 3.0}, tolerance=1e-8)
    np.testing.assert_allclose(r["x"], damped(r.time, 10, 0.5, 3.0), atol=1e-5)
    with pytest.raises(mm.ParameterError, match="computed from parameters"):
        oscillator.simulate(start_values={"x": 2.0})
    assert mm.translation_count() == before


def test_runs_do_not_leak_into_each_other(oscillator):
    first = oscillator.simulate()
    oscillator.simulate(params={"c": 50, "x0": -4}, start_values={"v": 3})
    again = oscillator.simulate()
    np.testing.assert_array_equal(first["x"], again["x"])


def test_options_and_outputs(oscillator):
    r = oscillator.simulate(start=0, stop=2, intervals=40, solver="bdf", outputs=["x", "v"])
    assert len(r.time) == 41 and r.names == ["v", "x"] or sorted(r.names) == ["v", "x"]
    assert r.stats["solver"].startswith("bdf")
    r = oscillator.simulate(stop=1, interval=0.25, outputs="x|der\\(x\\)")
    assert sorted(r.names) == ["der(x)", "x"]
    np.testing.assert_allclose(r.time, [0, 0.25, 0.5, 0.75, 1.0])
    assert oscillator.experiment["stop"] == 5
    assert oscillator.parameters["c"] == 10


def test_model_variables_list_kinds(oscillator):
    kinds = {v.name: v.kind for v in oscillator.variables()}
    assert kinds["x"] == "state" and kinds["c"] == "parameter" and kinds["energy"] == "algebraic"
    assert all(not v.name.startswith("$") for v in oscillator.variables())


def test_structural_parameter_is_refused_then_retranslated():
    chain = mm.load(model_file("Chain.mo"))
    with pytest.raises(mm.StructuralParameterError) as err:
        chain.simulate(params={"n": 4})
    assert err.value.name == "n" and "structure" in str(err.value)
    before = mm.translation_count()
    longer = chain.retranslate(params={"n": 4})
    assert mm.translation_count() == before + 1
    assert longer.parameters["n"] == 4 and longer.name == "Chain"
    r = longer.simulate()
    # each lag delays the step further: the last element lags behind the one before
    assert 0 < r["x[4]"][-1] < r["x[3]"][-1] < r["x[1]"][-1] < 1
    assert "x[4]" not in chain.simulate()


def test_pickled_model_runs_without_translating(oscillator):
    before = mm.translation_count()
    copy = pickle.loads(pickle.dumps(oscillator))
    assert mm.translation_count() == before
    a = oscillator.simulate(params={"c": 7})
    b = copy.simulate(params={"c": 7})
    np.testing.assert_array_equal(a["x"], b["x"])
    assert copy.start_values == oscillator.start_values


def test_results_pickle_and_convert(oscillator):
    r = oscillator.simulate(stop=1)
    back = pickle.loads(pickle.dumps(r))
    np.testing.assert_array_equal(back["x"], r["x"])
    assert back.stats == r.stats
    df = r.to_pandas(["x", "v"])
    assert list(df.columns) == ["x", "v"] and df.index.name == "time"
    np.testing.assert_array_equal(df["x"].to_numpy(), r["x"])
    assert r.final_values(["x"])["x"] == r["x"][-1]
    assert set(r.to_dict(["x"])) == {"time", "x"}


@pytest.mark.parametrize("suffix", [".mat", ".csv"])
def test_results_written_and_read_back(oscillator, tmp_path, suffix):
    r = oscillator.simulate(stop=1)
    path = tmp_path / f"osc{suffix}"
    r.save(path)
    back = mm.read_result(path)
    assert sorted(back.names) == sorted(r.names)
    np.testing.assert_allclose(back["x"], r["x"], rtol=1e-12)
    np.testing.assert_allclose(back.time, r.time, rtol=1e-12)
    if suffix == ".mat":  # the CSV layout has no units
        assert {v.name: v.unit for v in back.variables}["x"] == "m"


def test_threads_simulate_at_once(oscillator):
    """The GIL is released during runs: several Python threads simulate concurrently."""
    from concurrent.futures import ThreadPoolExecutor

    cs = [4.0, 8.0, 12.0, 16.0]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda c: oscillator.simulate(params={"c": c}), cs))
    for c, r in zip(cs, results):
        np.testing.assert_array_equal(r["x"], oscillator.simulate(params={"c": c})["x"])


def test_class_from_library_path(tmp_path, monkeypatch):
    lib = tmp_path / "MyLib"
    lib.mkdir()
    (lib / "package.mo").write_text("package MyLib\nend MyLib;\n")
    (lib / "Decay.mo").write_text(
        "within MyLib;\nmodel Decay\n  parameter Real k = 2;\n"
        "  Real y(start = 1, fixed = true);\nequation\n  der(y) = -k * y;\nend Decay;\n")
    m = mm.load("MyLib.Decay", libs=[tmp_path])
    assert m.simulate(stop=1)["y"][-1] == pytest.approx(math.exp(-2), rel=1e-4)
    monkeypatch.setenv("MODELICAPATH", str(tmp_path))
    assert mm.load("MyLib.Decay").name == "MyLib.Decay"
    with pytest.raises(mm.ClassNotFoundError):
        mm.load("MyLib.Decay", modelicapath=False)
    assert COUPLED_CLUTCHES  # the bundled library stays reachable
