"""The layer guard itself: it must catch an upward include and a long function in a small tree."""
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(__file__), "check_layers.py")
TABLE = """<!-- layers:begin -->
| level | layer | paths |
|---|---|---|
| 0 | core | `sim/core/` |
| 4 | network | `sim/network/` |
| 6 | engine | `sim/engine/` |
<!-- layers:end -->
"""


def tree(tmp_path, files):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return subprocess.run([sys.executable, SCRIPT, "--root", str(tmp_path)], capture_output=True, text=True)


def test_an_upward_include_fails_with_file_line_and_both_layers(tmp_path):
    r = tree(tmp_path, {"docs/ARCHITECTURE.md": TABLE, "sim/engine/e.hpp": "#pragma once\n",
                        "sim/network/n.cpp": '#include "sim/core/c.hpp"\n#include "sim/engine/e.hpp"\n',
                        "sim/core/c.hpp": "#pragma once\n"})
    assert r.returncode == 1
    assert "sim/network/n.cpp:2: includes sim/engine/e.hpp: layer 4 (network) may not include layer 6 (engine)" in r.stdout


def test_the_allow_list_lets_a_known_violation_pass(tmp_path):
    r = tree(tmp_path, {"docs/ARCHITECTURE.md": TABLE, "sim/engine/e.hpp": "#pragma once\n",
                        "sim/network/n.cpp": '#include "sim/engine/e.hpp"\n',
                        "tests/architecture/allowed_upward_includes.txt": "sim/network/n.cpp -> sim/engine/e.hpp  # why\n"})
    assert r.returncode == 0, r.stdout


def test_a_long_function_fails_and_braces_in_strings_do_not_count(tmp_path):
    body = "".join(f"  x += {i};\n" for i in range(125))
    code = ('namespace a {\nstruct S { int f() const { return 1; } };\n'
            'int long_one(int x) {\n  const char* s = "}}}";\n  // }\n' + body + "  return x;\n}\n"
            "int short_one() {\n  return 2;\n}\n}  // namespace a\n")
    r = tree(tmp_path, {"docs/ARCHITECTURE.md": TABLE, "sim/core/c.cpp": code})
    assert r.returncode == 1
    assert "sim/core/c.cpp:3: long_one is 130 lines" in r.stdout
    assert "short_one" not in r.stdout
