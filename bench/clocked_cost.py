#!/usr/bin/env python3
"""What a fast clock costs: one run each, side by side, of

  continuous  a damped oscillator driven by a constant input (the continuous part alone),
  clocked     the same plant under a 1 kHz sampled PI controller (`sample`, `previous`, `hold`),
  clocked+    the same, with a 400-equation clocked filter chain in the controller,

simulated for 100 s with `moss simulate --stats` (release build). Reported per run: wall and
CPU time, clock ticks (events), right-hand-side evaluations, and the time per tick. A clocked
partition's equations read only values sampled at its ticks, so moss evaluates them at the
ticks only (codegen/src/event_only.rs): `clocked+` costs about as much as `clocked` although
its controller is 100 times larger, and between ticks each right-hand side costs what the
plant alone costs.

Usage: bench/clocked_cost.py [moss-binary] [--stop 100] [--filter 400]
"""

import argparse
import os
import re
import resource
import subprocess
import tempfile
import time

PLANT_DECLARATIONS = """
  parameter Real k = 40 "stiffness";
  parameter Real d = 0.4 "damping";
  Real x(start = 1, fixed = true);
  Real v(start = 0, fixed = true);
  Real u;
"""

PLANT_EQUATIONS = """
  der(x) = v;
  der(v) = -k*x - d*v + u;
"""


def continuous(stop):
    return (
        f"model Continuous\n{PLANT_DECLARATIONS}equation\n{PLANT_EQUATIONS}  u = 0.5;\n"
        f"  annotation(experiment(StopTime={stop}));\nend Continuous;\n"
    )


def clocked(stop, filter_len):
    lines = [f"model Clocked{filter_len}", PLANT_DECLARATIONS]
    lines.append("  Real e, ui(start = 0), uc;")
    if filter_len:
        lines.append(f"  Real f[{filter_len}](each start = 0);")
    lines.append("equation")
    lines.append(PLANT_EQUATIONS)
    lines.append("  e = sample(0.5 - x, Clock(1, 1000));")
    src = "e"
    if filter_len:
        lines.append("  f[1] = 0.5*previous(f[1]) + 0.5*e;")
        lines.append(f"  for i in 2:{filter_len} loop")
        lines.append("    f[i] = 0.5*previous(f[i]) + 0.5*f[i-1];")
        lines.append("  end for;")
        src = f"f[{filter_len}]"
    lines.append(f"  ui = previous(ui) + 0.001*2*{src};")
    lines.append(f"  uc = 5*{src} + ui;")
    lines.append("  u = hold(uc);")
    lines.append(f"  annotation(experiment(StopTime={stop}));")
    lines.append(f"end Clocked{filter_len};")
    return "\n".join(lines) + "\n"


def run(moss, path, out):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(
        # only the plant's variables are stored: every tick is an event whose two sides are
        # recorded, and writing 400 filter states at 200,000 rows would measure the CSV writer
        [moss, "simulate", path, "--stats", "-o", out, "--intervals", "1000", "--vars", "x|v|u"],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"moss failed on {path}:\n{p.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stats = p.stdout + p.stderr

    def grab(pattern):
        m = re.search(pattern, stats)
        return int(m.group(1)) if m else None

    state, timed = grab(r"events:\s*(\d+) state"), grab(r"events:.*?(\d+) time")
    return {
        "wall": wall,
        "cpu": cpu,
        "events": (state or 0) + (timed or 0),
        "rhs": grab(r"rhs evaluations:\s*(\d+)"),
        "stats": stats,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("moss", nargs="?", default=os.path.join(here, "..", "target", "release", "moss"))
    ap.add_argument("--stop", type=float, default=100.0)
    ap.add_argument("--filter", type=int, default=400)
    ap.add_argument("--show-stats", action="store_true")
    a = ap.parse_args()
    models = [
        ("continuous", continuous(a.stop)),
        ("clocked", clocked(a.stop, 0)),
        (f"clocked+{a.filter}", clocked(a.stop, a.filter)),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        print(f"| model | wall [s] | CPU [s] | events | RHS evaluations | CPU per event [µs] |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, src in models:
            path = os.path.join(tmp, name.replace("+", "_") + ".mo")
            with open(path, "w") as f:
                f.write(src)
            r = run(a.moss, path, os.path.join(tmp, "out.csv"))
            per = (r["cpu"] / r["events"] * 1e6) if r["events"] else float("nan")
            print(
                f"| {name} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['events']} | {r['rhs']} | {per:.1f} |"
            )
            if a.show_stats:
                print(r["stats"])


if __name__ == "__main__":
    main()
