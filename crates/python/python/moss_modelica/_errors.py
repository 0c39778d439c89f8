"""The exceptions of moss_modelica.

Every error moss reports is a :class:`MossError`. Errors found in Modelica source carry
moss's diagnostics: ``err.diagnostics`` lists them (file, line, column, message, help), and
``err.file``, ``err.line``, ``err.column`` are those of the first one that has a location.
``str(err)`` is the diagnostic as the ``moss`` command prints it, source excerpt included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

__all__ = [
    "Diagnostic",
    "MossError",
    "TranslationError",
    "ModelicaSyntaxError",
    "ClassNotFoundError",
    "ParameterError",
    "StructuralParameterError",
    "OptionsError",
    "SimulationError",
    "ResultFileError",
]


@dataclass(frozen=True)
class Diagnostic:
    """One message of moss about the model, located in the source when possible."""

    severity: str
    message: str
    file: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None
    help: Optional[str] = None
    rendered: str = ""

    def __str__(self) -> str:
        return self.rendered or self.message


class MossError(Exception):
    """Base class of every error raised by moss_modelica."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.diagnostics = list(diagnostics)

    def _located(self) -> Optional[Diagnostic]:
        return next((d for d in self.diagnostics if d.file is not None), None)

    @property
    def file(self) -> Optional[str]:
        """File of the first located diagnostic."""
        d = self._located()
        return d.file if d else None

    @property
    def line(self) -> Optional[int]:
        """1-based line of the first located diagnostic."""
        d = self._located()
        return d.line if d else None

    @property
    def column(self) -> Optional[int]:
        """1-based column of the first located diagnostic."""
        d = self._located()
        return d.column if d else None

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> Any:
        # Exceptions pickle their args by default; keep the diagnostics too (Dask ships
        # errors from workers to the client).
        return (_rebuild, (type(self), self.message, self.diagnostics, self.__dict__))


def _rebuild(cls: "type[MossError]", message: str, diagnostics: list, state: dict) -> MossError:
    err = cls.__new__(cls)
    MossError.__init__(err, message, diagnostics)
    err.__dict__.update(state)
    return err


class TranslationError(MossError):
    """The model could not be loaded, flattened or translated."""


class ModelicaSyntaxError(TranslationError):
    """A Modelica file read on the way has syntax errors."""


class ClassNotFoundError(TranslationError, LookupError):
    """The class named is not on the library path (``libs``, ``MODELICAPATH``, bundled)."""


class ParameterError(MossError, ValueError):
    """A parameter or start value cannot be set (unknown name, not a parameter, ...)."""

    def __init__(self, message: str, name: str = "") -> None:
        super().__init__(message)
        self.name = name


class StructuralParameterError(ParameterError):
    """The parameter was used by the translation (array sizes, ``Evaluate=true``, ...):
    changing it needs another translation (``Model.retranslate``)."""


class OptionsError(MossError, ValueError):
    """Invalid simulation options (times, tolerance, solver, output filter)."""


class SimulationError(MossError):
    """The simulation failed. ``time`` is where, when known; ``partial`` the
    :class:`~moss_modelica.Result` up to the failure, when there is one."""

    def __init__(
        self, message: str, time: Optional[float] = None, partial: Any = None
    ) -> None:
        super().__init__(message)
        self.time = time
        self.partial = partial


class ResultFileError(MossError, OSError):
    """A result file could not be read or written."""
