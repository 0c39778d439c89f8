#!/usr/bin/env bash
# Run `moss check` on every test model of the Modelica compliance suite and compare the
# outcome with the model's `shouldPass` annotation. Prints failures (with VERBOSE=1 the
# first diagnostic line) and the pass rate per chapter.
#
# With MODE=simulate the verdict is end to end: each test runs `moss simulate` (the model's
# experiment annotation or the default stop time), so a test that should pass must simulate
# and one that should fail must be rejected (by the check or by the simulation).
#
# Usage: [MODE=check|simulate] [VERBOSE=1] scripts/compliance-sweep.sh /path/to/ModelicaCompliance [moss-binary]
set -u
SUITE=${1:?usage: compliance-sweep.sh /path/to/ModelicaCompliance [moss-binary]}
SUITE=${SUITE%/}
MOSS=${2:-$(dirname "$0")/../target/release/moss}
[ -x "$MOSS" ] || MOSS=$(dirname "$0")/../target/debug/moss
ROOT=$(dirname "$SUITE")
MODE=${MODE:-check}
case "$MODE" in
  check | simulate) ;;
  *) echo "MODE must be check or simulate, not $MODE" >&2; exit 2 ;;
esac
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
declare -A pass total
while IFS= read -r file; do
  expect=$(grep -o "shouldPass *= *\(true\|false\)" "$file" | head -1 | sed 's/.*= *//')
  [ -z "$expect" ] && continue
  # A file may start with a UTF-8 byte-order mark (Packages/BOM.mo): strip it first.
  within=$(sed -n '1s/^\xEF\xBB\xBF//; s/^ *within *\([^;]*\);.*/\1/p' "$file" | head -1)
  name=$(basename "$file" .mo)
  model="$within.$name"
  # A test package (`extends Icons.TestPackage`) holds the test model as a nested class:
  # the class declared last before the `shouldPass` annotation (QuotedIdentifiers).
  if grep -q "extends *Icons.TestPackage" "$file"; then
    inner=$(sed -n '/shouldPass/q; s/^ *\(model\|block\|class\) *\([^ ]*\).*/\2/p' "$file" | tail -1)
    [ -n "$inner" ] && model="$model.$inner"
  fi
  rel=${file#"$SUITE"/}
  chapter=${rel%%/*}
  if [ "$MODE" = simulate ]; then
    out=$(timeout 60 "$MOSS" simulate --lib "$ROOT" "$model" -o "$OUT/result.csv" 2>&1)
  else
    out=$(timeout 20 "$MOSS" check --lib "$ROOT" "$model" 2>&1)
  fi
  rc=$?
  if [ $rc -eq 0 ]; then got=true; else got=false; fi
  total[$chapter]=$(( ${total[$chapter]:-0} + 1 ))
  if [ "$got" = "$expect" ]; then
    pass[$chapter]=$(( ${pass[$chapter]:-0} + 1 ))
  else
    echo "MISMATCH $model (expected shouldPass=$expect, exit $rc)"
    if [ -n "${VERBOSE:-}" ]; then echo "$out" | grep -m1 -E "^(error|thread)" | sed 's/^/    /'; fi
  fi
done < <(find "$SUITE" -name '*.mo' ! -name package.mo | sort)
echo
printf "%-16s %6s %6s %7s\n" chapter pass total rate
all_p=0; all_t=0
for c in $(printf "%s\n" "${!total[@]}" | sort); do
  p=${pass[$c]:-0}; t=${total[$c]}
  all_p=$((all_p + p)); all_t=$((all_t + t))
  printf "%-16s %6d %6d %6.1f%%\n" "$c" "$p" "$t" "$(echo "100*$p/$t" | bc -l)"
done
printf "%-16s %6d %6d %6.1f%%\n" total "$all_p" "$all_t" "$(echo "100*$all_p/$all_t" | bc -l)"
