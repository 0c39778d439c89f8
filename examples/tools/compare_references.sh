#!/bin/sh
# Simulate every model that has a reference result and compare it with the tube method.
#
# Usage: examples/tools/compare_references.sh REFERENCE_DIR [MOSS] [OUT_DIR]
#   REFERENCE_DIR  folders named after the models, each with <Short>.csv and comparisonSignals.txt
#                  (the layout of the MAP-LIB reference results)
#   MOSS           the moss binary (default: target/debug/moss)
#   OUT_DIR        where results are written (default: a temporary directory)
# Prints one line per model and exits non-zero if any model fails. Each model runs in its own
# folder OUT_DIR/<Model>.run, so files a model writes itself (writeRealMatrix, ...) land there
# and not in the current directory.
set -u
refs=${1:?usage: compare_references.sh REFERENCE_DIR [MOSS] [OUT_DIR]}
moss=${2:-target/debug/moss}
out=${3:-$(mktemp -d)}
mkdir -p "$out"
# Absolute paths: the simulations run in other directories.
refs=$(cd "$refs" && pwd)
out=$(cd "$out" && pwd)
case $moss in
    */*) moss=$(cd "$(dirname "$moss")" && pwd)/$(basename "$moss") ;;
esac
failed=0
for dir in "$refs"/*/; do
    model=$(basename "$dir")
    short=${model##*.}
    [ -f "$dir/$short.csv" ] || continue
    mkdir -p "$out/$model.run"
    if ! (cd "$out/$model.run" && "$moss" simulate "$model" -o "$out/$model.csv") >"$out/$model.log" 2>&1; then
        echo "$model: simulation failed ($(tail -n 1 "$out/$model.log"))"
        failed=1
        continue
    fi
    if verdict=$("$moss" compare "$out/$model.csv" "$dir/$short.csv" --signals "$dir/comparisonSignals.txt" 2>&1); then
        echo "$model: $(echo "$verdict" | tail -n 1)"
    else
        echo "$model: $(echo "$verdict" | tail -n 1)"
        failed=1
    fi
done
exit $failed
