#!/usr/bin/env python3
"""Prints the longest functions in apps/ and fails when the apps do library
work again: a function longer than --max-function lines (default 120) or a
*_job.cpp longer than --max-job lines (default 200). The apps only parse,
call the library and serialize (docs/architecture.md).

Usage: scripts/function_sizes.py [SOURCE_DIR] [--top N] [--max-function L] [--max-job L]
(ctest runs it as `app_sizes`.)

A function is a brace block at namespace or class scope whose head holds a
parameter list; lambdas and blocks inside it count towards it. Comments,
strings and character literals are skipped when matching braces.
"""
import argparse
import os
import re
import sys


def strip_code(text):
    """The text with comments, strings and character literals blanked
    (newlines kept, so line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (j + 1 - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, last line) of every function defined at namespace or class scope."""
    code = strip_code(open(path, encoding="utf-8").read())
    found, stack = [], []  # stack of (kind, name, start line)
    head_start = 0
    for i, c in enumerate(code):
        if c in ";":
            head_start = i + 1
        elif c == "{":
            head = code[head_start:i]
            in_function = any(kind == "function" for kind, _, _ in stack)
            if in_function:
                kind = "block"
            elif re.search(r"\bnamespace\b", head) or re.search(r"\bextern\s*$", head.strip()):
                kind = "namespace"
            elif re.search(r"\b(class|struct|union|enum)\b[^(]*$", head):
                kind = "type"
            elif "(" in head:
                kind = "function"
            else:
                kind = "block"
            name = ""
            if kind == "function":
                m = re.search(r"([~\w:<>]+)\s*\(", head)
                name = m.group(1) if m else "?"
            start = code.count("\n", 0, head_start + len(head) - len(head.lstrip())) + 1
            stack.append((kind, name, start))
            head_start = i + 1
        elif c == "}":
            if stack:
                kind, name, start = stack.pop()
                if kind == "function":
                    found.append((name, start, code.count("\n", 0, i) + 1))
            head_start = i + 1
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--max-function", type=int, default=120)
    ap.add_argument("--max-job", type=int, default=200)
    args = ap.parse_args()
    apps = os.path.join(args.source, "apps")
    rows, problems = [], []
    for dirpath, _, files in os.walk(apps):
        for f in sorted(files):
            if not f.endswith((".cpp", ".hpp")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, args.source)
            lines = open(path, encoding="utf-8").read().count("\n")
            if f.endswith("_job.cpp") and lines > args.max_job:
                problems.append(f"{rel}: {lines} lines, more than {args.max_job} for a job file")
            for name, first, last in functions(path):
                length = last - first + 1
                rows.append((length, rel, first, name))
                if length > args.max_function:
                    problems.append(f"{rel}:{first}: {name} is {length} lines, more than {args.max_function}")
    rows.sort(reverse=True)
    print(f"longest functions in apps/ (limit {args.max_function} lines; job files {args.max_job}):")
    for length, rel, first, name in rows[: args.top]:
        print(f"  {length:4d}  {rel}:{first}  {name}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
