#!/usr/bin/env python3
"""Fails when a layer of lib/neuralsim includes a layer it does not link,
when a numeric layer includes YAML, JSON, CLI or logging headers, or when
the library includes the apps (docs/architecture.md gives the order).

The layer graph is CMake's: each neuralsim_layer() call in CMakeLists.txt
names the layers it links, and configuring writes BUILD/layers.json. A layer
may include the layers it links, directly or through them.

Usage: scripts/check_layers.py SOURCE_DIR BUILD_DIR/layers.json   (ctest runs it as `layers`)
"""
import json
import os
import re
import sys

# Headers a numeric layer must not include: parsing, serialization, CLI and
# logging belong to io/, experiment/, tools/ and the apps.
FORBIDDEN_IN_NUMERIC = re.compile(r"#include\s*[<\"](yaml-cpp/|nlohmann/|CLI/|spdlog/|H5Cpp|hdf5)")
INCLUDE = re.compile(r"#include\s*[<\"]neuralsim/([a-z_]+)/")


def reachable(graph, layer):
    """Every layer `layer` links, directly or transitively."""
    seen, stack = set(), list(graph[layer]["links"])
    while stack:
        d = stack.pop()
        if d in seen or d not in graph:
            continue
        seen.add(d)
        stack.extend(graph[d]["links"])
    return seen


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    root, graph_file = sys.argv[1], sys.argv[2]
    with open(graph_file, encoding="utf-8") as f:
        spec = json.load(f)
    graph = spec["layers"]
    app_include = re.compile(r"#include\s*\"(" + "|".join(map(re.escape, spec["app_directories"])) + r")/")
    lib = os.path.join(root, "lib", "neuralsim")
    problems = []
    for layer in graph:
        for dep in graph[layer]["links"]:
            if dep not in graph:
                problems.append(f"CMakeLists.txt: layer '{layer}' links '{dep}', which is not a layer")
    layers = sorted(d for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d)))
    for layer in layers:
        if layer not in graph:
            problems.append(f"lib/neuralsim/{layer}/: not a layer (add a neuralsim_layer() call to CMakeLists.txt "
                            "and a row to docs/architecture.md)")
            continue
        allowed = reachable(graph, layer)
        numeric = graph[layer]["kind"] == "numeric"
        for dirpath, _, files in os.walk(os.path.join(lib, layer)):
            for name in sorted(files):
                if not name.endswith((".hpp", ".hxx", ".cpp", ".txx", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.search(line)
                        if m and m.group(1) != layer and m.group(1) not in allowed:
                            problems.append(f"{rel}:{number}: layer '{layer}' includes '{m.group(1)}', which it "
                                            f"does not link (CMakeLists.txt): {line.strip()}")
                        if numeric and FORBIDDEN_IN_NUMERIC.search(line):
                            problems.append(f"{rel}:{number}: numeric layer '{layer}' includes a parsing, "
                                            f"serialization, CLI or logging header: {line.strip()}")
                        if app_include.search(line):
                            problems.append(f"{rel}:{number}: the library includes the apps: {line.strip()}")
    for p in problems:
        print(p)
    print(f"check_layers: {len(layers)} layers, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
