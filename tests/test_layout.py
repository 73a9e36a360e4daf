"""The package layout holds: leaf packages stay leaves, stages import only downward, no generic
top-level names."""
from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: The stage packages of fuzzcomp/, bottom first, in data-flow order. A module may import its own
#: package and the packages before it, never one after it: a lower stage that needs a higher one is
#: handed a function (the ladder is handed ``check``, the minimiser its predicate).
STAGES = ["generators", "oracles", "base", "planted", "run", "attribute", "judge", "workers", "findings",
          "reduce", "render", "report", "campaign", "bench", "cli"]
#: modules of the package root itself: the version string, and ``python -m fuzzcomp`` (the CLI)
ROOT_MODULES = {"fuzzcomp": "base", "fuzzcomp.__main__": "cli"}


def stage_of(module: str) -> str | None:
    """The stage of a dotted fuzzcomp module name (None: not a fuzzcomp module)."""
    if module in ROOT_MODULES:
        return ROOT_MODULES[module]
    parts = module.split(".")
    if parts[0] != "fuzzcomp" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in STAGES else None


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT / "fuzzcomp").with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["fuzzcomp", *parts])


def _fuzzcomp_imports(path: pathlib.Path, name: str):
    """(line, imported module) for every fuzzcomp import of a module, inside functions too."""
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([mod] if mod else []))
            if mod == "fuzzcomp":  # from fuzzcomp import x: x is a stage package or __version__
                for a in node.names:
                    yield node.lineno, f"fuzzcomp.{a.name}" if a.name in STAGES else "fuzzcomp"
            else:
                yield node.lineno, mod


def upward_imports(root: pathlib.Path = ROOT) -> list[str]:
    bad = []
    for path in sorted((root / "fuzzcomp").rglob("*.py")):
        name = _module_name(path)
        own = stage_of(name)
        assert own is not None, f"{path.relative_to(root)} is in no declared stage: add its package to STAGES"
        for line, mod in _fuzzcomp_imports(path, name):
            to = stage_of(mod)
            if to is not None and STAGES.index(to) > STAGES.index(own):
                bad.append(f"{path.relative_to(root)}:{line} ({own}) imports {mod} ({to}), a later stage")
    return bad


def test_stages_import_only_downward():
    bad = upward_imports()
    assert not bad, "imports that run back up the stages:\n" + "\n".join(bad)


def test_every_stage_package_is_installed():
    text = (ROOT / "pyproject.toml").read_text()
    for pkg in STAGES:
        if pkg not in ("generators", "oracles"):
            assert f'"fuzzcomp.{pkg}"' in text, f"pyproject.toml does not list fuzzcomp.{pkg}"


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
    for rel in ("fuzzcomp/run/runtime.py", "oracles/fp64rule.py"):
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


def test_the_runtimes_pasted_layout_rule_agrees_with_the_one_rule():
    """``runtime.make_input`` keeps its own words for the layout rule (it is pasted into repro files
    and imports only torch); it must build the same views as ``fuzzcomp.base.layouts``."""
    import torch

    from fuzzcomp.base.layouts import LAYOUTS, base_shape, view_of
    from fuzzcomp.run.runtime import make_input
    for shape in ((3, 4), (2, 3, 5), (2, 3, 4, 5), (6,)):
        for layout in LAYOUTS:
            if layout == "transposed" and len(shape) < 2 or layout == "channels_last" and len(shape) != 4:
                continue
            got = make_input(shape, "float32", layout, seed=1)
            want = view_of(torch.empty(base_shape(shape, layout)), shape, layout)
            assert (got.shape, got.stride(), got.storage_offset(), got.untyped_storage().nbytes()) == \
                (want.shape, want.stride(), want.storage_offset(), want.untyped_storage().nbytes()), (shape, layout)
