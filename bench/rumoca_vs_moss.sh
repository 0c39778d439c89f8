#!/usr/bin/env bash
# moss and Rumoca side by side (see docs/bench-rumoca.md).
#
#   bench/rumoca_vs_moss.sh [--repeat N] [--sizes 10 100 1000] [--json FILE]
#
# Installs Rumoca from PyPI into a virtual environment ($RUMOCA_VENV, default
# target/rumoca-venv) unless it is there already, builds the release moss binary, and runs
# bench/rumoca_vs_moss.py, which prints the tables as Markdown. Needs python3 with venv.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RUMOCA_VENV:-$root/target/rumoca-venv}"

if ! "$venv/bin/python" -c 'import rumoca' 2>/dev/null; then
    echo "installing rumoca into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet rumoca
fi

(cd "$root" && cargo build --release -p moss-cli >&2)

exec python3 "$root/bench/rumoca_vs_moss.py" \
    --moss "$root/target/release/moss" \
    --rumoca-python "$venv/bin/python" "$@"
