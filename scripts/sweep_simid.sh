#!/usr/bin/env bash
# Example parameter sweep for simid: runs every (variant, seed) pair in
# parallel, each into its own output directory, then collects every
# summary.json into one CSV table (scripts/collect_summaries.py).
#
# Usage: scripts/sweep_simid.sh [options] [-- extra simid arguments]
#   --config FILE       simid config       (default: configs/simid_double_pendulum_lengths.yaml)
#   --out DIR           sweep directory    (default: out/sweep); runs go to DIR/<variant>/seed_<N>
#   --seeds LIST        seeds: "1 2 3", "1,2,3" or a range "1-10"   (default: 1-5)
#   --variant 'NAME key=value ...'
#                       one config variant: a name (directory) and its --set
#                       overrides, separated by spaces; repeat for several.
#                       "NAME" alone runs the config as is.
#                       Default (the example grid): residual window 20 vs 200,
#                       basin hopping on vs off (local search from a random start):
#                         w200_bh     estimate.residual.window=200
#                         w200_local  estimate.residual.window=200 + basin_hopping.enabled=false, random_initial=true
#                         w20_bh      estimate.residual.window=20
#                         w20_local   estimate.residual.window=20  + basin_hopping.enabled=false, random_initial=true
#   -j, --jobs N        runs in parallel   (default: nproc)
#   --threads N         simid --threads for each run (default: 1, so parallel
#                       runs do not oversubscribe the cores; 0 = all cores)
#   --simid PATH        simid binary       (default: $SIMID, else build/simid)
#   --csv FILE          table to write     (default: DIR/summary.csv)
#   --plot              let simid plot fit.png (off by default: output.plot=false keeps runs quick)
#   --dry-run           print the commands, run nothing
#   -h, --help          this text
#
# Each run directory also gets cmd.sh (the exact command; `bash cmd.sh` re-runs
# it), stderr.log and exit_code. Existing run directories are overwritten.
# Exit status: 0 if every run exited 0, 1 if any failed (the table is still
# written; failed runs appear with their exit code), 2 on a usage error.
#
# Examples:
#   scripts/sweep_simid.sh --seeds 1-8 -j 2
#   scripts/sweep_simid.sh --config configs/simid_double_pendulum_friction.yaml --seeds 1,2 \
#       --variant 'lm' --variant 'lbfgs estimate.solver.type=lbfgs estimate.solver.max_iterations=300'
#   scripts/sweep_simid.sh --variant 'pop8 estimate.basin_hopping.population=8' -- -v
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

CONFIG="configs/simid_double_pendulum_lengths.yaml"
OUT="out/sweep"
SEEDS="1-5"
VARIANTS=()
JOBS="$(nproc 2>/dev/null || echo 2)"
THREADS=1
SIMID="${SIMID:-}"
CSV=""
PLOT=0
DRY=0
EXTRA=()

die() { echo "sweep_simid: $*" >&2; exit 2; }
need() { [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value (see --help)"; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --config) need "$@"; CONFIG="$2"; shift 2 ;;
    --out) need "$@"; OUT="$2"; shift 2 ;;
    --seeds) need "$@"; SEEDS="$2"; shift 2 ;;
    --variant) need "$@"; VARIANTS+=("$2"); shift 2 ;;
    -j|--jobs) need "$@"; JOBS="$2"; shift 2 ;;
    --threads) need "$@"; THREADS="$2"; shift 2 ;;
    --simid) need "$@"; SIMID="$2"; shift 2 ;;
    --csv) need "$@"; CSV="$2"; shift 2 ;;
    --plot) PLOT=1; shift ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; EXTRA=("$@"); break ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs must be a positive integer, got '$JOBS'"
[[ "$THREADS" =~ ^[0-9]+$ ]] || die "--threads must be a non-negative integer, got '$THREADS'"
[[ -f "$CONFIG" ]] || die "$CONFIG: no such config file"
if [[ -z "$SIMID" ]]; then SIMID="$ROOT/build/simid"; fi
if [[ "$DRY" == 0 && ! -x "$SIMID" ]]; then
  die "$SIMID: not an executable (build it: ninja -C build simid, or pass --simid / SIMID=)"
fi
command -v python3 >/dev/null || die "python3 not found on PATH (needed to collect the summaries)"

