#!/usr/bin/env python3
"""moss and Rumoca side by side: translation and simulation times of the same models.

Usage (from the repository root; bench/rumoca_vs_moss.sh sets up Rumoca and moss first):

    bench/rumoca_vs_moss.py --rumoca-python VENV/bin/python [--repeat 5] [--sizes 10 100 1000]

For each model and each repetition, in fresh processes:
  moss   `moss translate FILE`: the pass times it prints (total = parse/flatten + symbolic
         passes up to the causal program); `moss simulate FILE --stats`: initialization and
         integration time it prints (all variables recorded, as Rumoca does)
  Rumoca bench/rumoca_worker.py: `Session().load` and `Model.simulate`, timed in-process
The same stop time, output interval (stop/500) and tolerance (rtol = atol = 1e-6) for both.
Figures are medians over the repetitions. A last run of each tool compares the final value
of one variable, so that the two tools are seen to compute the same trajectory.
"""

import argparse
import json
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.dont_write_bytecode = True  # keep bench/ free of __pycache__
sys.path.insert(0, str(HERE))
import gen_chain  # noqa: E402  (the chain generator beside this script)

TOLERANCE = 1e-6
# (moss solver, Rumoca solver): each tool's default, then the same method family.
SOLVER_PAIRS = [("auto", "auto"), ("bdf", "bdf"), ("dopri5", "rk-like")]


class Case:
    """One benchmark model: where it is, how long to simulate, which variable to compare."""

    def __init__(self, label, path, model, stop, variable):
        self.label = label
        self.path = path
        self.model = model
        self.stop = stop
        self.variable = variable


def chain_case(n, stop, workdir):
    """The generated chain of n masses, simulated for `stop` seconds."""
    path = workdir / f"MassChain{n}.mo"
    if not path.exists():
        path.write_text(gen_chain.chain_source(n))
    return Case(f"MassChain{n}, {stop:g} s", path, f"MassChain{n}", stop, f"mass[{n}].s")


def cases(sizes, long_runs, workdir):
    """The small hand-written models, the generated chains over 10 s and the long runs
    (N:STOP) of chains, where integration outweighs everything else."""
    models = HERE / "models"
    found = [
        Case("DampedOscillator, 10 s", models / "DampedOscillator.mo", "DampedOscillator", 10.0, "x"),
        Case("BouncingBall, 3 s", models / "BouncingBall.mo", "BouncingBall", 3.0, "h"),
    ]
    found += [chain_case(n, 10.0, workdir) for n in sizes]
    for spec in long_runs:
        n, stop = spec.split(":")
        found.append(chain_case(int(n), float(stop), workdir))
    return found


