#!/usr/bin/env python3
"""Compare a run's summary.json with a baseline; fail when a metric regresses.

Usage:
  scripts/check_regression.py SUMMARY BASELINE [-q]

SUMMARY is the summary.json a tool wrote (or its run directory). BASELINE is
a JSON file (examples: configs/regression/*.json):

  {
    "description": "free text (optional)",
    "config": "configs/... (optional, informational)",
    "checks": {
      "status":                      {"value": "ok"},
      "metrics.max_relative_error":  {"max": 1e-6},
      "metrics.validation_rmse_q":   {"max": 1e-5},
      "metrics.basin_hopping.rounds": {"min": 1, "max": 8},
      "metrics.parameters.link.link1.length": {"value": 3.0, "rel_tol": 1e-6},
      "metrics.cost":                {"value": 0.0, "abs_tol": 1e-8},
      "timings.fit_s":               {"max": 60, "required": false}
    }
  }

Metric paths are dotted paths into the summary. Keys that themselves contain
dots (parameter names like "link.link1.length") are resolved by taking, at
each level, the longest run of path components that is a key there.

Criteria (any combination in one check; each becomes one row of the table):
  "max": M            actual <= M
  "min": M            actual >= M
  "value": V          without tolerances: actual == V (numbers, strings, booleans)
  "value": V, "rel_tol": R and/or "abs_tol": A
                      |actual - V| <= max(A, R * |V|)   (missing tolerance = 0)
  "required": false   a metric absent from the summary is SKIPped instead of FAILing
                      (a missing required metric is a regression)

Numeric criteria FAIL on non-numeric actual values, including JSON null
(how NaN and infinities are written).

Prints one table row per criterion (PASS / FAIL / SKIP).
Exit codes: 0 every check passed, 1 at least one regressed,
            2 malformed input (unreadable or invalid JSON, unknown criterion,
              non-numeric bound, empty check, ...).
Standard library only (any python3).
"""

import argparse
import json
import math
import os
import sys

KNOWN_KEYS = {"max", "min", "value", "rel_tol", "abs_tol", "required", "note"}
MISSING = object()


class Malformed(Exception):
    pass


