#!/usr/bin/env bash
# Experiment 4: fit the three real datasets in ../shared/real-data with simid
# and compare every fit with the authors' published parameters on two
# measures, both on the held-out (validation) runs and on the training runs:
#
#   1. windowed simulation error: predictions restarted from the measured
#      state every T seconds, H seconds long, replaying the recorded torques
#      (summary.json metrics.*_windows: mean_rmse_q, median_rmse_q);
#   2. inverse-dynamics torque RMSE per joint (metrics.*_torque.rmse_per_joint)
#      with one fixed derivative filter per dataset.
#
# The *_published.yaml configs define both measures (estimate.evaluation,
# estimate.residual.derivatives) and run max_iterations 0; every parameter set
# (fitted or published) is evaluated by the same config, the fitted values
# passed as the parameters' initial values (not params_file: it checks the
# physical consistency of each value on its own, which a fitted I_yy of the
# multi-arm models fails against the model file's fixed I_xx and I_zz).
#
# The multi-arm recordings have no torque column; they are free swings
# (tau = 0), so the script writes copies of their imports with tau = 0 into
# OUT/import (needed by the torque measure and by inverse-dynamics fits).
#
# The shipped fits' own torque metric is also evaluated twice with
# `simid --evaluate` (moving average, the old default, and Savitzky–Golay,
# the default since issue #37).
#
# Prints the tables of docs/real-data-results.md and writes them to
# OUT/tables.md. Every run uses `nice` and one thread (NEURALSIM_THREADS
# overrides), one fit at a time: about 6 min wall on the shared 2-core
# machine at load 2-3 (2.5 min of it the delay fits, issue #36), 14 min at
# load 7-8 (2026-12-07); the longest fit, the double arm's multiple
# shooting, 32 s (45 s at load 7.7).
#
# A fit with a delay is scored with it where the table says so ("as
# fitted", "with its delay"): the held-out measures apply a fit's control
# and sensor delays (estimate/delayed_recording.hpp, since 2026-12-07).
#
# Usage: scripts/check_real_data.sh [BUILD_DIR] [OUT_DIR]
#   defaults: build, out/real-data
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
OUT="${2:-$ROOT/out/real-data}"
SIMID="$BUILD/simid"
PY=/usr/bin/python3
THREADS="${NEURALSIM_THREADS:-1}"
[[ -x "$SIMID" ]] || { echo "no simid in $BUILD (build it first)" >&2; exit 2; }
[[ -d "$ROOT/../shared/real-data" ]] || { echo "../shared/real-data not present" >&2; exit 3; }
mkdir -p "$OUT/import" "$OUT/fit" "$OUT/eval"
OUT="$(cd "$OUT" && pwd)"
SHARED="$(cd "$ROOT/../shared" && pwd)"
cd "$ROOT"
: > "$OUT/rows.tsv"

# --- data: multi-arm imports with tau = 0, DFKI validation runs one by one ---
for f in multiarm_single_train multiarm_single_validation multiarm_double_train multiarm_double_validation; do
  sed -e "s#\.\./\.\./\.\./shared#$SHARED#" "configs/import/$f.yaml" > "$OUT/import/$f.yaml"
  if [[ $f == *single* ]]; then
    printf '  tau:   # free swing: no applied torque\n    - {terms: {phi1: 0.0}}\n' >> "$OUT/import/$f.yaml"
  else
    printf '  tau:   # free swing: no applied torque\n    - {terms: {phi1: 0.0}}\n    - {terms: {phi2: 0.0}}\n' >> "$OUT/import/$f.yaml"
  fi
done
for run in energy_shaping ilqr; do
  sed -e "s#\.\./\.\./\.\./shared#$SHARED#" -e '/^    - ".*_measured.csv"$/d' \
      -e "s#^  files:\$#  files: [\"$SHARED/real-data/dfki-simple-pendulum/${run}_measured.csv\"]#" \
      configs/import/dfki_validation.yaml > "$OUT/import/dfki_$run.yaml"
done
SINGLE_DATA=(--set "data.train=$OUT/import/multiarm_single_train.yaml" --set "data.validation=$OUT/import/multiarm_single_validation.yaml")
DOUBLE_DATA=(--set "data.train=$OUT/import/multiarm_double_train.yaml" --set "data.validation=$OUT/import/multiarm_double_validation.yaml")

# --- helpers ---
fit() {  # tag config [simid args]: one fit, wall time and load average recorded
  local tag=$1 cfg=$2; shift 2
  echo "== fit $tag: simid --config $cfg $*" >&2
  local load t0 t1
  load=$(cut -d' ' -f1 /proc/loadavg); t0=$(date +%s.%N)
  nice "$SIMID" --config "$cfg" -q --force --threads "$THREADS" --out "$OUT/fit/$tag" "$@" >&2
  t1=$(date +%s.%N)
  echo "{\"wall_s\": $(awk "BEGIN{print $t1 - $t0}"), \"load1\": $load}" > "$OUT/fit/$tag/run.json"
}

