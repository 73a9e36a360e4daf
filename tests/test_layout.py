"""The package layout holds: leaf packages stay leaves, no generic top-level names."""
from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_leaf_packages_never_import_fuzzcomp_or_each_other():
    for leaf, other in (("generators", "oracles"), ("oracles", "generators")):
        for path in (ROOT / leaf).rglob("*.py"):
            bad = {n for n in _imports(path)
                   if n.split(".")[0] in ("fuzzcomp", other) or n.startswith(f"fuzzcomp.{other}")}
            assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_self_contained_modules_import_only_torch_and_stdlib():
    allowed = {"torch", "math", "collections", "contextlib", "traceback"}
    for rel in ("fuzzcomp/runtime.py", "oracles/fp64rule.py"):
        mods = {n.split(".")[0] for n in _imports(ROOT / rel)}
        assert mods <= allowed, f"{rel} imports {sorted(mods - allowed)}: it is pasted into repro files"


def test_install_does_not_squat_generic_names(tmp_path):
    code = ("import importlib.util, sys; "
            "print(importlib.util.find_spec('generators'), importlib.util.find_spec('oracles'), "
            "importlib.util.find_spec('fuzzcomp.generators') is not None, "
            "importlib.util.find_spec('fuzzcomp.oracles') is not None)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["None", "None", "True", "True"], out
