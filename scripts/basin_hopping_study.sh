#!/usr/bin/env bash
# Basin hopping vs local search alone on NeuralSim experiment 1
# (configs/simid_double_pendulum_lengths.yaml: recover the link lengths 3, 4
# of the double pendulum from 2 s trajectories, single shooting over the
# whole horizon, random starts in the bounds [0.1, 10]).
#
# For every seed it runs
#   local  one Levenberg-Marquardt solve from a random start
#          (--set estimate.basin_hopping.enabled=false
#           --set estimate.basin_hopping.random_initial=true)
#   bh     parallel basin hopping as configured (population 4, up to 8 rounds,
#          stops at cost <= 1e-8)
# through scripts/sweep_simid.sh, then prints a markdown table: success rate
# (max_relative_error < THRESHOLD, status ok), median and max fit time
# (timings.fit_s, wall clock of the fit) and median basin-hopping rounds.
#
# Usage: scripts/basin_hopping_study.sh [options]
#   --seeds LIST     seeds (default: 1-20), as for sweep_simid.sh
#   --out DIR        study directory (default: out/basin_hopping_study)
#   --config FILE    simid config (default: configs/simid_double_pendulum_lengths.yaml)
#   --threshold X    success: max_relative_error < X (default: 1e-3)
#   -j, --jobs N     runs in parallel (default: 1, so fit times are not distorted)
#   --threads N      simid --threads per run (default: 0 = all cores; basin
#                    hopping runs its population on them)
#   --simid PATH     simid binary (default: $SIMID, else build/simid)
#   --table-only     only re-print the table of an existing study directory
#   -h, --help       this text
# Output: DIR/runs/{local,bh}/seed_N/ (one simid run each), DIR/summary.csv,
# DIR/table.md (the table, also printed on stdout).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "basin_hopping_study: $*" >&2; exit 2; }
need() { [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value (see --help)"; }

SEEDS="1-20"
OUT="out/basin_hopping_study"
CONFIG="configs/simid_double_pendulum_lengths.yaml"
THRESHOLD="1e-3"
JOBS=1
THREADS=0
SIMID_ARGS=()
TABLE_ONLY=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seeds) need "$@"; SEEDS="$2"; shift 2 ;;
    --out) need "$@"; OUT="$2"; shift 2 ;;
    --config) need "$@"; CONFIG="$2"; shift 2 ;;
    --threshold) need "$@"; THRESHOLD="$2"; shift 2 ;;
    -j|--jobs) need "$@"; JOBS="$2"; shift 2 ;;
    --threads) need "$@"; THREADS="$2"; shift 2 ;;
    --simid) need "$@"; SIMID_ARGS=(--simid "$2"); shift 2 ;;
    --table-only) TABLE_ONLY=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

mkdir -p "$OUT"
if [[ "$TABLE_ONLY" == 0 ]]; then
  echo "basin_hopping_study: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  # A failed run is a data point (the table counts it as a failure), not a reason to stop.
  set +e
  "$ROOT/scripts/sweep_simid.sh" --config "$CONFIG" --out "$OUT/runs" --seeds "$SEEDS" \
    -j "$JOBS" --threads "$THREADS" ${SIMID_ARGS[@]+"${SIMID_ARGS[@]}"} --csv "$OUT/summary.csv" \
    --variant "local estimate.basin_hopping.enabled=false estimate.basin_hopping.random_initial=true" \
    --variant "bh"
  code=$?
  set -e
  [[ $code -le 1 ]] || exit "$code"
  echo "basin_hopping_study: load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
fi
[[ -f "$OUT/summary.csv" ]] || die "$OUT/summary.csv: no study results (run without --table-only first)"

python3 - "$OUT/summary.csv" "$THRESHOLD" "$(nproc)" "$THREADS" "$JOBS" <<'EOF' | tee "$OUT/table.md"
import csv, statistics, sys
path, threshold, nproc, threads, jobs = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
labels = {"local": "local search alone (1 LM solve, random start)",
          "bh": "parallel basin hopping (population 4, <= 8 rounds)"}
groups = {}
for row in csv.DictReader(open(path)):
    groups.setdefault(row["run_dir"].split("/")[0], []).append(row)

def num(s):
    try:
        return float(s)
    except ValueError:
        return None

print("| method | runs | successes (max rel. error < {:g}) | success rate | median fit time [s] | max fit time [s] | median rounds |".format(threshold))
print("|---|---:|---:|---:|---:|---:|---:|")
for key in ["local", "bh"] + sorted(k for k in groups if k not in ("local", "bh")):
    rows = groups.get(key, [])
    if not rows:
        continue
    ok = [r for r in rows if r["status"] == "ok" and num(r["max_relative_error"]) is not None
          and num(r["max_relative_error"]) < threshold]
    fit = [num(r["fit_s"]) for r in rows if num(r["fit_s"]) is not None]
    rounds = [num(r["rounds"]) for r in rows if num(r["rounds"]) is not None]
    print("| {} | {} | {} | {:.0f}% | {} | {} | {} |".format(
        labels.get(key, key), len(rows), len(ok), 100.0 * len(ok) / len(rows),
        "{:.2f}".format(statistics.median(fit)) if fit else "-",
        "{:.2f}".format(max(fit)) if fit else "-",
        "{:g}".format(statistics.median(rounds)) if rounds else "-"))
print()
print("{} seeds per method; simid --threads {} on {} cores, {} run(s) at a time; fit time = timings.fit_s (wall clock).".format(
    max(len(v) for v in groups.values()), threads if threads != "0" else "0 (all cores)", nproc, jobs))
EOF
