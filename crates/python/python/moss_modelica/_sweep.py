"""Parameter sweeps: many runs of one translated model, on Rust threads or a Dask cluster.

Locally, :meth:`Model._sweep` runs the points on a pool of Rust threads with the GIL
released. On Dask, the model is pickled once (as its translated program) and scattered to
every worker, where it is unpickled once and kept; the tasks are batches of points, each
run by the same Rust engine on the worker. Both give the same table: one row per point, in
the order of the points.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

Point = Dict[str, float]
Columns = Dict[str, np.ndarray]


def grid(axes: Optional[Mapping[str, Iterable[float]]] = None, **more: Iterable[float]) -> List[Point]:
    """Every combination of the values of ``axes`` (a dict or keyword arguments), as a list
    of dicts; the first name varies slowest.

    >>> grid({"c": [1, 2], "d": [0.1, 0.2]})
    [{'c': 1, 'd': 0.1}, {'c': 1, 'd': 0.2}, {'c': 2, 'd': 0.1}, {'c': 2, 'd': 0.2}]
    """
    axes = {**(axes or {}), **more}
    names = list(axes)
    values = [list(axes[n]) for n in names]
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def _points(params: Union[Mapping[str, Iterable[float]], Sequence[Mapping[str, float]]]) -> List[Point]:
    if isinstance(params, Mapping):
        return grid(params)
    points = [dict(p) for p in params]
    if not all(isinstance(p, dict) for p in points):
        raise TypeError("params must be a dict of value lists (a grid) or a list of dicts")
    return points


def _run_batch(batch: List[Point], model: Any, outputs: List[str], options: Dict[str, Any]) -> Tuple[Columns, List[Optional[str]]]:
    """One Dask task: a batch of points on the worker's copy of the model."""
    return model._sweep(batch, outputs, **options)


def _on_dask(client: Any, model: Any, points: List[Point], outputs: List[str],
             batch_size: Optional[int], options: Dict[str, Any]) -> Tuple[Columns, List[Optional[str]]]:
    # One copy of the translated program per worker, deserialized once and kept there.
    shipped = client.scatter(model, broadcast=True)
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    if batch_size is None:
        # A few batches per worker, so that a worker with cheap points takes more of them.
        batch_size = max(1, math.ceil(len(points) / (4 * workers)))
    batches = [points[i:i + batch_size] for i in range(0, len(points), batch_size)]
    options = {"threads": 1, **options}
    futures = client.map(_run_batch, batches, model=shipped, outputs=outputs,
                         options=options, pure=False)
    parts = client.gather(futures)
    columns = {name: np.concatenate([cols[name] for cols, _ in parts]) for name in outputs}
    errors = [e for _, errs in parts for e in errs]
    return columns, errors


def _table(points: List[Point], outputs: List[str], columns: Columns,
           errors: List[Optional[str]], as_frame: bool) -> Any:
    names: List[str] = []
    for p in points:
        names.extend(n for n in p if n not in names)
    table: Dict[str, Any] = {
        n: np.array([p.get(n, np.nan) for p in points], dtype=float) for n in names
    }
    for name in outputs:
        # an output that is also swept (a parameter) keeps both columns
        table[name if name not in table else f"{name} (final)"] = columns[name]
    table["error"] = np.array(errors, dtype=object)
    if not as_frame:
        return table
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("sweep(..., as_frame=True) needs pandas: pip install pandas "
                          "(or moss-modelica[pandas]), or pass as_frame=False") from e
    return pd.DataFrame(table)


def sweep(model: Any, params: Union[Mapping[str, Iterable[float]], Sequence[Mapping[str, float]]],
          outputs: Sequence[str], *, client: Any = None, threads: Optional[int] = None,
          batch_size: Optional[int] = None, as_frame: bool = True, **options: Any) -> Any:
    """Simulate ``model`` once per point and tabulate the final values of ``outputs``.

    ``params`` is a grid (a dict from names to value lists: every combination is run) or a
    list of dicts (one per run). A name may be a parameter or a variable whose start value
    the model lets you set (``Model.start_values``). ``options`` are those of
    :meth:`Model.simulate` (``start``, ``stop``, ``interval``/``intervals``,
    ``tolerance``, ``solver``, ``max_step``, ``jacobian``).

    Without ``client`` the runs use ``threads`` Rust threads (default: one per core). With a
    ``dask.distributed.Client`` they run on its cluster in batches of ``batch_size`` points;
    the model is shipped once to each worker.

    Returns a pandas DataFrame (a dict of NumPy arrays with ``as_frame=False``) with one row
    per point, in order: a column per swept name, a column per output with its value at the
    stop time, and ``error``: ``None``, or the message of a run that failed (its outputs are
    NaN). Bad names raise before any run.
    """
    points = _points(params)
    outputs = list(outputs)
    if isinstance(model, (str, bytes)):
        raise TypeError("sweep needs a translated model: pass moss_modelica.load(...)")
    if client is None:
        columns, errors = model._sweep(points, outputs, threads=threads, **options)
    else:
        # Check names and options here, where the error is raised to the caller directly.
        if points:
            model._sweep(points[:0], outputs, **options)
            model.check(params={k: v for k, v in points[0].items() if k not in model.start_values},
                        start_values={k: v for k, v in points[0].items() if k in model.start_values})
        columns, errors = _on_dask(client, model, points, outputs, batch_size, options)
    return _table(points, outputs, columns, errors, as_frame)