def load_json(path, what):
    if os.path.isdir(path):
        path = os.path.join(path, "summary.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (IOError, OSError) as e:
        raise Malformed("{} {}: cannot read: {}".format(what, path, e.strerror or e))
    except ValueError as e:
        raise Malformed("{} {}: invalid JSON: {}".format(what, path, e))


def resolve(obj, path):
    """Value at a dotted path; components may span dotted keys (longest match)."""
    parts = path.split(".")
    i = 0
    while i < len(parts):
        if not isinstance(obj, dict):
            return MISSING
        for j in range(len(parts), i, -1):
            key = ".".join(parts[i:j])
            if key in obj:
                obj = obj[key]
                i = j
                break
        else:
            return MISSING
    return obj


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fmt(v):
    if v is MISSING:
        return "(missing)"
    if is_number(v):
        return "{:.10g}".format(v)
    return json.dumps(v)


def validate(name, spec):
    if not isinstance(spec, dict):
        raise Malformed("check '{}': expected an object like {{\"max\": 1e-6}}, got {}".format(name, json.dumps(spec)))
    unknown = sorted(set(spec) - KNOWN_KEYS)
    if unknown:
        raise Malformed("check '{}': unknown key(s) {} (known: {})".format(
            name, ", ".join(unknown), ", ".join(sorted(KNOWN_KEYS))))
    if not any(k in spec for k in ("max", "min", "value")):
        raise Malformed("check '{}': needs at least one of max, min, value".format(name))
    for k in ("max", "min", "rel_tol", "abs_tol"):
        if k in spec and not (is_number(spec[k]) and math.isfinite(spec[k])):
            raise Malformed("check '{}': '{}' must be a finite number, got {}".format(name, k, json.dumps(spec[k])))
    for k in ("rel_tol", "abs_tol"):
        if k in spec and spec[k] < 0:
            raise Malformed("check '{}': '{}' must be >= 0".format(name, k))
    has_tol = "rel_tol" in spec or "abs_tol" in spec
    if has_tol and "value" not in spec:
        raise Malformed("check '{}': rel_tol/abs_tol need a 'value'".format(name))
    if has_tol and not is_number(spec["value"]):
        raise Malformed("check '{}': a toleranced 'value' must be a number".format(name))
    if "required" in spec and not isinstance(spec["required"], bool):
        raise Malformed("check '{}': 'required' must be true or false".format(name))


def evaluate(name, spec, actual):
    """Rows (criterion, result) for one check."""
    rows = []
    if actual is MISSING:
        verdict = "FAIL" if spec.get("required", True) else "SKIP"
        criteria = [k for k in ("value", "min", "max") if k in spec]
        return [("{} (metric missing)".format("/".join(criteria)), verdict)]
    if "value" in spec:
        v = spec["value"]
        if "rel_tol" in spec or "abs_tol" in spec:
            tol = max(spec.get("abs_tol", 0.0), spec.get("rel_tol", 0.0) * abs(v))
            ok = is_number(actual) and math.isfinite(actual) and abs(actual - v) <= tol
            rows.append(("== {} ± {}".format(fmt(v), fmt(tol)), "PASS" if ok else "FAIL"))
        else:
            ok = (actual == v) if not (is_number(actual) and is_number(v)) else float(actual) == float(v)
            if isinstance(actual, bool) != isinstance(v, bool):
                ok = False
            rows.append(("== {}".format(fmt(v)), "PASS" if ok else "FAIL"))
    if "min" in spec:
        ok = is_number(actual) and not math.isnan(actual) and actual >= spec["min"]
        rows.append((">= {}".format(fmt(spec["min"])), "PASS" if ok else "FAIL"))
    if "max" in spec:
        ok = is_number(actual) and not math.isnan(actual) and actual <= spec["max"]
        rows.append(("<= {}".format(fmt(spec["max"])), "PASS" if ok else "FAIL"))
    return rows


def print_table(rows):
    header = ("metric", "actual", "criterion", "result")
    widths = [max(len(header[c]), *(len(r[c]) for r in rows)) if rows else len(header[c]) for c in range(4)]
    line = "  ".join("{:<%d}" % w for w in widths)
    print(line.format(*header))
    print(line.format(*("-" * w for w in widths)))
    for r in rows:
        print(line.format(*r))


def main(argv):
    parser = argparse.ArgumentParser(
        description="Compare a summary.json with a regression baseline (exit 1 on regression, 2 on bad input).",
        epilog="The baseline format is described at the head of this file.")
    parser.add_argument("summary", help="summary.json (or the run directory holding it)")
    parser.add_argument("baseline", help="baseline JSON, e.g. configs/regression/double_pendulum_lengths.json")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only failing rows and the verdict")
    args = parser.parse_args(argv)
    try:
        baseline = load_json(args.baseline, "baseline")
        if not isinstance(baseline, dict) or not isinstance(baseline.get("checks"), dict):
            raise Malformed("baseline {}: expected an object with a \"checks\" object".format(args.baseline))
        if not baseline["checks"]:
            raise Malformed("baseline {}: \"checks\" is empty".format(args.baseline))
        for name, spec in baseline["checks"].items():
            validate(name, spec)
        summary = load_json(args.summary, "summary")
        if not isinstance(summary, dict):
            raise Malformed("summary {}: top level is not an object".format(args.summary))
    except Malformed as e:
        sys.stderr.write("check_regression: {}\n".format(e))
        return 2

    rows = []
    for name, spec in baseline["checks"].items():
        actual = resolve(summary, name)
        for criterion, result in evaluate(name, spec, actual):
            rows.append((name, fmt(actual), criterion, result))
    failed = [r for r in rows if r[3] == "FAIL"]
    if not args.quiet or failed:
        print_table(failed if args.quiet else rows)
    n_pass = sum(1 for r in rows if r[3] == "PASS")
    n_skip = sum(1 for r in rows if r[3] == "SKIP")
    verdict = "REGRESSION" if failed else "OK"
    print("\n{}: {} passed, {} failed, {} skipped ({} vs {})".format(
        verdict, n_pass, len(failed), n_skip, args.summary, args.baseline))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
