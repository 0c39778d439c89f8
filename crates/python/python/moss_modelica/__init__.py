"""moss_modelica: Modelica models translated and simulated by moss, from Python.

>>> import moss_modelica as mm
>>> model = mm.load("Modelica.Mechanics.Rotational.Examples.CoupledClutches")
>>> result = model.simulate(stop=1.5, params={"J1.J": 2.0})
>>> result["J1.w"]            # NumPy array, one value per output point
>>> table = mm.sweep(model, {"J1.J": [1, 2, 3], "freqHz": [0.1, 0.2]}, outputs=["J1.w"])

- :func:`load` translates a model (class name or ``.mo`` file; ``libs``, ``MODELICAPATH``).
- :meth:`Model.simulate` runs it; parameters and start values change without translating.
- :class:`Result` holds NumPy arrays, the variable table, run statistics and events.
- :func:`read_result` reads ``.mat`` and ``.csv`` files that moss (or another tool) wrote.
- :func:`sweep` runs a parameter grid on Rust threads or on a Dask cluster.
- Errors are :class:`MossError` subclasses carrying moss's located diagnostics.
"""

from ._errors import (
    ClassNotFoundError,
    Diagnostic,
    ModelicaSyntaxError,
    MossError,
    OptionsError,
    ParameterError,
    ResultFileError,
    SimulationError,
    StructuralParameterError,
    TranslationError,
)
from ._moss import (
    Model,
    Result,
    Variable,
    __version__,
    load,
    read_result,
    translation_count,
)
from ._sweep import grid, sweep

__all__ = [
    "ClassNotFoundError",
    "Diagnostic",
    "Model",
    "ModelicaSyntaxError",
    "MossError",
    "OptionsError",
    "ParameterError",
    "Result",
    "ResultFileError",
    "SimulationError",
    "StructuralParameterError",
    "TranslationError",
    "Variable",
    "__version__",
    "grid",
    "load",
    "read_result",
    "sweep",
    "translation_count",
]
