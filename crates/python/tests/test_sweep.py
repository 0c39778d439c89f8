"""Sweeps on the Rust thread pool and on a Dask LocalCluster give the same table."""

import numpy as np
import pytest

import moss_modelica as mm

GRID = {"c": [4.0 + 2.0 * i for i in range(8)], "d": [0.1 * j for j in range(8)]}
OUTPUTS = ["x", "v", "energy"]


def test_grid_order():
    assert mm.grid({"a": [1, 2]}, b=[3, 4]) == [
        {"a": 1, "b": 3}, {"a": 1, "b": 4}, {"a": 2, "b": 3}, {"a": 2, "b": 4}]


def test_local_sweep_matches_single_runs(oscillator):
    before = mm.translation_count()
    table = mm.sweep(oscillator, GRID, outputs=OUTPUTS, stop=3)
    assert mm.translation_count() == before
    assert len(table) == 64 and list(table.columns) == ["c", "d", *OUTPUTS, "error"]
    assert table["error"].isna().all()
    for i in [0, 17, 63]:
        row = table.iloc[i]
        r = oscillator.simulate(stop=3, params={"c": row["c"], "d": row["d"]})
        for name in OUTPUTS:
            assert row[name] == r[name][-1]
    # more damping leaves less energy, at every stiffness
    for c, group in table.groupby("c"):
        assert np.all(np.diff(group.sort_values("d")["energy"].to_numpy()) < 0), c


def test_sweep_over_start_values_and_failures():
    model = mm.load(str(__import__("conftest").MODELS / "Blowup.mo"))
    # x grows as x(0) e^t: from 1 it stays below the limit 2 until 0.5 s, from 3 it starts
    # above it
    table = mm.sweep(model, [{"x": 1.0}, {"x": 3.0}, {"x": 0.5, "limit": 10}], outputs=["x"],
                     stop=0.5, as_frame=False)
    assert table["error"][0] is None and table["error"][2] is None
    # x is swept (its start value) and an output (its final value): both columns are kept
    final = table["x (final)"]
    assert list(table["x"]) == [1.0, 3.0, 0.5]
    assert "x exceeded the limit" in table["error"][1] and np.isnan(final[1])
    assert final[0] == pytest.approx(np.exp(0.5), rel=1e-4)
    assert final[2] == pytest.approx(0.5 * np.exp(0.5), rel=1e-4)


def test_sweep_checks_names_before_running(oscillator):
    with pytest.raises(mm.ParameterError):
        mm.sweep(oscillator, {"nope": [1, 2]}, outputs=["x"])
    with pytest.raises(mm.OptionsError, match="no variable `y`"):
        mm.sweep(oscillator, {"c": [1, 2]}, outputs=["y"])
    with pytest.raises(TypeError):
        mm.sweep(oscillator, [1, 2], outputs=["x"])


def test_dask_local_cluster_gives_the_same_table(oscillator):
    distributed = pytest.importorskip("dask.distributed")
    local = mm.sweep(oscillator, GRID, outputs=OUTPUTS, stop=3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = mm.sweep(oscillator, GRID, outputs=OUTPUTS, stop=3, client=client,
                           batch_size=8)
        # the workers got the translated program: none of them translated anything
        assert set(client.run(mm.translation_count).values()) == {0}
    assert on_dask.equals(local)
