#!/usr/bin/env bash
# Experiment 4: fit the three real datasets in ../shared/real-data with simid
# and compare with the authors' published parameters under the identical
# metric (same data, integrator and prediction window; the *_published.yaml
# configs run max_iterations 0 from the published values). Prints a Markdown
# table (see docs/real-data-results.md).
#
# Usage: scripts/check_real_data.sh [BUILD_DIR] [OUT_DIR]
#   defaults: build, out/real-data
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
OUT="${2:-$ROOT/out/real-data}"
SIMID="$BUILD/simid"
[[ -x "$SIMID" ]] || { echo "no simid in $BUILD (build it first)" >&2; exit 2; }
[[ -d "$ROOT/../shared/real-data" ]] || { echo "../shared/real-data not present" >&2; exit 3; }
mkdir -p "$OUT"
cd "$ROOT"

run() {  # tag config [--set ...]
  local tag=$1 cfg=$2; shift 2
  echo "== $tag: simid --config $cfg $*" >&2
  "$SIMID" --config "$cfg" -q --force --out "$OUT/$tag" "$@" >&2
}

run single          configs/simid_real_multiarm_single.yaml
run single_pub      configs/simid_real_multiarm_single_published.yaml
run single_unid     configs/simid_real_multiarm_single_unidentifiable.yaml
# Sensitivity to the prediction window (0.5 s): fit and published again.
run single_w500     configs/simid_real_multiarm_single.yaml --set estimate.residual.window=500
run single_pub_w500 configs/simid_real_multiarm_single_published.yaml --set estimate.residual.window=500
run double          configs/simid_real_multiarm_double.yaml
run double_pub      configs/simid_real_multiarm_double_published.yaml
run dfki            configs/simid_real_dfki.yaml
run dfki_pub        configs/simid_real_dfki_published.yaml
run dfki_pub_nooff  configs/simid_real_dfki_published.yaml --set params.joint.joint1.spring.stiffness=0
run dfki_nooff      configs/simid_real_dfki.yaml --set params.joint.joint1.spring.stiffness=0
run dfki_ss         configs/simid_real_dfki.yaml --set estimate.residual.type=single_shooting
run dfki_id         configs/simid_real_dfki.yaml --set estimate.residual.type=inverse_dynamics \
                    --set estimate.residual.filter_window=9
# The inverse-dynamics fit evaluated with the same 30-sample windows:
run dfki_id_eval    configs/simid_real_dfki_published.yaml --set "params_file=$OUT/dfki_id/params.json"

python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
rows = [
    ("multiarm single", "fit: I1, k1 (m1, a1 fixed)", "single"),
    ("multiarm single", "published", "single_pub"),
    ("multiarm single", "fit: m1, a1, I1, k1 (unidentifiable)", "single_unid"),
    ("multiarm single", "fit: I1, k1, 0.5 s window", "single_w500"),
    ("multiarm single", "published, 0.5 s window", "single_pub_w500"),
    ("multiarm double", "fit: a1, L1, I1, I2, k1 (m1, m2, a2, k2 fixed)", "double"),
    ("multiarm double", "published", "double_pub"),
    ("DFKI", "fit: m, armature, Fv, Fc; multiple shooting (offset fixed)", "dfki"),
    ("DFKI", "fit: same, single shooting", "dfki_ss"),
    ("DFKI", "published (with offset)", "dfki_pub"),
    ("DFKI", "published, no offset", "dfki_pub_nooff"),
    ("DFKI", "fit (multiple shooting), no offset", "dfki_nooff"),
    ("DFKI", "fit: inverse dynamics, evaluated like the others", "dfki_id_eval"),
]
print("| dataset | method | values | window | train RMSE(q) [rad] | validation RMSE(q) [rad] | fit time [s] | identifiable |")
print("|---|---|---|---|---|---|---|---|")
for ds, method, tag in rows:
    s = json.load(open(f"{out}/{tag}/summary.json"))
    m = s["metrics"]
    vals = ", ".join(f"{k.split('.',1)[1]}={v:.4g}" for k, v in m["parameters"].items())
    fit = s["timings"]["fit_s"] if tag not in ("dfki_id_eval",) else \
        json.load(open(f"{out}/dfki_id/summary.json"))["timings"]["fit_s"]
    print(f"| {ds} | {method} | {vals} | {m['prediction_window']} | {m['train_rmse_q']:.5f} | "
          f"{m.get('validation_rmse_q', float('nan')):.5f} | {fit:.1f} | {m['identifiable']} |")
PY