def run(cmd):
    """stdout of a command that must succeed; its stderr is shown if it fails."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{proc.stderr}{proc.stdout}")
    return proc.stdout


def moss_translate(moss, case):
    """(pass-time total, states, algebraic) printed by `moss translate`."""
    out = run([moss, "translate", case.path])
    total = float(re.search(r"^\s+total\s+([0-9.]+) s", out, re.M).group(1))
    sizes = re.search(r"(\d+) states, (\d+) algebraic", out)
    return total, int(sizes.group(1)), int(sizes.group(2))


def moss_simulate_args(moss, case, solver, output):
    return [
        moss, "simulate", case.path,
        "--stop-time", repr(case.stop),
        "--interval", repr(case.stop / 500),
        "--tolerance", repr(TOLERANCE),
        "--solver", solver,
        "--stats",
        "-o", output,
    ]


def moss_simulate(moss, case, solver, workdir):
    """Initialization + integration time, and the whole-process translate stage."""
    out = run(moss_simulate_args(moss, case, solver, workdir / "moss_res.mat"))
    init = float(re.search(r"initialization time:\s+([0-9.]+) s", out).group(1))
    integration = float(re.search(r"integration time:\s+([0-9.]+) s", out).group(1))
    steps = int(re.search(r"steps:\s+(\d+)", out).group(1))
    return {"simulate": init + integration, "steps": steps}


def moss_final_value(moss, case, solver, workdir):
    """The last value of the compared variable (a run that stores only that variable)."""
    csv = workdir / "moss_check.csv"
    cmd = moss_simulate_args(moss, case, solver, csv)
    cmd += ["--vars", re.escape(case.variable)]
    run(cmd)
    header, *rows = csv.read_text().splitlines()
    column = [h.strip('"') for h in header.split(",")].index(case.variable)
    return float(rows[-1].split(",")[column])


def rumoca_run(python, case, pairs):
    """One fresh Rumoca process: load time and, per solver, simulate figures."""
    solvers = [r for _, r in SOLVER_PAIRS]
    cmd = [python, HERE / "rumoca_worker.py", case.path, case.model, repr(case.stop),
           case.variable, str(pairs), *solvers]
    return json.loads(run(cmd))


def median(values):
    return statistics.median(values) if values else float("nan")


def spread(values):
    """Half the range of the values: how far apart repeated estimates fell."""
    return (max(values) - min(values)) / 2 if values else float("nan")


class Samples:
    """Raw figures of one model, gathered over the repetitions."""

    def __init__(self):
        self.moss_translate = []
        self.moss_simulate = {m: [] for m, _ in SOLVER_PAIRS}
        self.rumoca_load = []
        self.rumoca_total = {r: [] for _, r in SOLVER_PAIRS}
        self.rumoca_setup = {r: [] for _, r in SOLVER_PAIRS}
        self.rumoca_integrate = {r: [] for _, r in SOLVER_PAIRS}
        self.rumoca_error = {}
        self.rumoca_final = {}
        self.rumoca_size = None
        self.moss_size = None
        self.version = None

    def add_rumoca(self, run):
        self.version = run["version"]
        self.rumoca_size = (run["states"], run["algebraic"])
        self.rumoca_load.append(run["load"])
        for solver, sim in run["sims"].items():
            if "error" in sim:
                self.rumoca_error[solver] = sim["error"]
                continue
            self.rumoca_total[solver] += sim["total"]
            self.rumoca_setup[solver] += sim["setup"]
            self.rumoca_integrate[solver] += [t - s for t, s in zip(sim["total"], sim["setup"])]
            self.rumoca_final[solver] = sim["final"]


def measure(case, args, workdir):
    """Median figures of both tools on one model."""
    moss = args.moss
    raw = Samples()
    for _ in range(args.repeat):
        total, states, algebraic = moss_translate(moss, case)
        raw.moss_translate.append(total)
        raw.moss_size = (states, algebraic)
        for m, _ in SOLVER_PAIRS:
            sim = moss_simulate(moss, case, m, workdir)
            raw.moss_simulate[m].append(sim["simulate"])
        raw.add_rumoca(rumoca_run(args.rumoca_python, case, args.pairs))
    summary = {
        "moss_size": raw.moss_size,
        "rumoca_size": raw.rumoca_size,
        "version": raw.version,
        "moss_translate": median(raw.moss_translate),
        "rumoca_load": median(raw.rumoca_load),
        "pairs": [],
    }
    for m, r in SOLVER_PAIRS:
        summary["pairs"].append({
            "moss_solver": m,
            "rumoca_solver": r,
            "moss_simulate": median(raw.moss_simulate[m]),
            "rumoca_simulate": median(raw.rumoca_total[r]),
            "rumoca_setup": median(raw.rumoca_setup[r]),
            "rumoca_integrate": median(raw.rumoca_integrate[r]),
            "rumoca_integrate_spread": spread(raw.rumoca_integrate[r]),
            "rumoca_error": raw.rumoca_error.get(r),
            "moss_final": moss_final_value(moss, case, m, workdir),
            "rumoca_final": raw.rumoca_final.get(r, float("nan")),
        })
    return summary


def fmt_time(seconds):
    """Seconds in a readable unit."""
    if seconds != seconds:  # NaN: not measured
        return "–"
    if seconds <= 0:
        return "≈ 0"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(rumoca, moss):
    if rumoca != rumoca or moss <= 0:
        return "–"
    ratio = rumoca / moss
    if ratio <= 0:
        return "–"
    return f"{ratio:.0f}×" if ratio >= 10 else f"{ratio:.1f}×"


def fmt_estimate(p):
    """Rumoca's integration alone (full run - short run), with the spread of the pairs."""
    return f"{fmt_time(p['rumoca_integrate'])} ± {fmt_time(p['rumoca_integrate_spread'])}"


def fmt_estimate_ratio(p):
    """The integration ratio, or `noise` when the estimate is smaller than its spread."""
    if p["rumoca_integrate"] <= p["rumoca_integrate_spread"]:
        return "noise"
    return fmt_ratio(p["rumoca_integrate"], p["moss_simulate"])


def agreement(a, b, scale):
    """Relative difference of the final values, scaled by the variable's size."""
    if b != b:
        return "–"
    return f"{abs(a - b) / max(abs(a), abs(b), scale):.1e}"


