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
# overrides), one fit at a time: about 4.5 min wall on the shared 2-core
# machine (load 4.5-5); the longest fit, the double arm's multiple shooting, 32 s.
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
    x = v["value"]
    s = abs(x) if abs(x) > 1e-12 else 1.0
    b = ""
    if bounds:
        fmt = lambda y: ".inf" if y == float("inf") else "-.inf" if y == -float("inf") else "%.17g" % y
        b = ", bounds: [%s, %s]" % (fmt(v["lower"]), fmt(v["upper"]))
    items.append("{name: %s, initial: %.17g, scale: %.6g%s}" % (name, x, s, b))
print("estimate.parameters=[" + ", ".join(items) + "]")
PY
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
evs() { ev "$1" $SP "$2" "${SINGLE_DATA[@]}"; ev "$1_long" $SP "$2" "${SINGLE_DATA[@]}" "${LONG1[@]}"; }
evs single_pub -
row single "published (Kaheman et al.)" - single_pub single_pub_long
fit single configs/simid_real_multiarm_single.yaml "${SINGLE_DATA[@]}"
evs single single
row single "ours: single shooting, 0.3 s windows (shipped config)" single single single_long
fit single_w1 configs/simid_real_multiarm_single.yaml "${SINGLE_DATA[@]}" --set estimate.residual.window=1000
evs single_w1 single_w1
row single "ours: single shooting, 1 s windows" single_w1 single_w1 single_w1_long
fit single_ms configs/simid_real_multiarm_single.yaml "${SINGLE_DATA[@]}" \
    --set estimate.residual.type=multiple_shooting --set estimate.residual.stride=0 --set estimate.solver.max_iterations=30
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
    --set estimate.residual.type=multiple_shooting --set estimate.residual.stride=0 --set estimate.solver.max_iterations=20
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
