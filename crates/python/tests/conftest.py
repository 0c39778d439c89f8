"""Shared fixtures of the moss_modelica tests (run with pytest after installing the wheel)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import moss_modelica as mm

MODELS = Path(__file__).parent / "models"
REPO = Path(__file__).resolve().parents[3]
COUPLED_CLUTCHES = "Modelica.Mechanics.Rotational.Examples.CoupledClutches"


def model_file(name: str) -> str:
    return str(MODELS / name)


def moss_binary() -> str:
    """The `moss` CLI to compare with: $MOSS_BIN, else the workspace's debug build."""
    candidates = [os.environ.get("MOSS_BIN")]
    target = os.environ.get("CARGO_TARGET_DIR")
    if target:
        candidates.append(str(Path(target) / "debug" / "moss"))
    candidates += [str(REPO / "target" / "debug" / "moss"), shutil.which("moss")]
    for c in candidates:
        if c and Path(c).is_file():
            return c
    pytest.fail("no moss binary: run `cargo build -p moss-cli` or set MOSS_BIN")


@pytest.fixture(scope="session")
def oscillator() -> mm.Model:
    return mm.load(model_file("Oscillator.mo"))


@pytest.fixture(scope="session")
def clutches() -> mm.Model:
    return mm.load(COUPLED_CLUTCHES)


@pytest.fixture(scope="session")
def clutches_cli_result(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "CoupledClutches_res.mat"
    subprocess.run([moss_binary(), "simulate", COUPLED_CLUTCHES, "-o", str(out)],
                   check=True, capture_output=True)
    return out
