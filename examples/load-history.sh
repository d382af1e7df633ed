#!/usr/bin/env bash
# Uploads the example history (examples/history: real `vllm bench serve` files) to a running
# benchtrail server as project `demo`: four baseline commits, then two candidate commits.
#
#   BENCHTRAIL_ADMIN_TOKEN=<token the server printed> examples/load-history.sh
#
# The measurements are real; the commit metadata is SYNTHETIC (see examples/README.md): SHAs
# are derived from a fixed seed string, subjects start with "[synthetic]", times are fixed.
# Run ids are derived the same way, so running the script twice stores nothing twice.
set -euo pipefail
cd "$(dirname "$0")/.."

export BENCHTRAIL_URL="${BENCHTRAIL_URL:-http://127.0.0.1:8080}"
admin="${BENCHTRAIL_ADMIN_TOKEN:?set BENCHTRAIL_ADMIN_TOKEN to the admin token the server printed on its first start}"
read -r -a cli <<< "${BENCHTRAIL_CLI:-cargo run -q -p benchtrail-runner --}"
seed="benchtrail-example-history-v1"

# A synthetic 40-hex commit SHA and a UUID for upload number $1, derived from the seed.
sha_for() { printf '%s-commit-%s' "$seed" "$1" | sha1sum | cut -c1-40; }
uuid_for() { local h; h=$(printf '%s-run-%s' "$seed" "$1" | sha1sum); echo "${h:0:8}-${h:8:4}-5${h:13:3}-8${h:17:3}-${h:20:12}"; }

if "${cli[@]}" project create demo --token "$admin" \
    --name "Demo: mock vLLM server, baseline vs candidate (synthetic commits)" 2>/tmp/benchtrail-create.err; then
  :
elif grep -q "exists" /tmp/benchtrail-create.err; then
  echo "project demo exists; reusing it"
else
  cat /tmp/benchtrail-create.err >&2
  exit 2
fi
token=$("${cli[@]}" token create --project demo --token "$admin" | tail -n 1)

upload() { # n, version (baseline|candidate), commit time, subject, files...
  local n=$1 version=$2 time=$3 subject=$4
  shift 4
  "${cli[@]}" upload --project demo --token "$token" \
    --commit "$(sha_for "$n")" --commit-time "$time" --commit-subject "[synthetic] $subject" \
    --branch main --run-id "$(uuid_for "$n")" \
    --config "examples/history/config-$version.json" \
    --cell dataset=random,input_len=512,output_len=128,prefix_mode=fresh \
    "$@"
}

h=examples/history
upload 1 baseline  2026-11-02T09:00:00Z "baseline server, first measurement" \
  "$h/baseline_completions_c1_isl512_osl128.json" "$h/baseline_completions_c4_isl512_osl128.json"
upload 2 baseline  2026-11-03T09:00:00Z "baseline server (server seed 11), with --goodput" "$h/goodput_baseline_s11_c4.json"
upload 3 baseline  2026-11-04T09:00:00Z "baseline server (server seed 12), with --goodput" "$h/goodput_baseline_s12_c4.json"
upload 4 baseline  2026-11-05T09:00:00Z "baseline server (server seed 13), with --goodput" "$h/goodput_baseline_s13_c4.json"
upload 5 candidate 2026-11-06T09:00:00Z "candidate server: faster decode, slower prefill" \
  "$h/candidate_completions_c1_isl512_osl128.json" "$h/candidate_completions_c4_isl512_osl128.json"
upload 6 candidate 2026-11-07T09:00:00Z "candidate server (server seed 21), with --goodput" "$h/goodput_candidate_s21_c4.json"

echo
echo "Open $BENCHTRAIL_URL/projects/demo"
