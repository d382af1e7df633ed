#!/usr/bin/env bash
# benchtrail's ingest side by side with the peer, Conbench 2023.4.10, in turn (peer, benchtrail
# on SQLite, benchtrail on Postgres; ROUNDS times, so a drift of the machine's speed hits both),
# on the data set the peer's harness sends (2,000 results = 100 commits × 5 cells × 4 metrics,
# 3 values each = 6,000 values; benchtrail gets them as 300 uploads of 20 values, see
# server/benches/peer_ingest.rs). Prints each round's values stored per second and the ratio.
#
# usage: VENV_CONBENCH=path/to/venv-conbench server/benches/peer_side_by_side.sh [ROUNDS] [CLIENTS]
#
# Needs the peer harness (PEER_HARNESS, default ../shared/tools/perf beside the checkout; its
# README says how to install Conbench into a venv), PostgreSQL at 127.0.0.1:5432
# (BENCHTRAIL_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres), python3
# and root for the harness's `runuser -u postgres`. Everything it writes goes to PERF_OUT
# (default target/peer-side-by-side-<time>/); the harness's Conbench server is stopped at the end.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HARNESS="${PEER_HARNESS:-$ROOT/../shared/tools/perf}"
ROUNDS="${1:-3}"
CLIENTS="${2:-8}"
OUT="${PERF_OUT:-$ROOT/target/peer-side-by-side-$(date -u +%Y%m%dT%H%M%S)}"
export BENCHTRAIL_BENCH_DATABASE_URL="${BENCHTRAIL_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
[ -f "$HARNESS/conbench_ingest.py" ] || { echo "peer harness not found at $HARNESS (set PEER_HARNESS)" >&2; exit 2; }
mkdir -p "$OUT"

{
  echo "date: $(date -u +%FT%TZ)"
  echo "nproc: $(nproc); $(grep -m1 'model name' /proc/cpuinfo || true)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "benchtrail: $(git -C "$ROOT" rev-parse --short HEAD)"
} | tee "$OUT/facts.txt"

python3 "$HARNESS/conbench_ingest.py" --dump-bodies "$OUT/bodies.jsonl" -n 2000 -c 100
# Built before the clock of any round starts.
(cd "$ROOT" && cargo bench -p benchtrail-server --bench peer_ingest --no-run)

URL="$("$HARNESS/conbench_up.sh" | tail -n1)"
trap '"$HARNESS/conbench_down.sh" >&2 || true' EXIT

for round in $(seq "$ROUNDS"); do
  echo "== round $round: Conbench"
  python3 "$HARNESS/conbench_ingest.py" --url "$URL" -n 2000 -c 100 -k "$CLIENTS" --reps 1 \
    --json-out "$OUT/conbench-$round.json" | tail -n 2
  echo "== round $round: benchtrail (SQLite, then Postgres)"
  (cd "$ROOT" && cargo bench -q -p benchtrail-server --bench peer_ingest -- \
    --bodies "$OUT/bodies.jsonl" --clients "$CLIENTS" --reps 1 --json-out "$OUT/benchtrail-$round.json")
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/facts.txt"

python3 - "$OUT" "$ROUNDS" <<'EOF' | tee "$OUT/summary.txt"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
ratios = {"sqlite": [], "postgres": []}
print("round | Conbench values/s | benchtrail SQLite values/s (ratio) | benchtrail Postgres values/s (ratio)")
for r in range(1, rounds + 1):
    peer = json.load(open(f"{out}/conbench-{r}.json"))
    # Each Conbench result holds `repeats` values (stats.data).
    peer_rate = peer["reps"][0]["results_per_s"] * peer["params"]["repeats"]
    ours = {f["store"]: f for f in json.load(open(f"{out}/benchtrail-{r}.json"))}
    cells = []
    for store in ("sqlite", "postgres"):
        f = ours.get(store)
        if f is None:
            cells.append("—")
            continue
        ratios[store].append(f["values_per_s"] / peer_rate)
        cells.append(f"{f['values_per_s']:.0f} ({f['values_per_s'] / peer_rate:.2f}×)")
    print(f"{r} | {peer_rate:.0f} | {cells[0]} | {cells[1]}")
for store, rs in ratios.items():
    if rs:
        print(f"median ratio to Conbench, {store}: {statistics.median(rs):.2f}× (rounds: {', '.join(f'{x:.2f}' for x in rs)})")
EOF
