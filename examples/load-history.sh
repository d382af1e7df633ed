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
if [ -z "${BENCHTRAIL_CLI:-}" ]; then
  echo "building the benchtrail CLI (cargo build -p benchtrail-runner; the first build takes a few minutes)..."
  cargo build -q -p benchtrail-runner
fi
read -r -a cli <<< "${BENCHTRAIL_CLI:-cargo run -q -p benchtrail-runner --}"
seed="benchtrail-example-history-v1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A synthetic 40-hex commit SHA and a UUID for upload number $1, derived from the seed.
sha_for() { printf '%s-commit-%s' "$seed" "$1" | sha1sum | cut -c1-40; }
uuid_for() { local h; h=$(printf '%s-run-%s' "$seed" "$1" | sha1sum); echo "${h:0:8}-${h:8:4}-5${h:13:3}-8${h:17:3}-${h:20:12}"; }

# The admin commands read BENCHTRAIL_ADMIN_TOKEN themselves: no token on a command line,
# which every user of the machine can read. (A BENCHTRAIL_TOKEN in the environment would win.)
if BENCHTRAIL_TOKEN="$admin" "${cli[@]}" project create demo \
    --name "Demo: mock vLLM server, baseline vs candidate (synthetic commits)" 2>"$tmp/create.err"; then
  :
elif grep -q "exists" "$tmp/create.err"; then
  echo "project demo exists; reusing it"
else
  cat "$tmp/create.err" >&2
  exit 2
fi
token=$(BENCHTRAIL_TOKEN="$admin" "${cli[@]}" token create --project demo | tail -n 1)

# The mock server's flags per version, and the exact commands that made each file
# (shared/samples/generated/MANIFEST.md), recorded as the run's reproducible configuration.
server_flags() {
  case $1 in
    baseline)  echo "--server-version baseline --itl-ms 8 --itl-concurrency-factor 0.05 --prefill-base-ms 5 --prefill-us-per-token 50 --jitter 0.1" ;;
    candidate) echo "--server-version candidate --itl-ms 6 --itl-concurrency-factor 0.03 --prefill-base-ms 15 --prefill-us-per-token 120 --jitter 0.1" ;;
  esac
}
config_file() { # version, port, server seed, num prompts, concurrency, extra client flags
  local version=$1 port=$2 seed=$3 prompts=$4 conc=$5 extra=$6 file
  file=$(mktemp -p "$tmp")
  cat > "$file" <<JSON
{
  "hardware": {"accelerator": "none (CPU-only sandbox, mock server)"},
  "engine": {"name": "mock-openai", "version": "$version",
    "launch_command": "python shared/tools/peers/mock_openai.py --host 127.0.0.1 --tokenizer /models/mock-tokenizer --port $port $(server_flags "$version") --seed $seed"},
  "sampling": {"ignore_eos": true},
  "benchmark": {"version": "vllm 0.33.0",
    "command": "vllm bench serve --backend openai --base-url http://127.0.0.1:$port --endpoint /v1/completions --dataset-name random --random-input-len 512 --random-output-len 128 --random-range-ratio 0 --num-prompts $prompts --max-concurrency $conc --request-rate inf --ignore-eos --model mock-llm --tokenizer /models/mock-tokenizer --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99 --seed 42${extra} --label mock-$version --metadata server_version=$version --save-result --save-detailed"}
}
JSON
  echo "$file"
}

upload() { # n, commit n, commit time, subject, config file, file
  local n=$1 commit=$2 time=$3 subject=$4 config=$5 file=$6
  BENCHTRAIL_TOKEN="$token" "${cli[@]}" upload --project demo \
    --commit "$(sha_for "$commit")" --commit-time "$time" --commit-subject "[synthetic] $subject" \
    --branch main --run-id "$(uuid_for "$n")" --config "$config" \
    --cell dataset=random,input_len=512,output_len=128,prefix_mode=fresh "$file"
}

h=examples/history
goodput=" --goodput ttft:60 tpot:12 e2el:1800"
upload 1 1 2026-11-02T09:00:00Z "baseline server, first measurement" \
  "$(config_file baseline 8001 1 20 1 "")" "$h/baseline_completions_c1_isl512_osl128.json"
upload 2 1 2026-11-02T09:00:00Z "baseline server, first measurement" \
  "$(config_file baseline 8001 1 60 4 "")" "$h/baseline_completions_c4_isl512_osl128.json"
for s in 11 12 13; do
  upload $((s - 8)) $((s - 9)) "2026-11-0$((s - 8))T09:00:00Z" "baseline server (server seed $s), with --goodput" \
    "$(config_file baseline 8101 "$s" 60 4 "$goodput")" "$h/goodput_baseline_s${s}_c4.json"
done
upload 6 5 2026-11-06T09:00:00Z "candidate server: faster decode, slower prefill" \
  "$(config_file candidate 8002 2 20 1 "")" "$h/candidate_completions_c1_isl512_osl128.json"
upload 7 5 2026-11-06T09:00:00Z "candidate server: faster decode, slower prefill" \
  "$(config_file candidate 8002 2 60 4 "")" "$h/candidate_completions_c4_isl512_osl128.json"
upload 8 6 2026-11-07T09:00:00Z "candidate server (server seed 21), with --goodput" \
  "$(config_file candidate 8101 21 60 4 "$goodput")" "$h/goodput_candidate_s21_c4.json"

echo
echo "Open $BENCHTRAIL_URL/projects/demo"