def print_translation(results):
    print("### Translation\n")
    print("| model | states + algebraics: moss / Rumoca | moss `translate` | Rumoca `load` "
          "| Rumoca/moss | Rumoca `load` + lowering | Rumoca/moss |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    shown = set()
    for case, s in results:
        if case.model in shown:
            continue  # the long run of a chain translates the same model
        shown.add(case.model)
        ms, ma = s["moss_size"]
        rs, ra = s["rumoca_size"]
        lowered = s["rumoca_load"] + s["pairs"][0]["rumoca_setup"]
        print(f"| {case.label} | {ms} + {ma} / {rs} + {ra} | {fmt_time(s['moss_translate'])} "
              f"| {fmt_time(s['rumoca_load'])} | {fmt_ratio(s['rumoca_load'], s['moss_translate'])} "
              f"| {fmt_time(lowered)} | {fmt_ratio(lowered, s['moss_translate'])} |")


def print_simulation(results, index):
    m, r = SOLVER_PAIRS[index]
    print(f"\n### Simulation, moss `{m}` vs Rumoca `{r}`\n")
    print("| model | moss init + integration | Rumoca `simulate` | Rumoca/moss "
          "| Rumoca lowering + init | Rumoca integration | Rumoca/moss "
          "| final value moss | final value Rumoca | rel. diff |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case, s in results:
        p = s["pairs"][index]
        if p["rumoca_error"]:
            reason = p["rumoca_error"].splitlines()[0][:80]
            print(f"| {case.label} | {fmt_time(p['moss_simulate'])} | fails: {reason} "
                  f"| – | – | – | – | {p['moss_final']:.6g} | – | – |")
            continue
        print(f"| {case.label} | {fmt_time(p['moss_simulate'])} | {fmt_time(p['rumoca_simulate'])} "
              f"| {fmt_ratio(p['rumoca_simulate'], p['moss_simulate'])} "
              f"| {fmt_time(p['rumoca_setup'])} | {fmt_estimate(p)} "
              f"| {fmt_estimate_ratio(p)} "
              f"| {p['moss_final']:.7g} | {p['rumoca_final']:.7g} "
              f"| {agreement(p['moss_final'], p['rumoca_final'], 1e-3)} |")


def print_end_to_end(results):
    print("\n### End to end (translation + simulation, each tool's default solver)\n")
    print("| model | moss | Rumoca | Rumoca/moss |")
    print("|---|---:|---:|---:|")
    for case, s in results:
        p = s["pairs"][0]
        moss = s["moss_translate"] + p["moss_simulate"]
        rumoca = s["rumoca_load"] + p["rumoca_simulate"]
        print(f"| {case.label} | {fmt_time(moss)} | {fmt_time(rumoca)} | {fmt_ratio(rumoca, moss)} |")


def print_tables(results, args):
    first = results[0][1]
    print(f"\nRumoca {first['version']}; moss medians of {args.repeat} runs, Rumoca medians of "
          f"{args.repeat} processes ({args.pairs} simulate pairs each); rtol = atol = "
          f"{TOLERANCE:g}, 500 output intervals.\n")
    print_translation(results)
    for index in range(len(SOLVER_PAIRS)):
        print_simulation(results, index)
    print_end_to_end(results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moss", default=str(HERE.parent / "target/release/moss"),
                        help="the moss binary [target/release/moss]")
    parser.add_argument("--rumoca-python", required=True,
                        help="a Python interpreter that can `import rumoca`")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure [5]")
    parser.add_argument("--pairs", type=int, default=2,
                        help="Rumoca full/short simulate pairs per process [2]")
    parser.add_argument("--long", nargs="*", default=["100:1000", "1000:100"],
                        metavar="N:STOP",
                        help="long runs: chain size and stop time [100:1000 1000:100]")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000],
                        help="numbers of masses of the generated chains [10 100 1000]")
    parser.add_argument("--json", help="also write the medians to this file")
    args = parser.parse_args()
    started = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="moss-rumoca-") as tmp:
        workdir = pathlib.Path(tmp)
        for case in cases(args.sizes, args.long, workdir):
            print(f"measuring {case.label} ...", file=sys.stderr, flush=True)
            results.append((case, measure(case, args, workdir)))
    print_tables(results, args)
    if args.json:
        data = {case.label: s for case, s in results}
        pathlib.Path(args.json).write_text(json.dumps(data, indent=1))
    print(f"\n(benchmark took {time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
