#!/usr/bin/env bash
# Check every example model of a few MSL packages with `moss check` and print a table:
# model, status, equations, variables, time. (For every example of the whole MSL, compared
# with the reference results, see scripts/msl-coverage.sh.)
#
# Usage: scripts/msl-sweep.sh [--stages] /path/to/msl [moss-binary]
#   /path/to/msl is the directory that contains Modelica/ (it is put on MODELICAPATH).
#   Every moss run happens in a temporary directory, so files that models write themselves
#   (writeRealMatrix, ...) do not land in the current directory.
#   --stages: also run `moss translate` and `moss simulate` on every model that checks, and
#   add their status columns (ok/FAIL/-); with VERBOSE=1 the first error line of a failing
#   stage is printed below the row. TIMEOUT (seconds, default 300) limits each
#   translate/simulate run.
set -u
STAGES=
if [ "${1:-}" = "--stages" ]; then STAGES=1; shift; fi
MSL=${1:?usage: msl-sweep.sh [--stages] /path/to/msl [moss-binary]}
MOSS=${2:-$(dirname "$0")/../target/release/moss}
[ -x "$MOSS" ] || MOSS=$(dirname "$0")/../target/debug/moss
MOSS=$(cd "$(dirname "$MOSS")" && pwd)/$(basename "$MOSS")
TIMEOUT=${TIMEOUT:-300}
MSL=$(cd "$MSL" && pwd)  # absolute: moss runs in another directory
export MODELICAPATH="$MSL"
PACKAGES="Modelica.Mechanics.Rotational.Examples Modelica.Mechanics.Translational.Examples Modelica.Blocks.Examples Modelica.Thermal.HeatTransfer.Examples Modelica.Electrical.Analog.Examples"

# Models defined directly in package $2 inside file $1 (a package written in its parent's
# package.mo): `model X` lines one indentation level below `package NAME`.
list_nested() {
  local file=$1 name=$2 pkg=$3
  awk -v name="$name" -v pkg="$pkg" '
    !inside && match($0, "^ *package +" name "([ \"]|$)") { inside = 1; ind = index($0, "package") - 1; next }
    inside && match($0, "^ *end +" name " *;") && index($0, "end") - 1 == ind { exit }
    inside && match($0, "^ *(encapsulated +)?(model|block|class) +[A-Za-z0-9_]+") {
      lead = match($0, /[^ ]/) - 1
      if (lead == ind + 2) { n = split($0, w, /[ "]+/); for (i = 1; i <= n; i++) if (w[i] ~ /^(model|block|class)$/) { print pkg "." w[i + 1]; break } }
    }' "$file"
}

# List the models of a package directory: entries of package.order that are not packages.
list_models() {
  local pkg=$1 dir parent
  dir="$MSL/$(echo "$pkg" | tr . /)"
  if [ ! -d "$dir" ]; then
    parent=$(dirname "$dir")
    [ -f "$parent/package.mo" ] && list_nested "$parent/package.mo" "$(basename "$dir")" "$pkg"
    return
  fi
  [ -f "$dir/package.order" ] || return
  while read -r name; do
    name=${name%$'\r'}
    [ -z "$name" ] && continue
    if [ -d "$dir/$name" ]; then
      list_models "$pkg.$name"
    elif [ -f "$dir/$name.mo" ]; then
      if grep -qE "^(partial +)?(model|block|class) +$name\b" "$dir/$name.mo" &&
         ! grep -qE "^partial " "$dir/$name.mo"; then
        echo "$pkg.$name"
      elif grep -qE "^(encapsulated +)?package +$name\b" "$dir/$name.mo"; then
        :
      fi
    fi
  done < "$dir/package.order"
}

# Run one later stage (translate or simulate) of a model: sets $stage_status to ok or FAIL
# and, on failure, $stage_error to the first error line.
run_stage() {
  local cmd=$1 m=$2 out rc
  out=$(cd "$WORK" && timeout "$TIMEOUT" "$MOSS" "$cmd" "$m" 2>&1)
  rc=$?
  stage_status=ok
  stage_error=
  if [ $rc -ne 0 ]; then
    stage_status=FAIL
    stage_error=$(echo "$out" | grep -m1 -E "^error" || echo "$out" | tail -1)
    [ $rc -eq 124 ] && stage_error="timeout after ${TIMEOUT}s"
  fi
}

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ -n "$STAGES" ]; then
  printf "%-75s %-6s %6s %6s %7s %-9s %-8s\n" model status eqs vars time translate simulate
else
  printf "%-75s %-6s %6s %6s %7s\n" model status eqs vars time
fi
ok=0; total=0; translated=0; simulated=0
for p in $PACKAGES; do
  for m in $(list_models "$p"); do
    total=$((total + 1))
    start=$(date +%s.%N)
    out=$(cd "$WORK" && "$MOSS" check "$m" 2>&1)
    rc=$?
    end=$(date +%s.%N)
    t=$(echo "$end - $start" | bc)
    if [ $rc -eq 0 ]; then
      eqs=$(echo "$out" | sed -n 's/^ *\([0-9]*\) equations, \([0-9]*\) variables.*/\1/p')
      vars=$(echo "$out" | sed -n 's/^ *\([0-9]*\) equations, \([0-9]*\) variables.*/\2/p')
      status=ok
      [ "$eqs" != "$vars" ] && status=unbal
      [ "$status" = ok ] && ok=$((ok + 1))
    else
      eqs=-; vars=-; status=FAIL
    fi
    if [ -z "$STAGES" ]; then
      printf "%-75s %-6s %6s %6s %7.3f\n" "$m" "$status" "$eqs" "$vars" "$t"
      if [ $rc -ne 0 ] && [ -n "${VERBOSE:-}" ]; then echo "$out" | head -5 | sed 's/^/    /'; fi
      continue
    fi
    tr=-; sim=-; errors=()
    if [ $rc -eq 0 ]; then
      run_stage translate "$m"; tr=$stage_status
      [ -n "$stage_error" ] && errors+=("translate: $stage_error")
      if [ "$tr" = ok ]; then
        translated=$((translated + 1))
        run_stage simulate "$m"; sim=$stage_status
        [ -n "$stage_error" ] && errors+=("simulate: $stage_error")
        [ "$sim" = ok ] && simulated=$((simulated + 1))
      fi
    fi
    printf "%-75s %-6s %6s %6s %7.3f %-9s %-8s\n" "$m" "$status" "$eqs" "$vars" "$t" "$tr" "$sim"
    if [ -n "${VERBOSE:-}" ]; then
      [ $rc -ne 0 ] && echo "$out" | head -5 | sed 's/^/    /'
      for e in "${errors[@]}"; do echo "    $e"; done
    fi
  done
done
echo "balanced and ok: $ok / $total"
if [ -n "$STAGES" ]; then
  echo "translated: $translated / $total"
  echo "simulated: $simulated / $total"
fi