as_initial() {  # params.json [bounds] -> --set value listing the fitted values as initial values
  "$PY" - "$@" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["parameters"]
bounds = len(sys.argv) > 2
items = []
for name, v in p.items():
    if name == "controls.delay" or name.startswith("observe."):
        continue  # delays: fixed by the caller (sim.controls.delay), not estimate.parameters
    x = v["value"]
    s = abs(x) if abs(x) > 1e-12 else 1.0
    b = ""
    if bounds:
        fmt = lambda y: ".inf" if y == float("inf") else "-.inf" if y == -float("inf") else "%.17g" % y
        b = ", bounds: [%s, %s]" % (fmt(v["lower"]), fmt(v["upper"]))
    items.append("{name: %s, initial: %.17g, scale: %.6g%s}" % (name, x, s, b))
if not bounds:  # values a fit held fixed with params: (e.g. simid_real_dfki_lead.yaml)
    for name, v in json.load(open(sys.argv[1])).get("fixed", {}).items():
        if name != "controls.delay" and not name.startswith("observe."):
            items.append("{name: %s, initial: %.17g, scale: %.6g}" % (name, v["value"], abs(v["value"]) or 1.0))
print("estimate.parameters=[" + ", ".join(items) + "]")
PY
}

fitted_delay() {  # fit_tag [name]: the fitted value of a delay (default controls.delay) in seconds
  "$PY" -c 'import json, sys; print("%.17g" % json.load(open(sys.argv[1]))["parameters"][sys.argv[2]]["value"])' \
      "$OUT/fit/$1/params.json" "${2:-controls.delay}"
}

ev() {  # tag config fit_tag|- [simid args]: evaluate a fit's values (or the config's own, -)
  local tag=$1 cfg=$2 from=$3; shift 3
  local init=()
  [[ $from != - ]] && init=(--set "$(as_initial "$OUT/fit/$from/params.json")")
  echo "== eval $tag: simid --config $cfg ${from/#-/published} $*" >&2
  nice "$SIMID" --config "$cfg" -q --force --threads "$THREADS" --out "$OUT/eval/$tag" "${init[@]}" "$@" >&2
}

row() {  # dataset label fit_tag|- eval_tag eval_tag_long|-
  printf '%s\t%s\t%s\t%s\t%s\n' "$@" >> "$OUT/rows.tsv"
}

# --- multi-arm single: 0.3 s windows (and 1 s); torque filter SG 51 (0.05 s) ---
SP=configs/simid_real_multiarm_single_published.yaml
LONG1=(--set estimate.evaluation.every=1.0 --set estimate.evaluation.horizon=1.0)
evs() {  # tag fit_tag|- [simid args]: 0.3 s and 1 s windows
  local tag=$1 from=$2; shift 2
  ev "$tag" $SP "$from" "${SINGLE_DATA[@]}" "$@"; ev "${tag}_long" $SP "$from" "${SINGLE_DATA[@]}" "${LONG1[@]}" "$@"
}
evs single_pub -
row single "published (Kaheman et al.)" - single_pub single_pub_long
fit single configs/simid_real_multiarm_single.yaml "${SINGLE_DATA[@]}"
evs single single
row single "ours: single shooting, 0.3 s windows (shipped config)" single single single_long
fit single_w1 configs/simid_real_multiarm_single.yaml "${SINGLE_DATA[@]}" --set estimate.residual.window=1000
evs single_w1 single_w1
row single "ours: single shooting, 1 s windows" single_w1 single_w1 single_w1_long
fit single_ms configs/simid_real_multiarm_single.yaml "${SINGLE_DATA[@]}" \
    --set estimate.residual.type=multiple_shooting --set estimate.residual.continuity_weight=10 --set estimate.residual.stride=0 --set estimate.solver.max_iterations=30
evs single_ms single_ms
row single "ours: multiple shooting, 0.3 s segments" single_ms single_ms single_ms_long
fit single_id configs/simid_real_multiarm_single.yaml "${SINGLE_DATA[@]}" \
    --set estimate.residual.type=inverse_dynamics --set 'estimate.residual.derivatives={method: savitzky_golay, window: 51, order: 3}'
evs single_id single_id
row single "ours: inverse dynamics, SG 51" single_id single_id single_id_long
# The identifiability report (not compared): m1, a1, I1, k1 all free.
fit single_unid configs/simid_real_multiarm_single_unidentifiable.yaml

# --- multi-arm double: 0.3 s windows; torque filter SG 51 ---
DP=configs/simid_real_multiarm_double_published.yaml
ev double_pub $DP - "${DOUBLE_DATA[@]}"
row double "published (Kaheman et al.)" - double_pub -
fit double configs/simid_real_multiarm_double.yaml "${DOUBLE_DATA[@]}"
ev double $DP double "${DOUBLE_DATA[@]}"
row double "ours: single shooting, 0.3 s windows (shipped config)" double double -
fit double_id configs/simid_real_multiarm_double.yaml "${DOUBLE_DATA[@]}" \
    --set estimate.residual.type=inverse_dynamics --set 'estimate.residual.derivatives={method: savitzky_golay, window: 51, order: 3}'
ev double_id $DP double_id "${DOUBLE_DATA[@]}"
row double "ours: inverse dynamics, SG 51" double_id double_id -
fit double_ms configs/simid_real_multiarm_double.yaml "${DOUBLE_DATA[@]}" \
    --set estimate.residual.type=multiple_shooting --set estimate.residual.continuity_weight=10 --set estimate.residual.stride=0 --set estimate.solver.max_iterations=20
