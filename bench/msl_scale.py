#!/usr/bin/env python3
"""Scaling benchmark on models built from MSL components (issue #16).

Generates two models for each size N and runs moss on them, one process per stage:

- `Ladder<N>`: an RC ladder of N sections, `Modelica.Electrical.Analog.Basic.Resistor` and
  `Capacitor` arrays joined by `connect` in `for` loops, a `StepVoltage` source and a `Ground`
  (needs the real MSL: the bundled library has no Electrical package);
- `Chain<N>`: N `Modelica.Mechanics.Rotational.Components.Inertia` joined by N-1
  `SpringDamper`s, driven by a `Torque` from a `Blocks.Sources.Sine` (runs with the real MSL
  and with the bundled library);
- `Pipe<N>`: one `Modelica.Fluid.Pipes.DynamicPipe` of IF97 water (`StandardWater`)
  discretised into N volumes (2N states: pressure and enthalpy of each), between a source
  whose pressure oscillates around 2 bar and a sink at 1 bar (real MSL only; issue #14 asks
  for N = 10, 100, 1,000).

Per model and size it reports: `moss check` (frontend: time, peak memory), `moss translate`
(frontend + symbolic), `moss simulate` over 1 s with 1,000 intervals to CSV (time per stage
from `--stats`, peak memory, file size), bytes of peak memory per scalar equation, and the
ratio of the end-to-end CPU time to the previous size. Peak memory is the process's maximum
resident set (wait4's ru_maxrss). Times are wall-clock with the CPU time (user + system, both
threads: the result file is written on a second thread) in parentheses, one run each. On a
shared machine the wall-clock times grow with the load; the CPU times much less.

Usage:
  bench/msl_scale.py [--msl DIR | --bundled] [--sizes 100 1000 10000 100000]
                     [--models ladder chain pipe] [--moss target/release/moss] [--timeout 900]
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

LADDER = """model Ladder{n}
  parameter Integer N = {n};
  Modelica.Electrical.Analog.Basic.Resistor R[N](each R = 1.0);
  Modelica.Electrical.Analog.Basic.Capacitor C[N](each C = 1e-3, each v(fixed = true, start = 0));
  Modelica.Electrical.Analog.Sources.StepVoltage src(V = 1.0, startTime = 0.1);
  Modelica.Electrical.Analog.Basic.Ground gnd;
equation
  connect(src.p, R[1].p);
  connect(src.n, gnd.p);
  for i in 1:N - 1 loop
    connect(R[i].n, R[i + 1].p);
  end for;
  for i in 1:N loop
    connect(R[i].n, C[i].p);
    connect(C[i].n, gnd.p);
  end for;
end Ladder{n};
"""

CHAIN = """model Chain{n}
  parameter Integer N = {n};
  Modelica.Mechanics.Rotational.Components.Inertia J[N](each J = 1.0);
  Modelica.Mechanics.Rotational.Components.SpringDamper sd[N - 1](each c = 1e4, each d = 10);
  Modelica.Mechanics.Rotational.Sources.Torque tau;
  Modelica.Blocks.Sources.Sine sine(f = 1, amplitude = 10);
equation
  connect(sine.y, tau.tau);
  connect(tau.flange, J[1].flange_a);
  for i in 1:N - 1 loop
    connect(J[i].flange_b, sd[i].flange_a);
    connect(sd[i].flange_b, J[i + 1].flange_a);
  end for;
end Chain{n};
"""

PIPE = """model Pipe{n}
  replaceable package Medium = Modelica.Media.Water.StandardWater;
  inner Modelica.Fluid.System system(energyDynamics = Modelica.Fluid.Types.Dynamics.FixedInitial);
  Modelica.Blocks.Sources.Sine dp(amplitude = 0.5e5, f = 1, offset = 2e5);
  Modelica.Fluid.Sources.Boundary_pT source(redeclare package Medium = Medium, use_p_in = true,
    T = 330, nPorts = 1);
  Modelica.Fluid.Sources.Boundary_pT sink(redeclare package Medium = Medium, p = 1e5, T = 300,
    nPorts = 1);
  Modelica.Fluid.Pipes.DynamicPipe pipe(redeclare package Medium = Medium, nNodes = {n},
    length = 100, diameter = 0.1, p_a_start = 2e5, p_b_start = 1e5, T_start = 300);
equation
  connect(dp.y, source.p_in);
  connect(source.ports[1], pipe.port_a);
  connect(pipe.port_b, sink.ports[1]);
end Pipe{n};
"""

TEMPLATES = {
    "ladder": ("Ladder", LADDER),
    "chain": ("Chain", CHAIN),
    "pipe": ("Pipe", PIPE),
}


def run_measured(cmd, env, cwd, timeout):
    """Run `cmd`; return (exit code or None on timeout, seconds, peak RSS in bytes, output,
    CPU seconds of user and system time)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                log.seek(0)
                return None, timeout, 0, log.read(), 0.0
            time.sleep(0.01)
        seconds = time.perf_counter() - start
        log.seek(0)
        code = os.waitstatus_to_exitcode(status)
        cpu = usage.ru_utime + usage.ru_stime
        return code, seconds, usage.ru_maxrss * 1024, log.read(), cpu


