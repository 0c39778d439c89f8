#!/usr/bin/env bash
# Coverage sweep over every example model of the MSL: simulate each one in a temporary
# directory, compare it with the Modelica Association reference result where there is one,
# and write docs/msl-coverage.md (summary per package, one row per example). The work is
# done by scripts/msl_coverage.py; this wrapper sets the defaults and runs it with `nice`.
#
# Usage: scripts/msl-coverage.sh /path/to/msl [moss-binary] [-- more options]
#   /path/to/msl   the directory that contains Modelica/ (it is put on MODELICAPATH)
#   moss-binary    default target/release/moss
#   REFS           MAP-LIB reference results (the folder that contains Modelica/); without it
#                  every example counts as "no reference"
#   EARLIER_REFS   earlier references for CSVs missing from REFS (written by
#                  scripts/earlier_references.py from a MAP-LIB git directory)
#   TIMEOUT        seconds per model (default 120)
#   OUTPUT         the report (default docs/msl-coverage.md)
#   more options   passed on, e.g. `--only 'Rotational'`, `--resume`, `--report-only`, `--list`
#                  (scripts/msl_coverage.py --help lists them)
# The whole MSL takes hours on two cores; progress goes to stdout and to a state file, so an
# interrupted run continues with `-- --resume`.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
MSL=${1:?usage: msl-coverage.sh /path/to/msl [moss-binary] [-- options]}
shift
MOSS=$here/../target/release/moss
if [ $# -gt 0 ] && [ "$1" != "--" ]; then MOSS=$1; shift; fi
[ "${1:-}" = "--" ] && shift
[ -x "$MOSS" ] || { echo "no moss binary at $MOSS (cargo build --release -p moss-cli)" >&2; exit 2; }
refs=()
[ -n "${REFS:-}" ] && refs=(--refs "$REFS")
[ -n "${EARLIER_REFS:-}" ] && refs+=(--earlier-refs "$EARLIER_REFS")
exec nice python3 "$here/msl_coverage.py" "$MSL" "$MOSS" "${refs[@]}" \
  --timeout "${TIMEOUT:-120}" --output "${OUTPUT:-$here/../docs/msl-coverage.md}" "$@"