ev double_ms $DP double_ms "${DOUBLE_DATA[@]}"
row double "ours: multiple shooting, 0.3 s segments" double_ms double_ms -
fit double_fs configs/simid_real_multiarm_double_fitted_starts.yaml "${DOUBLE_DATA[@]}"
ev double_fs $DP double_fs "${DOUBLE_DATA[@]}"
row double "ours: single shooting, fitted starting states" double_fs double_fs -

# --- DFKI: 0.2 s windows (and 0.5 s); torque filter SG 25 + filtered torque ---
KP=configs/simid_real_dfki_published.yaml
KA=configs/simid_real_dfki_atan_published.yaml
LONG5=(--set estimate.evaluation.every=0.5 --set estimate.evaluation.horizon=0.5)
evk() {  # tag published_config fit_tag|-
  ev "$1" "$2" "$3"; ev "$1_long" "$2" "$3" "${LONG5[@]}"
}
evk dfki_pub $KP -
row dfki "published, tanh friction stand-in (model file)" - dfki_pub dfki_pub_long
evk dfki_pub_atan $KA -
row dfki "published, the authors' atan friction" - dfki_pub_atan dfki_pub_atan_long
fit dfki configs/simid_real_dfki.yaml
evk dfki $KP dfki
row dfki "ours: multiple shooting, 30-sample segments (shipped config)" dfki dfki dfki_long
fit dfki_ss configs/simid_real_dfki.yaml --set estimate.residual.type=single_shooting
evk dfki_ss $KP dfki_ss
row dfki "ours: single shooting, 30-sample windows" dfki_ss dfki_ss dfki_ss_long
fit dfki_sg configs/simid_real_dfki_sg.yaml
evk dfki_sg $KP dfki_sg
row dfki "ours: inverse dynamics, SG 25 (authors' bandwidth)" dfki_sg dfki_sg dfki_sg_long
fit dfki_atan configs/simid_real_dfki_atan.yaml
evk dfki_atan $KA dfki_atan
row dfki "ours: inverse dynamics, SG 25, authors' atan friction" dfki_atan dfki_atan dfki_atan_long
for w in 21 23 27 31; do
  fit dfki_sg$w configs/simid_real_dfki_sg.yaml --set estimate.residual.derivatives.window=$w
  evk dfki_sg$w $KP dfki_sg$w
  row dfki "ours: inverse dynamics, SG $w" dfki_sg$w dfki_sg$w dfki_sg${w}_long
done
# Multiple shooting started from the inverse-dynamics result (offset free too).
fit dfki_ms_from_sg configs/simid_real_dfki.yaml --set "$(as_initial "$OUT/fit/dfki_sg/params.json" bounds)"
evk dfki_ms_from_sg $KP dfki_ms_from_sg
row dfki "ours: multiple shooting started from the SG 25 fit" dfki_ms_from_sg dfki_ms_from_sg dfki_ms_from_sg_long
# Validation torque per held-out run (the SG 25 filter spans 0.12 s at 200 Hz
# and 0.5 s at 50 Hz).
for run in energy_shaping ilqr; do
  ev dfki_pub_$run $KP - --set "data.validation=$OUT/import/dfki_$run.yaml"
  ev dfki_$run $KP dfki --set "data.validation=$OUT/import/dfki_$run.yaml"
  ev dfki_sg_$run $KP dfki_sg --set "data.validation=$OUT/import/dfki_$run.yaml"
done

# --- fitted delays (issue #36; docs/real-data-results.md "Fitted delays") ---
# DFKI: the fitted control delay on the recorded runs, then the delay allowed
# to be negative: copies of the three runs whose torque column is advanced by
# LEAD = 20 ms (6, 4 and 1 samples at 300, 200 and 50 Hz; the last samples
# dropped), on which a control delay d >= 0 is a delay L = d - LEAD of the
# recorded torque. Held-out windows are replayed as the controllers applied
# the torque, zero-order hold (the measure's own interpolation), at lags L.
LEAD=0.020
"$PY" - "$SHARED/real-data/dfki-simple-pendulum" "$OUT/import" "$LEAD" <<'PY'
import csv, statistics, sys
src, dst, lead = sys.argv[1], sys.argv[2], float(sys.argv[3])
for run in ["sysid_pd", "energy_shaping", "ilqr"]:
    rows = list(csv.reader(open(f"{src}/{run}_measured.csv")))
    head, data = rows[0], rows[1:]
    dt = statistics.median(float(b[0]) - float(a[0]) for a, b in zip(data, data[1:]))
    n = round(lead / dt)
    out = [r[:3] + [data[k + n][3]] for k, r in enumerate(data[:len(data) - n])]
    with open(f"{dst}/dfki_lead_{run}.csv", "w", newline="") as f:
        csv.writer(f).writerows([head] + out)
# The training run with its torque shifted by n = -3..3 whole samples
# (tau_k <- tau_{k+n}: n > 0 advances it, L = -n * 3.33 ms), for the
# inverse-dynamics fits, which refuse a delay.
rows = list(csv.reader(open(f"{src}/sysid_pd_measured.csv")))
head, data = rows[0], rows[1:]
for n in range(-3, 4):
    out = [data[k][:3] + [data[k + n][3]] for k in range(max(0, -n), len(data) - max(0, n))]
    with open(f"{dst}/dfki_shift{n}_sysid_pd.csv", "w", newline="") as f:
        csv.writer(f).writerows([head] + out)
