#!/usr/bin/env python3
"""CPU time of `moss simulate` on chosen MSL examples, two moss binaries side by side.

Each example is simulated with its own experiment settings by the base binary and then by
the new one, alternately, `--repeat` times; the table gives the smallest user+system CPU
time of each (CPU, not wall time: the machine is shared) and whether the run succeeded.

    python3 bench/msl_examples_cpu.py --msl /path/to/msl --base OLD/moss --new target/release/moss \
        Modelica.Fluid.Examples.DrumBoiler.DrumBoiler Modelica.Media.Examples.WaterIF97
"""
import argparse
import os
import resource
import subprocess
import tempfile


def cpu_of_run(moss, model, msl, timeout):
    """(CPU seconds, ok) of one `moss simulate` run in a scratch folder."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            r = subprocess.run(
                [moss, "simulate", model, "--lib", msl, "-o", os.path.join(tmp, "r.csv")],
                capture_output=True,
                timeout=timeout,
            )
            ok = r.returncode == 0
        except subprocess.TimeoutExpired:
            ok = False
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--msl", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    print("| example | base CPU s | new CPU s |")
    print("|---|---:|---:|")
    for m in a.models:
        best = {}
        for _ in range(a.repeat):
            for label, moss in (("base", a.base), ("new", a.new)):
                cpu, ok = cpu_of_run(moss, m, a.msl, a.timeout)
                cell = f"{cpu:.2f}" + ("" if ok else " (failed)")
                if label not in best or cpu < best[label][0]:
                    best[label] = (cpu, cell)
        print(f"| {m} | {best['base'][1]} | {best['new'][1]} |", flush=True)


if __name__ == "__main__":
    main()
