#!/usr/bin/env python3
"""The layer guard (issue 15): every #include must point down the layer table of docs/ARCHITECTURE.md,
and no function in sim/, traces/ or models/ may be longer than 120 lines.

    check_layers.py [--root DIR]            # both checks (what CTest runs)
    check_layers.py --layers | --lengths    # one of them
    check_layers.py --print-table           # each source folder and file with its layer

The table is read from docs/ARCHITECTURE.md, between the markers `<!-- layers:begin -->` and
`<!-- layers:end -->`: rows `| level | layer | paths |`, paths in backquotes, a folder (ending in /) or a
file (a trailing * matches any suffix, e.g. `traces/src/synthesis.*`); the longest matching path wins.
A file may include its own level and the levels below. Known violations that another change removes are
listed, one `FILE -> INCLUDED` per line, in tests/architecture/allowed_upward_includes.txt; functions
that must stay long are listed with their reason in tests/architecture/long_functions.txt.
"""
import argparse
import fnmatch
import os
import re
import sys

SOURCE_DIRS = ("sim", "traces", "models", "python/src")
LENGTH_DIRS = ("sim", "traces", "models")
MAX_FUNCTION_LINES = 120
EXTS = (".cpp", ".hpp", ".h", ".cc")


def read_table(root):
    path = os.path.join(root, "docs", "ARCHITECTURE.md")
    text = open(path, encoding="utf-8").read()
    m = re.search(r"<!-- layers:begin -->(.*?)<!-- layers:end -->", text, re.S)
    if not m:
        sys.exit(f"{path}: no layer table between <!-- layers:begin --> and <!-- layers:end -->")
    rules = []  # (pattern, level, layer name)
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].isdigit():
            continue
        level, name = int(cells[0]), cells[1]
        for p in re.findall(r"`([^`]+)`", cells[2]):
            rules.append((p, level, name))
    if not rules:
        sys.exit(f"{path}: the layer table has no rows")
    return rules


def layer_of(rel, rules):
    best = None
    for pattern, level, name in rules:
        if pattern.endswith("/"):
            ok = rel.startswith(pattern)
        else:
            ok = fnmatch.fnmatchcase(rel, pattern)
        if ok and (best is None or len(pattern) > len(best[0])):
            best = (pattern, level, name)
    return None if best is None else (best[1], best[2])


def source_files(root, dirs):
    for d in dirs:
        for base, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if f.endswith(EXTS):
                    yield os.path.relpath(os.path.join(base, f), root).replace(os.sep, "/")


def read_list(path):
    if not os.path.exists(path):
        return {}
    out = {}
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            out[line] = n
    return out


def check_layers(root):
    rules = read_table(root)
    allowed = read_list(os.path.join(root, "tests", "architecture", "allowed_upward_includes.txt"))
    used, errors, unmapped = set(), [], []
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for rel in source_files(root, SOURCE_DIRS):
        mine = layer_of(rel, rules)
        if mine is None:
            unmapped.append(rel)
            continue
        for n, line in enumerate(open(os.path.join(root, rel), encoding="utf-8"), 1):
            m = include.match(line)
            if not m:
                continue
            target = m.group(1)
            theirs = layer_of(target, rules)
            if theirs is None:
                if os.path.exists(os.path.join(root, target)):
                    unmapped.append(target)
                continue
            if theirs[0] > mine[0]:
                key = f"{rel} -> {target}"
                if key in allowed:
                    used.add(key)
                    continue
                errors.append(f"{rel}:{n}: includes {target}: layer {mine[0]} ({mine[1]}) may not include "
                              f"layer {theirs[0]} ({theirs[1]}), which is above it")
    for u in sorted(set(unmapped)):
        errors.append(f"{u}: not in the layer table of docs/ARCHITECTURE.md (add its folder or file)")
    for key in sorted(set(allowed) - used):
        print(f"note: allowed_upward_includes.txt lists '{key}', which no longer occurs: remove it")
    for e in errors:
        print(e)
    print(f"layers: {len(errors)} problem(s); {len(used)} known upward include(s) still allowed")
    return not errors


def strip_code(text):
    """Comments and string/char literals blanked out (newlines kept), so braces inside them do not count."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(c); i += 1; continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else text[i:j]); i = j
        else:
            out.append(c); i += 1
    return "".join(out)


NOT_A_FUNCTION = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$|=\s*$|^\s*$")


def long_functions(rel, text, limit):
    """(name, first line, lines) of each top-level function body longer than `limit` lines: a brace-counting
    scan. A function is a `{` whose preceding text (since the last `;`, `{` or `}`) ends a parameter list;
    lambdas and blocks inside it count towards it; class bodies are entered so member functions count."""
    code = strip_code(text)
    found, stack, last_stmt = [], [], 0  # stack: ("fn"|"scope"|"block", start line, name)
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            head = code[last_stmt:i]
            in_fn = any(kind == "fn" for kind, _, _ in stack)
            if in_fn:
                stack.append(("block", line, ""))
            elif NOT_A_FUNCTION.search(head.strip()) or ")" not in head:
                stack.append(("scope", line, ""))
            else:
                sig = " ".join(head.split())
                m = re.search(r"([~\w:<>]+)\s*\(", sig)
                first = last_stmt + len(head) - len(head.lstrip())  # where the signature starts
                start = code.count("\n", 0, first) + 1
                stack.append(("fn", start, m.group(1) if m else sig[:40]))
            last_stmt = i + 1
        elif c == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "fn" and line - start + 1 > limit:
                    found.append((name, start, line - start + 1))
            last_stmt = i + 1
        elif c == ";":
            last_stmt = i + 1
    return found


def check_lengths(root):
    allowed = read_list(os.path.join(root, "tests", "architecture", "long_functions.txt"))
    used, errors = set(), []
    for rel in source_files(root, LENGTH_DIRS):
        for name, start, n in long_functions(rel, open(os.path.join(root, rel), encoding="utf-8").read(), MAX_FUNCTION_LINES):
            key = f"{rel} {name}"
            if key in allowed:
                used.add(key)
                print(f"{rel}:{start}: {name} is {n} lines (allowed: see long_functions.txt)")
                continue
            errors.append(f"{rel}:{start}: {name} is {n} lines, over {MAX_FUNCTION_LINES}: split it into named pieces")
    for key in sorted(set(allowed) - used):
        print(f"note: long_functions.txt lists '{key}', which is no longer over {MAX_FUNCTION_LINES} lines: remove it")
    for e in errors:
        print(e)
    print(f"function length: {len(errors)} problem(s); {len(used)} long function(s) allowed")
    return not errors


def print_table(root):
    rules = read_table(root)
    for rel in source_files(root, SOURCE_DIRS):
        lay = layer_of(rel, rules)
        print(f"{lay[0] if lay else '?':>2} {lay[1] if lay else 'UNMAPPED':28} {rel}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..")))
    ap.add_argument("--layers", action="store_true")
    ap.add_argument("--lengths", action="store_true")
    ap.add_argument("--print-table", action="store_true")
    a = ap.parse_args()
    if a.print_table:
        print_table(a.root)
        return 0
    both = not (a.layers or a.lengths)
    ok = True
    if a.layers or both:
        ok &= check_layers(a.root)
    if a.lengths or both:
        ok &= check_lengths(a.root)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