PY
for n in -3 -2 -1 0 1 2 3; do
  sed -e "s#^  files: .*#  files: [\"$OUT/import/dfki_shift${n}_sysid_pd.csv\"]#" configs/import/dfki_sysid.yaml > "$OUT/import/dfki_shift$n.yaml"
done
sed -e "s#^  files: .*#  files: [\"$OUT/import/dfki_lead_sysid_pd.csv\"]#" configs/import/dfki_sysid.yaml > "$OUT/import/dfki_lead_sysid.yaml"
sed -e '/^    - ".*_measured.csv"$/d' \
    -e "s#^  files:\$#  files: [\"$OUT/import/dfki_lead_energy_shaping.csv\", \"$OUT/import/dfki_lead_ilqr.csv\"]#" \
    configs/import/dfki_validation.yaml > "$OUT/import/dfki_lead_validation.yaml"
KPAR4="estimate.parameters=[{name: link.link1.mass, initial: 0.3, bounds: [0.01, 2.0], scale: 0.1}, {name: joint.joint1.armature, initial: 0.02, bounds: [0.0, 0.5], scale: 0.01}, {name: joint.joint1.damping, initial: 0.02, bounds: [0.0, 1.0], scale: 0.01}, {name: joint.joint1.friction, initial: 0.1, bounds: [0.0, 2.0], scale: 0.1}]"
KLEAD=(--set "data.train=$OUT/import/dfki_lead_sysid.yaml" --set "data.validation=$OUT/import/dfki_lead_validation.yaml")
lag() { awk "BEGIN{printf \"%.6f\", $LEAD + $1}"; }  # delay on the advanced copies for a lag L [s]
: > "$OUT/delays.tsv"
drow() { printf '%s\t%s\t%s\t%s\n' "$@" >> "$OUT/delays.tsv"; }  # table label fit_tag|- eval_tag
# The fitted delay on the recorded data (cubic replay), and its twin without it.
fit dfki_delay configs/simid_real_dfki_delay.yaml
fit dfki_cubic configs/simid_real_dfki_delay.yaml --set "$KPAR4"
# Zero-order hold at fixed lags L = +3.33, 0, -3.33, -6.67, -10 ms (-1 to 3
# samples of the 300 Hz run), the shipped four parameters re-fitted at each.
for k in -1 0 1 2 3; do
  fit dfki_zoh_L$k configs/simid_real_dfki_delay.yaml "${KLEAD[@]}" --set sim.controls.interpolation=zero_order_hold \
      --set sim.controls.delay="$(lag "$((-k))/300")" \
      --set "$KPAR4"
done
# The equation-error view of the same lag: the inverse-dynamics fit
# (simid_real_dfki_sg.yaml) on the training run with its torque shifted by
# n whole samples.
for n in -3 -2 -1 0 1 2 3; do
  fit dfki_sg_shift$n configs/simid_real_dfki_sg.yaml --set "data.train=$OUT/import/dfki_shift$n.yaml"
done
# The lag fitted (cubic; a signed delay, on the recorded runs), and its twin
# at L = 0 (same samples, same free set).
fit dfki_lead configs/simid_real_dfki_lead.yaml
fit dfki_lead0 configs/simid_real_dfki_lead.yaml --set sim.controls.delay=0 \
    --set "estimate.parameters=[{name: link.link1.mass, initial: 0.3, bounds: [0.01, 2.0], scale: 0.1}, {name: joint.joint1.damping, initial: 0.02, bounds: [0.0, 1.0], scale: 0.01}]"
