#!/usr/bin/env bash
# Build the Python package (crates/python) as a wheel in a virtual environment, install it
# there, check its type stubs (mypy stubtest) and run its pytest tests: what CI does after
# `cargo test --workspace`, and the second half of the README's test command.
#
# The wheel is built with the dev profile (opt-level 2 for dependencies, 1 for moss): a
# release build of the extension takes minutes on 2 cores and the tests run small models.
# The venv and the wheel live in the cargo target directory, so a clean clone needs nothing
# else and `git status` stays clean.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
venv="$target/python-venv"
wheels="$target/python-wheels"

python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet maturin pytest numpy pandas "dask[distributed]" mypy

# The tests compare with the CLI's result file. `cargo test --workspace` has built it; the
# same feature set (the whole workspace) reuses its artifacts instead of rebuilding.
cargo build --quiet --workspace --bins

rm -rf "$wheels"
"$venv/bin/maturin" build --quiet --profile dev -m crates/python/Cargo.toml \
    -i "$venv/bin/python" -o "$wheels"
"$venv/bin/python" -m pip install --quiet --force-reinstall "$wheels"/moss_modelica-*.whl

# The type stubs match the extension, and the Python part type-checks against them.
"$venv/bin/python" -m mypy.stubtest moss_modelica._moss
"$venv/bin/python" -m mypy --ignore-missing-imports crates/python/python/moss_modelica

MOSS_BIN="$target/debug/moss" "$venv/bin/python" -m pytest -q crates/python/tests

# The coverage sweep's reference lookup (scripts/, standard library only).
"$venv/bin/python" -m pytest -q scripts/tests
