#!/usr/bin/env python3
"""Translation time of a generated MultiBody chain (issue #13): N revolute joints and N
`BodyShape`s of the real MSL in series from the `world`, for N = 10, 100, 1000 by default.

Runs `moss translate` once per size (one process each), and reports wall-clock time, the
CPU time of the process, its peak memory, moss's own `total` pass time, the number of
scalar unknowns (slots), and the ratio of the time to the previous size's.

    python3 bench/multibody_chain.py --moss target/release/moss --msl /path/to/msl
"""
import argparse
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def chain_model(n: int) -> str:
    return f"""model Chain{n}
  inner Modelica.Mechanics.MultiBody.World world;
  Modelica.Mechanics.MultiBody.Joints.Revolute rev[{n}](each n = {{0, 0, 1}});
  Modelica.Mechanics.MultiBody.Parts.BodyShape body[{n}](each r = {{{0.5 / n}, 0, 0}}, each m = {1.0 / n});
equation
  connect(world.frame_b, rev[1].frame_a);
  for i in 1:{n} loop
    connect(rev[i].frame_b, body[i].frame_a);
  end for;
  for i in 1:{n - 1} loop
    connect(body[i].frame_b, rev[i + 1].frame_a);
  end for;
end Chain{n};
"""


def run(moss: str, msl: str, n: int, tmp: Path) -> dict:
    path = tmp / f"Chain{n}.mo"
    path.write_text(chain_model(n))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "MAXRSS %M", moss, "translate", str(path), "--lib", msl],
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.exit(f"N = {n}: moss translate failed:\n{proc.stdout}\n{proc.stderr}")
    rss = re.search(r"MAXRSS (\d+)", proc.stderr)
    total = re.search(r"^\s*total\s+([0-9.]+) s", proc.stdout, re.M)
    slots = re.search(r"^\s*(\d+) slots", proc.stdout, re.M)
    states = re.search(r"^states \((\d+)\)", proc.stdout, re.M)
    return {
        "n": n,
        "wall": wall,
        "cpu": cpu,
        "mb": int(rss.group(1)) / 1024 if rss else float("nan"),
        "total": float(total.group(1)) if total else float("nan"),
        "slots": int(slots.group(1)) if slots else 0,
        "states": int(states.group(1)) if states else 0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moss", default="target/release/moss")
    ap.add_argument("--msl", required=True, help="directory that contains Modelica/")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    args = ap.parse_args()
    print("| N | slots | states | translate s (CPU) | moss total s | peak MB | ratio (CPU) |")
    print("|---|---|---|---|---|---|---|")
    prev = None
    with tempfile.TemporaryDirectory(prefix="moss-mbchain-") as tmp:
        for n in args.sizes:
            r = run(args.moss, args.msl, n, Path(tmp))
            ratio = f"{r['cpu'] / prev:.1f}" if prev else "-"
            prev = r["cpu"]
            print(
                f"| {n:,} | {r['slots']:,} | {r['states']:,} | {r['wall']:.2f} ({r['cpu']:.2f}) "
                f"| {r['total']:.2f} | {r['mb']:.0f} | {ratio} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
