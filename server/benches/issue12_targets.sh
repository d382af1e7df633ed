#!/usr/bin/env bash
# Issue 12's targets in one run, on SQLite and Postgres, each with its measured figure and what
# it counts, met or NOT MET, in one table at the end (also in $OUT/targets.txt). In turn:
#
#   1. ingest side by side with the peer, Conbench 2023.4.10 (peer_side_by_side.sh ROUNDS 8;
#      needs VENV_CONBENCH, skipped with a line saying so without it), and Postgres scaling with
#      clients (peer_ingest on the peer's bodies, 1 then 8 clients, in turn, REPS times);
#   2. the history data set (history_growth: COMMITS nightly commits, 2 configurations, 18 cells,
#      the full vLLM metric set, per-request samples in the newest 200; the server in its own
#      process), on SQLite, then on Postgres: upload latency and flatness, every page's p95, the
#      series API against the hand-written SQL, RSS at rest, disk per value;
#   3. one 25 MB `--save-detailed` upload (large_upload, 3 repetitions per store);
#   4. 200 uploaders at once for 60 s (upload_storm): backpressure.
#
# usage: [VENV_CONBENCH=path/to/venv-conbench] server/benches/issue12_targets.sh [COMMITS] [ROUNDS]
#   COMMITS  history length (default 1800, issue 12's data set: about 25 min on SQLite and
#            longer on Postgres on a 2-core VM; 300 for a quick look)
#   ROUNDS   rounds of the side-by-side ingest and of the scaling measurement (default 3)
#
# Needs PostgreSQL at 127.0.0.1:5432 (BENCHTRAIL_BENCH_DATABASE_URL, default
# postgres://postgres@127.0.0.1:5432/postgres) and python3; for the peer, the harness in
# ../shared/tools/perf (PEER_HARNESS) and root, as peer_side_by_side.sh says. Everything it
# writes goes to OUT (default target/issue12-<time>/).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
COMMITS="${1:-1800}"
ROUNDS="${2:-3}"
OUT="${OUT:-$ROOT/target/issue12-$(date -u +%Y%m%dT%H%M%S)}"
export BENCHTRAIL_BENCH_DATABASE_URL="${BENCHTRAIL_BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
HARNESS="${PEER_HARNESS:-$ROOT/../shared/tools/perf}"
mkdir -p "$OUT"
cd "$ROOT"

step() { echo; echo "==> $1 ($(date -u +%T))"; }

{
  echo "date: $(date -u +%FT%TZ)"
  echo "benchtrail: $(git rev-parse --short HEAD)"
  echo "nproc: $(nproc); $(grep -m1 'model name' /proc/cpuinfo || true); $(free -g | awk '/Mem:/ {print $2 " GiB"}')"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/facts.txt"

# The server binary comes with them: the benchmarks that run it name it by CARGO_BIN_EXE.
step "build the benchmarks and the server (release)"
cargo bench -q -p benchtrail-server --no-run \
  --bench peer_ingest --bench history_growth --bench large_upload --bench upload_storm
bench() { cargo bench -q -p benchtrail-server --bench "$@"; }

step "1. ingest side by side with Conbench, and Postgres scaling with clients"
if [ -n "${VENV_CONBENCH:-}" ]; then
  PERF_OUT="$OUT/peer" server/benches/peer_side_by_side.sh "$ROUNDS" 8 | tee "$OUT/peer.txt"
  BODIES="$OUT/peer/bodies.jsonl"
else
  echo "VENV_CONBENCH is not set: the side-by-side ingest is skipped (peer_side_by_side.sh says how to set it up)" \
    | tee "$OUT/peer.txt"
  BODIES="$OUT/bodies.jsonl"
  python3 "$HARNESS/conbench_ingest.py" --dump-bodies "$BODIES" -n 2000 -c 100
fi
clients=1,8
for _ in $(seq 2 "$ROUNDS"); do clients="$clients,1,8"; done
bench peer_ingest -- --bodies "$BODIES" --no-sqlite --clients "$clients" --reps 1 \
  --json-out "$OUT/scaling.json" | tee "$OUT/scaling.txt"

step "2. the history data set, SQLite then Postgres ($COMMITS commits)"
bench history_growth -- --commits "$COMMITS" --every 300 --configurations 2 --samples-last 200 \
  --quiet --reads 20 --server-process --database-url "$BENCHTRAIL_BENCH_DATABASE_URL" \
  | tee "$OUT/history.txt"

step "3. one 25 MB --save-detailed upload"
bench large_upload -- --mib 25 --reps 3 --database-url "$BENCHTRAIL_BENCH_DATABASE_URL" \
  | tee "$OUT/large-upload.txt"

step "4. 200 uploaders at once"
bench upload_storm -- --clients 200 --seconds 60 | tee "$OUT/storm.txt"

echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/facts.txt"

python3 - "$OUT" <<'EOF' | tee "$OUT/targets.txt"
import json, re, statistics, sys
out = sys.argv[1]
rows = []  # (store, target, figure, verdict)

def verdict(met):
    return "met" if met else "NOT MET"

# 1. The side-by-side ratios (median over the rounds, from the peer script's summary).
try:
    summary = open(f"{out}/peer/summary.txt").read()
    for store, ratio, rounds in re.findall(
        r"median ratio to Conbench, (\w+): ([\d.]+)× \(rounds: ([^)]*)\)", summary
    ):
        rows.append((store, "ingest >= 10x Conbench, side by side",
                     f"median {ratio}x (rounds {rounds})", verdict(float(ratio) >= 10)))
except FileNotFoundError:
    rows.append(("both", "ingest >= 10x Conbench, side by side", "not run (VENV_CONBENCH unset)", "—"))

# 1. Postgres with 8 clients against 1, each pair measured in turn.
figures = json.load(open(f"{out}/scaling.json"))
by_clients = {}
for f in figures:
    by_clients.setdefault(f["clients"], []).append(f["values_per_s"])
one, eight = statistics.median(by_clients[1]), statistics.median(by_clients[8])
rows.append(("postgres", "8 clients >= 4x one client",
             f"{eight / one:.2f}x ({eight:.0f} against {one:.0f} values/s, medians of "
             f"{len(by_clients[8])})", verdict(eight / one >= 4)))

# 2–4. The lines each benchmark prints for its targets.
line = re.compile(r"^(sqlite|postgres):   (.{44}) (.*): (met|NOT MET)$")
for name in ("history.txt", "large-upload.txt", "storm.txt"):
    for text in open(f"{out}/{name}"):
        m = line.match(text.rstrip("\n"))
        if m:
            rows.append((m[1], m[2].strip(), m[3], m[4]))

print()
print("issue 12's targets")
print("| store | target | figure | |")
print("|---|---|---|---|")
for store, target, figure, v in rows:
    print(f"| {store} | {target} | {figure} | {v} |")
EOF
