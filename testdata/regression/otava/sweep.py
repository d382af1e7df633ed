"""One-off robustness check behind ../OTAVA.md's "50 seeds" table; run by hand, never by CI.

1. BENCHTRAIL_OTAVA_SWEEP_DIR=/tmp/sweep cargo test --release -p benchtrail-core \
       --test regression_otava -- --ignored
   writes every synthetic history with seeds 1..50 and benchtrail's change points
   (benchtrail.jsonl) to /tmp/sweep.
2. /tmp/venv-otava/bin/python testdata/regression/otava/sweep.py /tmp/sweep
   runs Otava's analysis on the same columns and prints, per history and metric, how often the
   two agree within one commit, and what each reported.

Otava is called as `otava analyze` calls it with its defaults (apache-otava 0.8.0:
AnalysisOptions window_len 50, max_pvalue 0.001, min_magnitude 0; missing values filled).
"""
import collections
import csv
import json
import sys

from otava.analysis import compute_change_points, fill_missing

folder = sys.argv[1]
table = collections.defaultdict(collections.Counter)
shapes = collections.defaultdict(lambda: (collections.Counter(), collections.Counter()))
for line in open(f"{folder}/benchtrail.jsonl"):
    r = json.loads(line)
    rows = list(csv.DictReader(open(f"{folder}/{r['test']}_{r['seed']}.csv")))
    values = [float(row[r["metric"]]) for row in rows]
    fill_missing(values)
    otava = [int(c.index) for c in compute_change_points(values, window_len=50, max_pvalue=0.001, min_magnitude=0.0)[0]]
    ours = r["change_points"]
    agree = len(otava) == len(ours) and all(abs(a - b) <= 1 for a, b in zip(otava, ours))
    key = (r["test"], r["metric"])
    table[key]["agree" if agree else "differ"] += 1
    shapes[key][0][str(otava)] += 1
    shapes[key][1][str(ours)] += 1
for key, counts in table.items():
    print(f"{key[0]:14} {key[1]:15} agree {counts['agree']:2}/50")
    print(f"    otava      {shapes[key][0].most_common(6)}")
    print(f"    benchtrail {shapes[key][1].most_common(6)}")
