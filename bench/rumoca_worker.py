#!/usr/bin/env python3
"""Time Rumoca on one model in a fresh process and print the figures as one JSON object.

Run by bench/rumoca_vs_moss.py with a Python that has `rumoca` installed:

    rumoca_worker.py FILE MODEL STOP VARIABLE PAIRS SOLVER [SOLVER ...]

Each call is a fresh process. Before anything is timed, the worker compiles and simulates
a one-state model with every solver, so that one-time costs inside Rumoca (lazy tables,
first allocations, page faults of the first calls) do not count against it: the figures are
warm, while moss is timed cold in a fresh process. Python's own start-up and
`import rumoca` are outside the timed regions too.

Printed figures (seconds):
  load      Session().load(FILE): parse, flatten, DAE (what Rumoca calls compiling)
  total     Model.simulate(...) over [0, STOP]: DAE-to-solve lowering, initialization,
            integration, results gathered into the Result object (PAIRS figures)
  setup     the same call over [0, STOP * 1e-6]: lowering and initialization with almost no
            integration, to tell how much of `total` is not integration (PAIRS figures,
            each measured right after the matching `total`)
  final     the last value of VARIABLE, for comparing trajectories with moss
"""

import json
import sys
import time

import rumoca


def timed(fn):
    """(seconds, value) of calling fn once."""
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


WARM_UP_MODEL = """
model WarmUp
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
end WarmUp;
"""


def warm_up(solvers):
    """Compile and simulate a trivial model once per solver, untimed."""
    model = rumoca.Session().loads(WARM_UP_MODEL, model="WarmUp")
    for solver in solvers:
        try:
            model.simulate(t=(0.0, 1.0), dt=0.01, config=rumoca.SimConfig(solver=solver))
        except rumoca.RumocaError:
            pass  # a solver that fails here is reported on the real model


def simulate_figures(model, stop, variable, solver, pairs):
    """Time full runs and near-zero-length runs of one solver, alternately, `pairs` times.

    Rumoca lowers the DAE to its solve model inside every simulate call, and the Python API
    has no call that does only that, so the integration alone is estimated as the median
    over the pairs of (full run - short run); pairing adjacent runs cancels most of the
    drift of a shared machine.
    """
    interval = stop / 500
    config = rumoca.SimConfig(solver=solver, rtol=1e-6, atol=1e-6)
    short_span = stop * 1e-6
    totals, setups = [], []
    for _ in range(pairs):
        total, result = timed(lambda: model.simulate(t=(0.0, stop), dt=interval, config=config))
        setup, _ = timed(
            lambda: model.simulate(t=(0.0, short_span), dt=short_span, config=config)
        )
        totals.append(total)
        setups.append(setup)
    return {
        "total": totals,
        "setup": setups,
        "final": float(result[variable][-1]),
        "final_time": float(result.time[-1]),
        "points": len(result),
    }


def main(argv):
    if len(argv) < 7:
        sys.stderr.write(__doc__)
        return 2
    path, name, stop, variable = argv[1], argv[2], float(argv[3]), argv[4]
    pairs = int(argv[5])
    solvers = argv[6:]
    warm_up(solvers)
    load, model = timed(lambda: rumoca.Session().load(path, model=name))
    figures = {
        "version": rumoca.version(),
        "load": load,
        "states": len(model.states),
        "algebraic": len(model.algebraics),
        "sims": {},
    }
    for solver in solvers:
        try:
            figures["sims"][solver] = simulate_figures(model, stop, variable, solver, pairs)
        except rumoca.RumocaError as error:
            figures["sims"][solver] = {"error": str(error)}
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
