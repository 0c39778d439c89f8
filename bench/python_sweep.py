#!/usr/bin/env python3
"""Throughput of parameter sweeps: a 1,000-point grid of the damped oscillator (c, d).

    python3 bench/python_sweep.py --moss target/release/moss [--points 1000]

Runs, in one process, each way of doing the same 1,000 simulations (0 .. 5 s, 500 output
intervals, the model's final x reported) and prints runs per second as a Markdown table:

  cli        `moss simulate` called once per point (one process each, CSV of x only)
  local      moss_modelica.sweep on Rust threads (2 threads)
  dask       moss_modelica.sweep on a dask.distributed LocalCluster, 2 worker processes
             (cluster start-up reported apart, not in the rate)
  rumoca     Rumoca's Python API: load once, `with_params(c=..., d=...).simulate(...)` per
             point, when `rumoca` is installed
  fmpy       FMPy on a moss FMU, when this moss can export one (`moss fmu`/`moss export`) and
             `fmpy` is installed

The final values of every way are compared with the local sweep's (largest difference
printed), so a fast way that computes something else shows.
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import moss_modelica as mm

MODEL = Path(__file__).resolve().parents[1] / "crates/python/tests/models/Oscillator.mo"
STOP = 5.0
INTERVALS = 500


def points(n):
    """n points of a grid over c in [5, 50] and d in [0.1, 2] (about sqrt(n) values each)."""
    nc = int(math.sqrt(n))
    nd = math.ceil(n / nc)
    grid = mm.grid(c=np.linspace(5, 50, nc).tolist(), d=np.linspace(0.1, 2, nd).tolist())
    return grid[:n]


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def run_cli(moss, pts):
    finals = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "x.csv"
        for p in pts:
            subprocess.run([moss, "simulate", str(MODEL), "-p", f"c={p['c']!r}",
                            "-p", f"d={p['d']!r}", "--stop-time", str(STOP),
                            "--intervals", str(INTERVALS), "--vars", "x", "-o", str(out)],
                           check=True, capture_output=True)
            finals.append(mm.read_result(out)["x"][-1])
    return np.array(finals)


def run_local(model, pts):
    table = mm.sweep(model, pts, outputs=["x"], stop=STOP, intervals=INTERVALS, threads=2,
                     as_frame=False)
    return table["x"]


def run_dask(model, pts):
    from dask.distributed import Client, LocalCluster

    start, (cluster, client) = timed(lambda: _cluster(LocalCluster, Client))
    try:
        mm.sweep(model, pts[:4], outputs=["x"], stop=STOP, client=client)  # workers warm
        seconds, table = timed(lambda: mm.sweep(model, pts, outputs=["x"], stop=STOP,
                                                intervals=INTERVALS, client=client,
                                                as_frame=False))
    finally:
        client.close()
        cluster.close()
    return start, seconds, table["x"]


def _cluster(LocalCluster, Client):
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return cluster, Client(cluster)


def run_rumoca(pts):
    import rumoca

    model = rumoca.Session().load(str(MODEL), model="Oscillator")
    dt = STOP / INTERVALS

    def sweep():
        finals = []
        for p in pts:
            try:
                r = model.with_params(c=p["c"], d=p["d"]).simulate(t=(0.0, STOP), dt=dt)
                finals.append(r.to_dict()["data"]["x"][-1])
            except rumoca.RumocaError:
                finals.append(np.nan)  # counted and reported, not timed apart
        return np.array(finals)

    return timed(sweep)


def run_fmpy(moss, pts):
    """FMPy's simulate_fmu on a Co-Simulation FMU exported once by `moss fmu`, one call per
    point with the parameters as start values (FMPy's own parameter-variation pattern).
    The FMU is extracted once, as FMPy's example does, so the loop measures simulation."""
    import fmpy

    with tempfile.TemporaryDirectory() as tmp:
        fmu = Path(tmp) / "Oscillator.fmu"
        subprocess.run([moss, "fmu", str(MODEL), "-o", str(fmu), "--kind", "cs"],
                       check=True, capture_output=True)
        unzipped = fmpy.extract(str(fmu), unzipdir=str(Path(tmp) / "unzipped"))
        description = fmpy.read_model_description(unzipped)

        def sweep():
            finals = []
            for p in pts:
                r = fmpy.simulate_fmu(unzipped, model_description=description,
                                      fmi_type="CoSimulation", validate=False,
                                      start_values={"c": p["c"], "d": p["d"]},
                                      stop_time=STOP, output_interval=STOP / INTERVALS,
                                      output=["x"])
                finals.append(r["x"][-1])
            return np.array(finals)

        return timed(sweep)


def fmu_export_command(moss):
    """The moss subcommand that writes an FMU, if this moss has one."""
    help_text = subprocess.run([moss, "--help"], capture_output=True, text=True).stdout
    for name in ("fmu", "export-fmu", "export"):
        if any(line.strip().startswith(name + " ") for line in help_text.splitlines()):
            return name
    return None


def row(name, n, seconds, finals, reference, note=""):
    diff = np.max(np.abs(np.asarray(finals) - reference)) if finals is not None else float("nan")
    print(f"| {name} | {n} | {seconds:.2f} | {n / seconds:,.0f} | {diff:.1e} | {note} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moss", default="target/release/moss")
    ap.add_argument("--points", type=int, default=1000)
    args = ap.parse_args()
    pts = points(args.points)
    n = len(pts)
    model = mm.load(str(MODEL))
    run_local(model, pts[:8])  # imports and first-call costs out of the figures

    local_s, reference = timed(lambda: run_local(model, pts))
    print(f"{n} points of Oscillator (c, d), 0 .. {STOP} s, {INTERVALS} intervals; "
          f"{os.cpu_count()} cores\n")
    print("| way | runs | seconds | runs/s | max diff of final x vs local | note |")
    print("|---|---|---|---|---|---|")
    cli_s, cli = timed(lambda: run_cli(args.moss, pts))
    row("moss CLI, one process per point", n, cli_s, cli, reference, "sequential")
    row("moss_modelica.sweep, Rust threads", n, local_s, reference, reference, "2 threads")
    try:
        start, dask_s, on_dask = run_dask(model, pts)
        row("moss_modelica.sweep on Dask LocalCluster", n, dask_s, on_dask, reference,
            f"2 worker processes; cluster start {start:.1f} s not included")
    except ImportError:
        print("| Dask | - | - | - | - | not installed |")
    try:
        rumoca_s, rumoca_finals = run_rumoca(pts)
        failed = int(np.isnan(rumoca_finals).sum())
        ok = ~np.isnan(rumoca_finals)
        row("Rumoca `with_params(...).simulate`", n, rumoca_s, rumoca_finals[ok],
            reference[ok], f"one thread, compiled once; {failed} runs failed")
    except ImportError:
        print("| Rumoca | - | - | - | - | `pip install rumoca` to include it |")
    if fmu_export_command(args.moss) is None:
        print("| FMPy on a moss FMU | - | - | - | - | this moss has no FMU export |")
    else:
        try:
            fmpy_s, fmpy_finals = run_fmpy(args.moss, pts)
            row("FMPy `simulate_fmu` on a moss FMU (CS)", n, fmpy_s, fmpy_finals, reference,
                "one thread, FMU exported and extracted once")
        except ImportError:
            print("| FMPy | - | - | - | - | `pip install fmpy` to include it |")


if __name__ == "__main__":
    sys.exit(main())
