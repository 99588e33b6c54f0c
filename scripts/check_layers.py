#!/usr/bin/env python3
"""Fails when a layer of lib/neuralsim includes a layer above it, when a
numeric layer includes YAML, JSON, CLI or logging headers, or when the
library includes the app layer (docs/architecture.md gives the order).

Usage: scripts/check_layers.py [SOURCE_DIR]   (ctest runs it as `layers`)
"""
import os
import re
import sys

# Each layer and the layers it may include (besides itself).
NUMERIC = ["core", "spatial", "model", "dynamics", "step", "contact", "nn", "grad", "augment", "parameters",
           "control", "estimate", "train"]
ALLOWED = {
    "core": [],
    "spatial": ["core"],
    "model": ["core", "spatial"],
    "dynamics": ["core", "spatial", "model"],
    "step": ["core", "spatial", "model", "dynamics"],
    "contact": ["core", "spatial", "model", "dynamics", "step"],
    "nn": ["core"],
    "grad": ["core", "spatial", "model", "dynamics", "step", "contact", "nn"],
    "augment": ["core", "spatial", "model", "dynamics", "step", "contact", "nn", "grad"],
    "parameters": ["core", "spatial", "model", "dynamics", "step", "contact", "nn", "grad", "augment"],
    "control": ["core", "spatial", "model", "dynamics", "step", "contact", "nn", "grad", "augment", "parameters"],
    "estimate": ["core", "spatial", "model", "dynamics", "step", "contact", "nn", "grad", "augment", "parameters"],
    "train": ["core", "spatial", "model", "dynamics", "step", "contact", "nn", "grad", "augment", "parameters"],
    "io": ["core", "spatial", "model", "nn"],
    "experiment": NUMERIC + ["io"],
}
# Headers a numeric layer must not include: parsing, serialization, CLI and
# logging belong to io/, experiment/ and the apps.
FORBIDDEN_IN_NUMERIC = re.compile(r"#include\s*[<\"](yaml-cpp/|nlohmann/|CLI/|spdlog/|H5Cpp|hdf5)")
INCLUDE = re.compile(r"#include\s*[<\"]neuralsim/([a-z_]+)/")
APP_INCLUDE = re.compile(r"#include\s*\"(common|rollout|simid|train_augment|distill_mpc|discover|neuralsim_import)/")


def main() -> int:
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    lib = os.path.join(root, "lib", "neuralsim")
    problems = []
    layers = sorted(d for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d)))
    for layer in layers:
        if layer not in ALLOWED:
            problems.append(f"lib/neuralsim/{layer}/: not a known layer (add it to scripts/check_layers.py "
                            "and docs/architecture.md)")
            continue
        for dirpath, _, files in os.walk(os.path.join(lib, layer)):
            for name in sorted(files):
                if not name.endswith((".hpp", ".cpp", ".txx", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.search(line)
                        if m and m.group(1) != layer and m.group(1) not in ALLOWED[layer]:
                            problems.append(f"{rel}:{number}: layer '{layer}' includes the higher layer "
                                            f"'{m.group(1)}': {line.strip()}")
                        if layer in NUMERIC and FORBIDDEN_IN_NUMERIC.search(line):
                            problems.append(f"{rel}:{number}: numeric layer '{layer}' includes a parsing, "
                                            f"serialization, CLI or logging header: {line.strip()}")
                        if APP_INCLUDE.search(line):
                            problems.append(f"{rel}:{number}: the library includes the app layer: {line.strip()}")
    for p in problems:
        print(p)
    print(f"check_layers: {len(layers)} layers, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
