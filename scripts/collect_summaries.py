#!/usr/bin/env python3
"""Collect every summary.json under a directory into one CSV table.

Usage:
  scripts/collect_summaries.py DIR [-o OUT.csv]

Walks DIR recursively (sorted, so the row order is stable) and writes one row
per run directory: every directory holding a summary.json, plus directories
that scripts/sweep_simid.sh created for a run that wrote no summary (it
leaves an `exit_code` file there; such rows get status "no-summary").

Columns:
  run_dir            the run directory, relative to DIR
  config             the config file the run used (summary "config_file")
  seed               --seed
  overrides          the --set overrides, joined with " " (key=value ...)
  exit_code          from the `exit_code` file sweep_simid.sh writes (empty otherwise)
  status             ok | error | interrupted | diverged | unreadable | no-summary
  cost               metrics.cost (1/2 sum r^2 at the best fit)
  train_rmse_q       metrics.train_rmse_q
  validation_rmse_q  metrics.validation_rmse_q
  max_relative_error metrics.max_relative_error (configs with estimate.ground_truth)
  stop_reason        metrics.basin_hopping.stop_reason
  rounds             metrics.basin_hopping.rounds
  fit_s, total_s     timings.fit_s, timings.total_s
  <parameter name>   one column per fitted parameter (metrics.parameters), in
                     order of first appearance across the runs

A value missing from a summary (or non-finite: JSON null) is an empty cell.
Writes to stdout unless -o is given. Standard library only (any python3).
Exit codes: 0 ok, 2 usage error (DIR missing) or no run found.
"""

import argparse
import csv
import json
import os
import sys

FIXED_COLUMNS = [
    "run_dir", "config", "seed", "overrides", "exit_code", "status", "cost", "train_rmse_q",
    "validation_rmse_q", "max_relative_error", "stop_reason", "rounds", "fit_s", "total_s",
]

METRIC_PATHS = {
    "cost": ("metrics", "cost"),
    "train_rmse_q": ("metrics", "train_rmse_q"),
    "validation_rmse_q": ("metrics", "validation_rmse_q"),
    "max_relative_error": ("metrics", "max_relative_error"),
    "stop_reason": ("metrics", "basin_hopping", "stop_reason"),
    "rounds": ("metrics", "basin_hopping", "rounds"),
    "fit_s": ("timings", "fit_s"),
    "total_s": ("timings", "total_s"),
}


def lookup(obj, path):
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


def cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # shortest round-trip representation
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def read_exit_code(run_dir):
    path = os.path.join(run_dir, "exit_code")
    try:
        with open(path) as f:
            return f.read().strip()
    except (IOError, OSError):
        return ""


def find_runs(root):
    """Run directories under root: those with summary.json or an exit_code file."""
    runs = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        if "summary.json" in filenames or "exit_code" in filenames:
            runs.append(dirpath)
    return sorted(runs)


def collect(root):
    rows = []
    param_names = []
    for run_dir in find_runs(root):
        rel = os.path.relpath(run_dir, root)
        row = {"run_dir": rel, "exit_code": read_exit_code(run_dir)}
        summary_path = os.path.join(run_dir, "summary.json")
        if not os.path.exists(summary_path):
            row["status"] = "no-summary"
            rows.append(row)
            continue
        try:
            with open(summary_path) as f:
                summary = json.load(f)
            if not isinstance(summary, dict):
                raise ValueError("top level is not an object")
        except (IOError, OSError, ValueError) as e:
            sys.stderr.write("collect_summaries: {}: unreadable: {}\n".format(summary_path, e))
            row["status"] = "unreadable"
            rows.append(row)
            continue
        row["config"] = summary.get("config_file")
        row["seed"] = summary.get("seed")
        overrides = summary.get("overrides")
        row["overrides"] = " ".join(overrides) if isinstance(overrides, list) else overrides
        row["status"] = summary.get("status")
        for column, path in METRIC_PATHS.items():
            row[column] = lookup(summary, path)
        params = lookup(summary, ("metrics", "parameters"))
        if isinstance(params, dict):
            for name, value in params.items():
                if name not in param_names:
                    param_names.append(name)
                row["param:" + name] = value
        rows.append(row)
    return rows, param_names


def main(argv):
    parser = argparse.ArgumentParser(
        description="Collect every summary.json under DIR into one CSV table (one row per run).",
        epilog="See the module docstring (head of this file) for the columns.")
    parser.add_argument("dir", help="directory to search recursively for summary.json files")
    parser.add_argument("-o", "--output", help="CSV file to write (default: stdout)")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.dir):
        sys.stderr.write("collect_summaries: {}: not a directory\n".format(args.dir))
        return 2
    rows, param_names = collect(args.dir)
    if not rows:
        sys.stderr.write("collect_summaries: no summary.json under {}\n".format(args.dir))
        return 2
    # Parameter columns are the bare names (the fixed columns never contain a dot).
    header = FIXED_COLUMNS + [n for n in param_names if n not in FIXED_COLUMNS]
    out = open(args.output, "w", newline="") if args.output else sys.stdout
    try:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            line = [cell(row.get(c)) for c in FIXED_COLUMNS]
            line += [cell(row.get("param:" + n)) for n in param_names if n not in FIXED_COLUMNS]
            writer.writerow(line)
    finally:
        if args.output:
            out.close()
    if args.output:
        sys.stderr.write("collect_summaries: {} runs -> {}\n".format(len(rows), args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