def equations_of(check_output):
    m = re.search(r"(\d+) equations", check_output)
    return int(m.group(1)) if m else None


def stage_times(sim_output):
    m = re.search(
        r"translate ([\d.]+), init ([\d.]+), simulate ([\d.]+), write ([\d.]+)", sim_output
    )
    return tuple(float(x) for x in m.groups()) if m else None


def mb(nbytes):
    return f"{nbytes / 1e6:,.0f}"


def measure(kind, n, moss, env, workdir, timeout):
    name, template = TEMPLATES[kind]
    model = workdir / f"{name}{n}.mo"
    model.write_text(template.format(n=n))
    row = {"n": n}
    code, secs, rss, out, cpu = run_measured([moss, "check", str(model)], env, workdir, timeout)
    if code != 0:
        row["error"] = f"check: {'timeout' if code is None else out.strip().splitlines()[-1]}"
        return row
    row.update(eqs=equations_of(out), check_s=secs, check_cpu=cpu, check_rss=rss)
    code, secs, rss, out, cpu = run_measured(
        [moss, "translate", str(model)], env, workdir, timeout
    )
    if code != 0:
        row["error"] = f"translate: {'timeout' if code is None else 'failed'}"
        return row
    row.update(translate_s=secs, translate_cpu=cpu, translate_rss=rss)
    csv = workdir / f"{name}{n}.csv"
    cmd = [moss, "simulate", str(model), "--stop-time", "1", "--intervals", "1000"]
    cmd += ["-o", str(csv), "--stats"]
    code, secs, rss, out, cpu = run_measured(cmd, env, workdir, timeout)
    if code != 0:
        row["error"] = f"simulate: {'timeout' if code is None else 'failed'}"
        return row
    row.update(sim_s=secs, sim_cpu=cpu, sim_rss=rss, stages=stage_times(out), csv_bytes=csv.stat().st_size)
    csv.unlink()
    return row


def table(kind, rows):
    lines = [
        f"### {TEMPLATES[kind][0]}",
        "",
        "| N | equations | check s (CPU) | check MB | translate s (CPU) | translate MB | "
        "simulate s (CPU) | stages: translate / init / integrate / write | simulate MB | "
        "bytes/eq | CSV MB | ratio (CPU) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    prev = None
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['n']:,} | {r.get('eqs', '-')} | {r['error']} |||||||||")
            continue
        st = r["stages"] or (0, 0, 0, 0)
        ratio = f"{r['sim_cpu'] / prev:.1f}" if prev else "-"
        prev = r["sim_cpu"]
        lines.append(
            f"| {r['n']:,} | {r['eqs']:,} | {r['check_s']:.2f} ({r['check_cpu']:.2f}) | "
            f"{mb(r['check_rss'])} | {r['translate_s']:.2f} ({r['translate_cpu']:.2f}) | "
            f"{mb(r['translate_rss'])} | {r['sim_s']:.2f} ({r['sim_cpu']:.2f}) | "
            f"{st[0]:.2f} / {st[1]:.2f} / {st[2]:.2f} / {st[3]:.2f} | {mb(r['sim_rss'])} | "
            f"{r['sim_rss'] / r['eqs']:,.0f} | {mb(r['csv_bytes'])} | {ratio} |"
        )
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--msl", help="directory that contains Modelica/ (else MODELICAPATH)")
    src.add_argument("--bundled", action="store_true", help="use moss's bundled library")
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000, 100000])
    ap.add_argument("--models", nargs="+", default=["ladder", "chain"], choices=TEMPLATES)
    root = pathlib.Path(__file__).resolve().parent.parent
    ap.add_argument("--moss", default=str(root / "target" / "release" / "moss"))
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()

    env = dict(os.environ)
    if args.bundled:
        env.pop("MODELICAPATH", None)
        for kind in ("ladder", "pipe"):
            if kind in args.models:
                print(f"note: the bundled library has no MSL {kind} components; {kind} skipped")
                args.models = [m for m in args.models if m != kind]
    elif args.msl:
        env["MODELICAPATH"] = args.msl
    elif "MODELICAPATH" not in env:
        sys.exit("give --msl DIR, set MODELICAPATH, or use --bundled")
    library = "bundled library" if args.bundled else f"MSL at {env['MODELICAPATH']}"
    print(f"moss: {args.moss}; {library}")
    with tempfile.TemporaryDirectory(prefix="moss-scale-") as tmp:
        for kind in args.models:
            rows = []
            for n in args.sizes:
                rows.append(measure(kind, n, args.moss, env, pathlib.Path(tmp), args.timeout))
                print(f"  {kind} N={n}: done", file=sys.stderr, flush=True)
            print()
            print(table(kind, rows))


if __name__ == "__main__":
    main()
