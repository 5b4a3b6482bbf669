#!/usr/bin/env bash
# Runs every check of `make test` in order, keeps going after a failure so that one run shows
# everything that is wrong, and ends with a summary. Exits non-zero if any check failed.
# Usage: scripts/run-checks.sh "name::command" ...
set -uo pipefail
names=(); results=(); times=()
failed=0
for spec in "$@"; do
    name="${spec%%::*}"
    cmd="${spec#*::}"
    printf '\n=== %s\n$ %s\n' "$name" "$cmd"
    start=$(date +%s)
    if bash -c "$cmd"; then status=PASS; else status=FAIL; failed=$((failed + 1)); fi
    names+=("$name"); results+=("$status"); times+=("$(( $(date +%s) - start ))s")
done
printf '\n=== summary\n'
for i in "${!names[@]}"; do
    printf '  %-4s  %-28s %6s\n' "${results[$i]}" "${names[$i]}" "${times[$i]}"
done
total=${#names[@]}
printf '%d passed, %d failed\n' "$((total - failed))" "$failed"
[ "$failed" -eq 0 ]