# Seeds: "1-10", "1,2,5" or "1 2 5".
seeds=()
if [[ "$SEEDS" =~ ^([0-9]+)-([0-9]+)$ ]]; then
  for ((s = BASH_REMATCH[1]; s <= BASH_REMATCH[2]; ++s)); do seeds+=("$s"); done
else
  for s in ${SEEDS//,/ }; do
    [[ "$s" =~ ^[0-9]+$ ]] || die "--seeds: '$s' is not a non-negative integer"
    seeds+=("$s")
  done
fi
[[ ${#seeds[@]} -gt 0 ]] || die "--seeds: no seeds in '$SEEDS'"

if [[ ${#VARIANTS[@]} -eq 0 ]]; then
  local_search="estimate.basin_hopping.enabled=false estimate.basin_hopping.random_initial=true"
  VARIANTS=(
    "w200_bh estimate.residual.window=200"
    "w200_local estimate.residual.window=200 $local_search"
    "w20_bh estimate.residual.window=20"
    "w20_local estimate.residual.window=20 $local_search"
  )
fi

CONFIG_ABS="$(cd "$(dirname "$CONFIG")" && pwd)/$(basename "$CONFIG")"
mkdir -p "$OUT"
OUT_ABS="$(cd "$OUT" && pwd)"
[[ -n "$CSV" ]] || CSV="$OUT_ABS/summary.csv"

# One cmd.sh per run: the exact, re-runnable command (quoted with %q).
scripts=()
declare -A seen=()
for v in "${VARIANTS[@]}"; do
  read -r -a words <<<"$v"
  [[ ${#words[@]} -ge 1 ]] || die "--variant: empty variant"
  name="${words[0]}"
  [[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || die "--variant: name '$name' must be [A-Za-z0-9._-]+ (it is a directory)"
  [[ -z "${seen[$name]:-}" ]] || die "--variant: name '$name' used twice"
  seen[$name]=1
  sets=()
  for kv in "${words[@]:1}"; do
    [[ "$kv" == *=* ]] || die "--variant '$name': '$kv' is not key=value"
    sets+=(--set "$kv")
  done
  [[ "$PLOT" == 1 ]] || sets+=(--set output.plot=false)
  for seed in "${seeds[@]}"; do
    dir="$OUT_ABS/$name/seed_$seed"
    cmd=("$SIMID" --config "$CONFIG_ABS" --force --out "$dir" --seed "$seed" --threads "$THREADS" -q "${sets[@]}" ${EXTRA[@]+"${EXTRA[@]}"})
    if [[ "$DRY" == 1 ]]; then
      printf '%q ' "${cmd[@]}"
      echo
      continue
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    {
      echo "#!/usr/bin/env bash"
      echo "# sweep_simid.sh run: variant $name, seed $seed"
      echo "cd $(printf '%q' "$ROOT")"
      printf '%q ' "${cmd[@]}"
      echo "2> $(printf '%q' "$dir/stderr.log")"
      echo "code=\$?"
      echo "echo \$code > $(printf '%q' "$dir/exit_code")"
      echo "if [ \$code -ne 0 ]; then echo \"FAILED (exit \$code): $name seed $seed, see $dir/stderr.log\" >&2; fi"
      echo "exit 0"
    } >"$dir/cmd.sh"
    scripts+=("$dir/cmd.sh")
  done
done
[[ "$DRY" == 0 ]] || exit 0

echo "sweep_simid: ${#scripts[@]} runs (${#VARIANTS[@]} variants x ${#seeds[@]} seeds), $JOBS in parallel -> $OUT_ABS" >&2
t0=$(date +%s)
printf '%s\0' "${scripts[@]}" | xargs -0 -n 1 -P "$JOBS" bash
echo "sweep_simid: runs finished in $(($(date +%s) - t0)) s" >&2

python3 "$ROOT/scripts/collect_summaries.py" "$OUT_ABS" -o "$CSV"

failed=0
for s in "${scripts[@]}"; do
  d="$(dirname "$s")"
  if [[ "$(cat "$d/exit_code" 2>/dev/null || echo missing)" != 0 ]]; then failed=$((failed + 1)); fi
done
if [[ $failed -gt 0 ]]; then
  echo "sweep_simid: $failed of ${#scripts[@]} runs failed (see the exit_code and status columns of $CSV)" >&2
  exit 1
fi
echo "sweep_simid: all ${#scripts[@]} runs succeeded; table: $CSV" >&2
