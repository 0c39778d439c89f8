#!/usr/bin/env bash
# Check every example model of a few MSL packages with `moss check` and print a table:
# model, status, equations, variables, time.
#
# Usage: scripts/msl-sweep.sh /path/to/msl [moss-binary]
#   /path/to/msl is the directory that contains Modelica/ (it is put on MODELICAPATH).
set -u
MSL=${1:?usage: msl-sweep.sh /path/to/msl [moss-binary]}
MOSS=${2:-$(dirname "$0")/../target/release/moss}
[ -x "$MOSS" ] || MOSS=$(dirname "$0")/../target/debug/moss
export MODELICAPATH="$MSL"
PACKAGES="Modelica.Mechanics.Rotational.Examples Modelica.Mechanics.Translational.Examples Modelica.Blocks.Examples Modelica.Thermal.HeatTransfer.Examples Modelica.Electrical.Analog.Examples"

# List the models of a package directory: entries of package.order that are not packages.
list_models() {
  local pkg=$1 dir
  dir="$MSL/$(echo "$pkg" | tr . /)"
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

printf "%-75s %-6s %6s %6s %7s\n" model status eqs vars time
ok=0; total=0
for p in $PACKAGES; do
  for m in $(list_models "$p"); do
    total=$((total + 1))
    start=$(date +%s.%N)
    out=$("$MOSS" check "$m" 2>&1)
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
    printf "%-75s %-6s %6s %6s %7.3f\n" "$m" "$status" "$eqs" "$vars" "$t"
    if [ $rc -ne 0 ] && [ -n "${VERBOSE:-}" ]; then echo "$out" | head -5 | sed 's/^/    /'; fi
  done
done
echo "balanced and ok: $ok / $total"