# Each parameter set on the recorded held-out runs (the standard measures,
# lag 0) and on the advanced copies at lags -3.33 and -6.67 ms (zero-order hold).
for from in - dfki dfki_delay dfki_cubic dfki_zoh_L2 dfki_lead0 dfki_lead; do
  t=${from/#-/pub}
  [[ $t == pub || $t == dfki ]] || ev "dl_${t}_0" $KP "$from"
  for k in 1 2; do ev "dl_${t}_L$k" $KP "$from" "${KLEAD[@]}" --set sim.controls.delay="$(lag "-$k/300")"; done
done
ev dl_pub_adv0 $KP - "${KLEAD[@]}" --set sim.controls.delay=$LEAD   # the copies at L = 0: the recorded runs less their last 20 ms
# Each delay fit scored as it was fitted: its own replay (cubic) and delay,
# on the data it was fitted on (the held-out measures apply a fit's delays
# to the windows' controls and to the torque measure's torque since the fix
# of 2026-12-07, estimate/delayed_recording.hpp).
ev dl_dfki_cubic_own $KP dfki_cubic --set sim.controls.interpolation=cubic
ev dl_dfki_delay_own $KP dfki_delay --set sim.controls.interpolation=cubic --set sim.controls.delay="$(fitted_delay dfki_delay)"
ev dl_dfki_lead0_own $KP dfki_lead0 --set sim.controls.interpolation=cubic
ev dl_dfki_lead_own $KP dfki_lead --set sim.controls.interpolation=cubic --set sim.controls.delay="$(fitted_delay dfki_lead)"
drow dfki "published" - pub
drow dfki "ours: multiple shooting (shipped config, 200 iterations, zero-order hold)" dfki dfki
drow dfki "ours: multiple shooting, cubic replay, no delay (dfki_cubic)" dfki_cubic dfki_cubic
drow dfki "ours: + fitted controls.delay, cubic (simid_real_dfki_delay.yaml)" dfki_delay dfki_delay
drow dfki "ours: zero-order hold at L = -6.67 ms (dfki_zoh_L2)" dfki_zoh_L2 dfki_zoh_L2
drow dfki "ours: mass and damping, cubic, L = 0 (dfki_lead0)" dfki_lead0 dfki_lead0
drow dfki "ours: mass and damping, cubic, L fitted (simid_real_dfki_lead.yaml)" dfki_lead dfki_lead

# Multi-arm, single arm (free swing, tau = 0): a control delay has no effect
# (its Jacobian column is 0: simid reports it in identifiability.no_effect);
# sensor delays of q (single and multiple shooting) and of the recorded
# velocity (q and q-dot observed, multiple shooting).
SPAR="estimate.parameters=[{name: link.link1.inertia.yy, initial: 5.0e-4, bounds: [1.0e-6, 1.0e-2], scale: 1.0e-4}, {name: joint.joint1.damping, initial: 1.0e-3, bounds: [0.0, 1.0e-2], scale: 1.0e-4}"  # + more entries + "]"
MSS=(--set estimate.residual.type=multiple_shooting --set estimate.residual.continuity_weight=10 --set estimate.residual.stride=0 --set estimate.solver.max_iterations=100)
fit single_cdelay configs/simid_real_multiarm_single.yaml "${SINGLE_DATA[@]}" --set sim.controls.interpolation=cubic \
    --set "$SPAR, {name: controls.delay, initial: 0.005, bounds: [0, 0.03], scale: 0.001}]"
fit double_cdelay configs/simid_real_multiarm_double.yaml "${DOUBLE_DATA[@]}" --set sim.controls.interpolation=cubic \
    --set "estimate.parameters=[{name: link.link1.com.z, initial: -0.09, bounds: [-0.2, -0.02], scale: 0.1}, {name: link.link1.length, initial: 0.15, bounds: [0.08, 0.3], scale: 0.1}, {name: link.link1.inertia.yy, initial: 3.0e-4, bounds: [1.0e-6, 3.0e-3], scale: 1.0e-3}, {name: link.link2.inertia.yy, initial: 1.0e-3, bounds: [1.0e-6, 5.0e-3], scale: 1.0e-3}, {name: joint.joint1.damping, initial: 1.0e-4, bounds: [0.0, 5.0e-3], scale: 1.0e-4}, {name: controls.delay, initial: 0.005, bounds: [0, 0.03], scale: 0.001}]"
fit single_qdelay configs/simid_real_multiarm_single.yaml "${SINGLE_DATA[@]}" \
    --set "$SPAR, {name: observe.q.delay, initial: 0.002, bounds: [0, 0.01], scale: 0.001}]"
fit single_ms100 configs/simid_real_multiarm_single.yaml "${SINGLE_DATA[@]}" "${MSS[@]}"
fit single_ms_qdelay configs/simid_real_multiarm_single.yaml "${SINGLE_DATA[@]}" "${MSS[@]}" \
    --set "$SPAR, {name: observe.q.delay, initial: 0.002, bounds: [0, 0.01], scale: 0.001}]"
for d in 0.0005 0.002; do
  fit single_ms_q$d configs/simid_real_multiarm_single.yaml "${SINGLE_DATA[@]}" "${MSS[@]}" \
      --set "estimate.observe={q: {weight: 1.0, delay: $d}}"
done
fit single_ms_qd configs/simid_real_multiarm_single_velocity_delay.yaml "${SINGLE_DATA[@]}" --set "$SPAR]"
fit single_ms_qddelay configs/simid_real_multiarm_single_velocity_delay.yaml "${SINGLE_DATA[@]}"
for t in single_qdelay single_ms100 single_ms_qdelay single_ms_qd single_ms_qddelay; do evs "$t" "$t"; done
# The sensor-delay fits scored with their own delays (params: observe.*.delay,
# fixed), as simid --evaluate replays a params.json.
for t in single_qdelay single_ms_qdelay; do
  evs "${t}_own" "$t" --set "params.observe.q.delay=$(fitted_delay "$t" observe.q.delay)"
done
evs single_ms_qddelay_own single_ms_qddelay --set "params.observe.qd.delay=$(fitted_delay single_ms_qddelay observe.qd.delay)"
# The published parameters under the same velocity delay: the like-for-like
# comparison (a delay changes the measure, not only the parameters).
evs single_pub_own - --set "params.observe.qd.delay=$(fitted_delay single_ms_qddelay observe.qd.delay)"
drow single "published" - single_pub
drow single "ours: single shooting (shipped)" single single
drow single "ours: single shooting + fitted observe.q.delay" single_qdelay single_qdelay
drow single "ours: multiple shooting (100 iterations)" single_ms100 single_ms100
drow single "ours: multiple shooting + fitted observe.q.delay" single_ms_qdelay single_ms_qdelay
drow single "ours: multiple shooting + fixed q delay 0.5 ms" single_ms_q0.0005 -
drow single "ours: multiple shooting + fixed q delay 2 ms" single_ms_q0.002 -
drow single "ours: multiple shooting, q and q-dot observed" single_ms_qd single_ms_qd
drow single "ours: multiple shooting, q and q-dot observed + fitted observe.qd.delay" single_ms_qddelay single_ms_qddelay

# --- the shipped fits' own torque metric (issue #37): the old default, a
# 5-sample moving average with central differences of the recorded q̇,
# against the new one, Savitzky–Golay (31 samples, cubic) on the time stamps;
# each fit's values evaluated by its own config (simid --evaluate) ---
mkdir -p "$OUT/torque"
tm() {  # tag config fit_tag [simid args]
  local tag=$1 cfg=$2 from=$3; shift 3
  echo "== torque metric $tag: simid --config $cfg --evaluate $OUT/fit/$from/params.json" >&2
  nice "$SIMID" --config "$cfg" -q --force --threads "$THREADS" --out "$OUT/torque/${tag}_sg" \
      --evaluate "$OUT/fit/$from/params.json" "$@" >&2
  nice "$SIMID" --config "$cfg" -q --force --threads "$THREADS" --out "$OUT/torque/${tag}_ma" \
      --evaluate "$OUT/fit/$from/params.json" --set estimate.residual.filter_window=5 "$@" >&2
}
tm single configs/simid_real_multiarm_single.yaml single "${SINGLE_DATA[@]}"
tm double configs/simid_real_multiarm_double.yaml double "${DOUBLE_DATA[@]}"
tm dfki configs/simid_real_dfki.yaml dfki

"$PY" - "$OUT" <<'PY' | tee "$OUT/tables.md"
import json, math, sys
out = sys.argv[1]
def load(p):
    return json.load(open(p))
def summ(tag):
    return load(f"{out}/eval/{tag}/summary.json")["metrics"]
rows = [l.rstrip("\n").split("\t") for l in open(f"{out}/rows.tsv")]

def values(ds, p):
    g = lambda k: p.get(k, float("nan"))
    if ds == "single":
        return "I1 = %.4g, k1 = %.4g" % (g("link.link1.inertia.yy"), g("joint.joint1.damping"))
    if ds == "double":
        return "a1 = %.4f, L1 = %.4f, I1 = %.4g, I2 = %.4g, k1 = %.3g" % (
            -g("link.link1.com.z"), g("link.link1.length"), g("link.link1.inertia.yy"),
            g("link.link2.inertia.yy"), g("joint.joint1.damping"))
    return None

def dfki_values(tag_eval, fit_tag):
    # J = m l^2 + armature, m cx = m l (l = 0.5), Fc in the authors' atan units.
    p = summ(tag_eval)["parameters"]
    off = p.get("joint.joint1.torque_offset", -0.07586)
    m, arm = p["link.link1.mass"], p["joint.joint1.armature"]
    return "J = %.4f, m·cx = %.4f, Fv = %.4f, Fc = %.4f, offset = %.4f" % (
        m * 0.25 + arm, m * 0.5, p["joint.joint1.damping"], p["joint.joint1.friction"] * 2 / math.pi, off)

titles = {"single": "Multi-arm pendulum, single arm", "double": "Multi-arm pendulum, double arm",
          "dfki": "DFKI simple pendulum"}
for ds in ["single", "double", "dfki"]:
    rs = [r for r in rows if r[0] == ds]
    pub = summ(rs[0][3])
    first = summ(rs[0][3])
    H = first["validation_windows"]["horizon_s"]; T = first["validation_windows"]["every_s"]
    long_tag = rs[0][4]
    HL = summ(long_tag)["validation_windows"]["horizon_s"] if long_tag != "-" else None
    tq = first["validation_torque"]
    d = tq.get("derivatives", {})
    joints = list(tq["rmse_per_joint"].keys())
    print(f"\n### {titles[ds]}\n")
    print(f"Windows: H = {H:g} s predictions every T = {T:g} s"
          + (f" (and H = T = {HL:g} s)" if HL else "")
          + f"; torque filter: {d.get('method')} {d.get('window')} samples, order {d.get('order')}"
          + (", torque filtered alike" if d.get("filter_torque") else "") + ". "
          + "**Bold**: at least as good as the published parameters (first row).\n")
    hdr = ["fit", "values", f"val. sim. mean / median, {H:g} s [rad]"]
    if HL: hdr.append(f"val. sim. mean / median, {HL:g} s [rad]")
    hdr += [f"val. torque RMSE {', '.join(joints)} [N·m]", f"train sim. mean / median, {H:g} s", "train torque RMSE", "fit time [s] (load)"]
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    ref = {}
    for i, (_, label, fit_tag, ev_tag, ev_long) in enumerate(rs):
        m = summ(ev_tag)
        vals = values(ds, m["parameters"]) if ds != "dfki" else dfki_values(ev_tag, fit_tag)
        def cell(key, x, fmt="%.4g"):
            s = fmt % x
            if i == 0:
                ref[key] = x
                return s
            return f"**{s}**" if x <= ref[key] * (1 + 1e-9) else s
        vw, tw = m["validation_windows"], m["train_windows"]
        cells = [label, vals,
                 cell("vm", vw["mean_rmse_q"]) + " / " + cell("vd", vw["median_rmse_q"])]
        if HL:
            lw = summ(ev_long)["validation_windows"]
            cells.append(cell("lm", lw["mean_rmse_q"]) + " / " + cell("ld", lw["median_rmse_q"]))
        cells.append(", ".join(cell("vt" + j, m["validation_torque"]["rmse_per_joint"][j]) for j in joints))
        cells.append(cell("tm", tw["mean_rmse_q"]) + " / " + cell("td", tw["median_rmse_q"]))
        cells.append(", ".join(cell("tt" + j, m["train_torque"]["rmse_per_joint"][j]) for j in joints))
        if fit_tag != "-":
            run = load(f"{out}/fit/{fit_tag}/run.json")
            fs = load(f"{out}/fit/{fit_tag}/summary.json")["timings"]["fit_s"]
            cells.append("%.1f (%.1f)" % (fs, run["load1"]))
        else:
            cells.append("–")
        print("| " + " | ".join(cells) + " |")
    if ds == "dfki":
        print("\nValidation torque RMSE per held-out run [N·m]:\n")
        print("| fit | energy shaping (200 Hz) | iLQR (50 Hz) |")
        print("|---|---|---|")
        for label, tag in [("published", "dfki_pub"), ("ours: multiple shooting", "dfki"),
                           ("ours: inverse dynamics, SG 25", "dfki_sg")]:
            e = summ(f"{tag}_energy_shaping")["validation_torque"]["rmse"]
            q = summ(f"{tag}_ilqr")["validation_torque"]["rmse"]
            print(f"| {label} | {e:.4f} | {q:.4f} |")
print("\n### The shipped fits' own torque metric: moving average (old default) against Savitzky–Golay (new)\n")
print("Each shipped fit's values evaluated by its own config with `simid --evaluate`; torque RMSE per joint [N·m].\n")
print("| dataset | fit | val. moving average 5 | val. Savitzky–Golay 31 | ratio | train moving average 5 | train Savitzky–Golay 31 | post-fit evaluation [s] |")
print("|---|---|---|---|---|---|---|---|")
for tag, label, fit in [("single", "multi-arm single", "single shooting (shipped)"),
                        ("double", "multi-arm double", "single shooting (shipped)"),
                        ("dfki", "DFKI", "multiple shooting (shipped)")]:
    ma = load(f"{out}/torque/{tag}_ma/summary.json")
    sg = load(f"{out}/torque/{tag}_sg/summary.json")
    def per(m, split):
        return [v for v in m["metrics"][split]["rmse_per_joint"].values()]
    vma, vsg = per(ma, "validation_torque"), per(sg, "validation_torque")
    tma, tsg = per(ma, "train_torque"), per(sg, "train_torque")
    f = lambda xs: ", ".join("%.4g" % x for x in xs)
    ratio = ", ".join("%.1f" % (a / b) for a, b in zip(vma, vsg))
    ev = load(f"{out}/fit/{tag}/summary.json")["timings"].get("evaluation_s", float("nan"))
    print(f"| {label} | {fit} | {f(vma)} | {f(vsg)} | {ratio} | {f(tma)} | {f(tsg)} | {ev:.2f} |")
u = load(f"{out}/fit/single_unid/summary.json")["metrics"]
print(f"\nIdentifiability check (multi-arm single, m1, a1, I1, k1 free): identifiable = {u['identifiable']}")
PY

# --- the tables of "Fitted delays" (docs/real-data-results.md) ---
"$PY" - "$OUT" "$LEAD" <<'PY' | tee -a "$OUT/tables.md"
import json, math, os, sys
out, lead = sys.argv[1], float(sys.argv[2])
load = lambda p: json.load(open(p))
fitp = lambda t: load(f"{out}/fit/{t}/params.json")
summ = lambda t: load(f"{out}/eval/{t}/summary.json")["metrics"]
rows = [l.rstrip("\n").split("\t") for l in open(f"{out}/delays.tsv")]
def ms(x, fmt="%.2f"):
    return "NaN" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt % (1e3 * x)
def delay(t):
    if t == "-": return "–"
    p = fitp(t)["parameters"]
    for name, v in p.items():
        if name == "controls.delay" or name.startswith("observe."):
            d, se = v["value"], v.get("std_error")
            return f"{name} = {ms(d)} ± {ms(se, '%.2g')} ms"
    return "–"
def cost(t):
    if t == "-": return "–"
    s = load(f"{out}/fit/{t}/summary.json")["metrics"]["best_local_solve"]
    return "%.5g (%d it.)" % (s["cost"], s["iterations"])
def dfki_vals(p):
    m, arm = p["link.link1.mass"], p["joint.joint1.armature"]
    return "J = %.4f, m·cx = %.4f, Fv = %.4f, Fc = %.4f" % (
        m * 0.25 + arm, m * 0.5, p["joint.joint1.damping"], p["joint.joint1.friction"] * 2 / math.pi)
win = lambda m: "%.4g / %.4g" % (m["validation_windows"]["mean_rmse_q"], m["validation_windows"]["median_rmse_q"])
print("\n### Fitted delays: DFKI simple pendulum\n")
print("Held-out windows (0.2 s every 0.2 s) replayed with zero-order hold at lags L of the recorded torque "
      "(L < 0: the motor applied the torque |L| before it was recorded; on the copies advanced by %g ms). "
      "Torque RMSE: the standard measure (the same sample, no delay).\n" % (lead * 1e3))
print("As fitted: each fit scored with its own replay (cubic where it was fitted so) and delay, on the data it was "
      "fitted on (the recorded runs; the lag fit's delay is L, signed); the torque measure at that delay too.\n")
print("| fit | values | delay (fitted ± SE) | training cost | val. sim. mean / median, L = 0 [rad] | L = −3.33 ms | L = −6.67 ms | val. torque RMSE [N·m] | as fitted: val. sim. mean / median | as fitted: val. torque RMSE |")
print("|---|---|---|---|---|---|---|---|---|---|")
own = {"pub": "dfki_pub", "dfki": "dfki", "dfki_zoh_L2": "dl_dfki_zoh_L2_L2"}
for ds, label, f, t in rows:
    if ds != "dfki": continue
    std = {"pub": "dfki_pub", "dfki": "dfki"}.get(t, f"dl_{t}_0")
    m0, mo = summ(std), summ(own.get(t, f"dl_{t}_own"))
    print(f"| {label} | {dfki_vals(m0['parameters'])} | {delay(f)} | {cost(f)} | {win(m0)} | {win(summ(f'dl_{t}_L1'))} | "
          f"{win(summ(f'dl_{t}_L2'))} | %.4f | {win(mo)} | %.4f |" % (m0["validation_torque"]["rmse"], mo["validation_torque"]["rmse"]))
a, b = summ("dfki_pub"), summ("dl_pub_adv0")
print(f"\nCheck of the advanced copies: published parameters at L = 0 on them {win(b)} rad, on the recorded runs {win(a)} rad.")
print("\nZero-order hold at fixed lags (the four parameters of the shipped fit re-fitted at each, 300 iterations):\n")
print("| L [ms] | training cost | values |")
print("|---|---|---|")
for k in [-1, 0, 1, 2, 3]:
    t = f"dfki_zoh_L{k}"
    p = {n: v["value"] for n, v in fitp(t)["parameters"].items()}
    print(f"| {-k * 1e3 / 300:+.2f} | {cost(t)} | {dfki_vals(p)} |")
print("\nInverse dynamics (SG 25, simid_real_dfki_sg.yaml) on the training run with its torque shifted by n samples "
      "(L = -n × 3.33 ms), re-fitted at each:\n")
print("| L [ms] | training torque RMSE [N·m] | values |")
print("|---|---|---|")
for n in range(-3, 4):
    m = load(f"{out}/fit/dfki_sg_shift{n}/summary.json")["metrics"]
    p = m["parameters"]
    print(f"| {-n * 1e3 / 300:+.2f} | %.4f | {dfki_vals(p)}, offset = %.4f |" % (
        m["train_torque"]["rmse"], p["joint.joint1.torque_offset"]))
print("\n### Fitted delays: multi-arm pendulum, single arm\n")
for arm, tag, shipped in [("single", "single_cdelay", "single"), ("double", "double_cdelay", "double")]:
    c = fitp(tag); s0 = fitp(shipped)
    same = all(abs(c["parameters"][n]["value"] - v["value"]) <= 1e-12 * abs(v["value"]) for n, v in s0["parameters"].items())
    print("controls.delay on the %s arm's free swing (tau = 0): value %s ms (its initial value), standard error %s, "
          "no_effect = %s, identifiable = %s; the other values equal the shipped fit's to 1e-12: %s.\n" % (
          arm, ms(c["parameters"]["controls.delay"]["value"]), ms(c["parameters"]["controls.delay"].get("std_error")),
          c["identifiability"]["no_effect"], c["identifiability"]["identifiable"], same))
print("The windows without the fit's sensor delay, and (last two columns) with it, as simid --evaluate replays a "
      "params.json: observe.*.delay fixed, the windows' start velocity and q-dot read at the delays (estimate/delayed_recording.hpp); "
      "the published parameters there with the velocity delay of the last row's fit.\n")
print("| fit | I1, k1 | delay (fitted ± SE) | training cost | val. sim. mean / median, 0.3 s [rad] | 1 s [rad] | val. torque RMSE [N·m] | with its delay: 0.3 s | 1 s |")
print("|---|---|---|---|---|---|---|---|---|")
for ds, label, f, t in rows:
    if ds != "single": continue
    p = {n: v["value"] for n, v in fitp(f)["parameters"].items()} if f != "-" else summ(t)["parameters"]
    vals = "I1 = %.5g, k1 = %.4g" % (p["link.link1.inertia.yy"], p["joint.joint1.damping"])
    if t == "-":
        print(f"| {label} | {vals} | {delay(f)} | {cost(f)} | – | – | – | – | – |")
        continue
    m = summ(t)
    has_own = os.path.exists(f"{out}/eval/{t}_own/summary.json")
    owned = f"{win(summ(t + '_own'))} | {win(summ(t + '_own_long'))}" if has_own else "– | –"
    print(f"| {label} | {vals} | {delay(f)} | {cost(f)} | {win(m)} | {win(summ(t + '_long'))} | "
          "%.4g | %s |" % (m["validation_torque"]["rmse"], owned))
PY
