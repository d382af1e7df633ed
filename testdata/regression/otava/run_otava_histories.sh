#!/usr/bin/env bash
# Run by hand, never by CI (CI installs no Python): Apache Otava's analysis of the synthetic
# histories, whose outputs are committed beside this script and read by
# core/tests/regression_otava.rs. See ../OTAVA.md.
#
# usage: testdata/regression/otava/run_otava_histories.sh   (OTAVA=path/to/otava to skip the venv)
#
# --since/--until: Otava's CSV reader otherwise keeps only rows dated in [now - 365 days, now)
# and drops the others silently; the explicit range makes the output independent of the day it
# is run. --config-file must come after the sub-command (before it, otava 0.8.0 ignores it).
set -eu
cd "$(dirname "$0")"
if [ -z "${OTAVA:-}" ]; then
  VENV="${VENV_OTAVA:-/tmp/venv-otava}"
  [ -x "$VENV/bin/otava" ] || { python3 -m venv "$VENV"; "$VENV/bin/pip" install -q apache-otava==0.8.0; }
  OTAVA="$VENV/bin/otava"
fi
RANGE=(--since 2026-01-01 --until 2026-11-01)
for t in two-steps drift noise-only short-regimes; do
  "$OTAVA" analyze --config-file "$PWD/otava_histories.yaml" "${RANGE[@]}" "$t" > "otava_analyze_$t.txt" 2>/dev/null
  "$OTAVA" analyze --config-file "$PWD/otava_histories.yaml" "${RANGE[@]}" --output json "$t" > "otava_analyze_$t.json" 2>/dev/null
  "$OTAVA" analyze --config-file "$PWD/otava_histories.yaml" "${RANGE[@]}" --output regressions_only "$t" > "otava_regressions_$t.txt" 2>/dev/null
done
