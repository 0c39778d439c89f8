"""Type stubs of the Rust extension ``moss_modelica._moss``."""

from os import PathLike
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt

__version__: str
__all__ = ["__version__", "Model", "Result", "Variable", "load", "translation_count",
           "read_result", "_model_from_bytes", "_result_from_parts"]

_StrPath = Union[str, PathLike[str]]
_FloatArray = npt.NDArray[np.float64]

@final
class Variable:
    """One variable of a result or a model."""

    name: str
    unit: str
    description: str
    kind: str
    def __new__(cls, name: str, unit: str, description: str, kind: str) -> Variable: ...

@final
class Result:
    """The trajectories of one simulation, or of a result file."""

    @property
    def time(self) -> _FloatArray: ...
    def __getitem__(self, name: str, /) -> _FloatArray: ...
    def __contains__(self, name: str, /) -> bool: ...
    def __len__(self) -> int: ...
    @property
    def names(self) -> List[str]: ...
    @property
    def variables(self) -> List[Variable]: ...
    @property
    def stats(self) -> Dict[str, Union[int, float, str]]: ...
    @property
    def events(self) -> _FloatArray: ...
    @property
    def terminated(self) -> Optional[str]: ...
    @property
    def warnings(self) -> List[str]: ...
    @property
    def partial(self) -> bool: ...
    def final_values(self, names: Optional[Sequence[str]] = None) -> Dict[str, float]: ...
    def to_dict(self, names: Optional[Sequence[str]] = None) -> Dict[str, _FloatArray]: ...
    def to_pandas(self, names: Optional[Sequence[str]] = None) -> Any: ...
    def save(self, path: _StrPath) -> None: ...

@final
class Model:
    """A translated Modelica model, simulated any number of times."""

    @property
    def name(self) -> str: ...
    @property
    def warnings(self) -> List[str]: ...
    @property
    def experiment(self) -> Dict[str, Optional[float]]: ...
    @property
    def parameters(self) -> Dict[str, float]: ...
    @property
    def start_values(self) -> Dict[str, float]: ...
    def variables(self, protected: bool = False) -> List[Variable]: ...
    def simulate(
        self,
        start: Optional[float] = None,
        stop: Optional[float] = None,
        interval: Optional[float] = None,
        intervals: Optional[int] = None,
        tolerance: Optional[float] = None,
        solver: str = "auto",
        params: Optional[Dict[str, Union[float, bool]]] = None,
        start_values: Optional[Dict[str, Union[float, bool]]] = None,
        outputs: Union[None, str, Sequence[str]] = None,
        protected: bool = False,
        max_step: Optional[float] = None,
        jacobian: str = "auto",
    ) -> Result: ...
    def check(
        self,
        params: Optional[Dict[str, Union[float, bool]]] = None,
        start_values: Optional[Dict[str, Union[float, bool]]] = None,
    ) -> None: ...
    def retranslate(self, params: Optional[Dict[str, Union[float, bool, str]]] = None) -> Model: ...
    def _sweep(
        self,
        points: List[Dict[str, Union[float, bool]]],
        outputs: List[str],
        start: Optional[float] = None,
        stop: Optional[float] = None,
        interval: Optional[float] = None,
        intervals: Optional[int] = None,
        tolerance: Optional[float] = None,
        solver: str = "auto",
        max_step: Optional[float] = None,
        jacobian: str = "auto",
        threads: Optional[int] = None,
    ) -> Tuple[Dict[str, _FloatArray], List[Optional[str]]]: ...

def load(model: str, libs: Optional[Sequence[_StrPath]] = None, modelicapath: bool = True) -> Model: ...
def read_result(path: _StrPath) -> Result: ...
def translation_count() -> int: ...
def _model_from_bytes(data: bytes) -> Model: ...
def _result_from_parts(
    mat: bytes,
    stats: List[Tuple[str, str]],
    terminated: Optional[str],
    warnings: List[str],
    partial: bool,
) -> Result: ...
