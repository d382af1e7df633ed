#!/usr/bin/env bash
# Page reads of one server build on a stored history: wall p50 / p95 of each read, and the
# server process's CPU time and context switches per read (from /proc/<pid>/task/*, so other
# work on the machine moves them less than the wall time). Run it for two builds in turn (A B A B)
# to compare them; BENCHMARKS.md "Session 30" has its figures.
#
#   cargo bench -p benchtrail-server --bench history_growth -- --commits 1800 --every 300 \
#       --quiet --reads 0 --keep-sqlite /tmp/h1800.db
#   server/benches/page_reads.sh target/release/benchtrail-server /tmp/h1800.db 18190 30
#
# Arguments: the server binary, the SQLite database `history_growth --keep-sqlite` wrote (project
# `growth`; a copy is served, the original is not touched) or the Postgres URL that
# `history_growth --keep-postgres` printed (served as it is), a free port, reads per page.
set -euo pipefail
BIN=$1; DB=$2; PORT=$3; N=${4:-30}
TOKEN=bt_bench_admin_token_0123456789abcdef
COPY=$(mktemp -d)/reads.db
case "$DB" in
  postgres://* | postgresql://*) URL=$DB ;;
  *) cp "$DB" "$COPY"; URL="sqlite://$COPY?mode=rwc" ;;
esac
BENCHTRAIL_ADMIN_TOKEN=$TOKEN "$BIN" --bind "127.0.0.1:$PORT" --analysis-workers 0 \
  --database-url "$URL" >"$COPY.log" 2>&1 &
PID=$!
trap 'kill $PID; rm -rf "$(dirname "$COPY")"' EXIT
for _ in $(seq 150); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done
H="Authorization: Bearer $TOKEN"
U="http://127.0.0.1:$PORT"
SERIES=$(curl -sf -H "$H" "$U/api/v1/projects/growth/series?metric=ttft&stat=p50&limit=500" | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
print(next(i["series_id"] for i in items if i["cell_key"].startswith("max_concurrency=1;")))')
RUN=$(curl -sf -H "$H" "$U/api/v1/projects/growth/runs?limit=1" | python3 -c '
import json, sys
print(json.load(sys.stdin)["items"][0]["id"])')
# Server CPU ticks and context switches, summed over its threads.
snapshot() {
  python3 -c "
import glob
ticks = switches = 0
for task in glob.glob('/proc/$PID/task/*'):
    fields = open(task + '/stat').read().rsplit(')', 1)[1].split()
    ticks += int(fields[11]) + int(fields[12])
    for line in open(task + '/status'):
        if 'ctxt_switches' in line:
            switches += int(line.split()[1])
print(ticks, switches)"
}
HZ=$(getconf CLK_TCK)
for page in "dashboard /projects/growth" "alerts /projects/growth/alerts" \
  "series_page /projects/growth/series/$SERIES" "run /runs/$RUN" "matrix /runs/$RUN/matrix" \
  "compare /compare?head=$RUN" "series_API /api/v1/projects/growth/series/$SERIES"; do
  read -r name path <<<"$page"
  for _ in 1 2 3 4 5; do curl -s -o /dev/null -H "$H" "$U$path"; done
  read -r T0 C0 < <(snapshot)
  for _ in $(seq "$N"); do curl -s -o /dev/null -w '%{time_total}\n' -H "$H" "$U$path"; done >"$COPY.wall"
  read -r T1 C1 < <(snapshot)
  python3 -c "
w = sorted(float(x) * 1000 for x in open('$COPY.wall'))
n = len(w)
print('%-12s ms p50 %6.1f p95 %6.1f | server CPU %6.2f ms, %5.0f context switches per read (%d reads)' % (
    '$name', w[n // 2], w[min(n - 1, int(n * 0.95))], ($T1 - $T0) * 1000 / $HZ / n, ($C1 - $C0) / n, n))"
done
# The server's resident memory after every read above (the issue's "server RSS" target is
# about the server process alone, which history_growth's in-process figure cannot separate).
echo "server RSS after the reads: $(awk '/VmRSS/ {printf "%.0f MiB", $2 / 1024}' /proc/$PID/status)"
