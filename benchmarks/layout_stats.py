"""Print the import structure of fuzzcomp/ from the code's own imports (ast only, nothing is run).

    python benchmarks/layout_stats.py

Figures: import circles (strongly connected groups of modules, counting imports inside
functions too), imports that run back up (an import of a module on a higher floor, where
a module's floor is 1 + the highest floor it imports at module level), imports made inside
functions, the largest modules and the modules per package.
"""
from __future__ import annotations

import ast
import collections
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# setuptools' package-dir mapping: these folders install under fuzzcomp.
ROOTS = {"fuzzcomp": ROOT / "fuzzcomp", "fuzzcomp.generators": ROOT / "generators",
         "fuzzcomp.oracles": ROOT / "oracles"}


def modules() -> dict[str, pathlib.Path]:
    out = {}
    for pkg, folder in ROOTS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join([pkg, *parts])
            if pkg == "fuzzcomp" and parts and parts[0] in ("generators", "oracles"):
                continue
            out[name] = path
    return out


def imports(name: str, path: pathlib.Path, known: set[str]):
    """Yield (target module, inside a function?) for each fuzzcomp import of one module."""
    tree = ast.parse(path.read_text())
    is_pkg = path.name == "__init__.py"
    top = set(id(n) for n in tree.body)
    # an import under `if TYPE_CHECKING:` or `try:` at module level counts as top level
    for n in tree.body:
        for sub in ast.walk(n):
            if not isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                top.add(id(sub))
    inside_fn = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside_fn |= {id(s) for s in ast.walk(n) if s is not n}

    def resolve(mod: str) -> str | None:
        while mod and mod not in known:
            mod = mod.rpartition(".")[0]
        return mod or None

    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name if is_pkg else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    pkg = pkg.rpartition(".")[0]
                base = f"{pkg}.{base}" if base else pkg
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for t in targets:
            r = resolve(t)
            if r and r != name:
                yield r, id(node) in inside_fn


def main() -> None:
    mods = modules()
    known = set(mods)
    edges = collections.defaultdict(set)   # all imports
    top_edges = collections.defaultdict(set)
    inside = 0
    for name, path in mods.items():
        for t, in_fn in imports(name, path, known):
            edges[name].add(t)
            if in_fn:
                inside += 1
            else:
                top_edges[name].add(t)
    fz_inside = sum(1 for name, path in mods.items() if path.is_relative_to(ROOT / "fuzzcomp")
                    for node in ast.walk(ast.parse(path.read_text()))
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    for s in ast.walk(node) if s is not node and isinstance(s, (ast.Import, ast.ImportFrom)))

    # circles: Tarjan's strongly connected components over all imports
    index, low, stack, on, sccs = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v); on.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            sccs.append(comp)
    for v in mods:
        if v not in index:
            strong(v)
    circles = [sorted(c) for c in sccs if len(c) > 1]

    # floors: circles are condensed to one node; inside a circle, its members stand in the
    # order of their module-level imports, so the arrows that close the circle run back up.
    comp_of = {v: i for i, c in enumerate(sccs) for v in c}
    cfloor: dict[int, int] = {}

    def cf(i):
        if i not in cfloor:
            cfloor[i] = 1 + max((cf(comp_of[w]) for v in sccs[i] for w in edges[v]
                                 if comp_of[w] != i), default=0)
        return cfloor[i]
    inner: dict[str, int] = {}

    def fi(v, seen=()):
        if v not in inner:
            inner[v] = 1 + max((fi(w, seen + (v,)) for w in top_edges[v]
                                if comp_of[w] == comp_of[v] and w not in seen), default=0)
        return inner[v]
    floor = {v: (cf(comp_of[v]), fi(v)) for v in mods}
    up = sorted((a, b) for a in mods for b in edges[a] if floor[b] > floor[a])
    try:
        sys.path.insert(0, str(ROOT / "tests"))
        from test_layout import STAGES, stage_of
    except ImportError:
        STAGES = None
    if STAGES:
        against = sorted((a, b) for a in mods for b in edges[a]
                         if stage_of(b) is not None and stage_of(a) is not None
                         and STAGES.index(stage_of(b)) > STAGES.index(stage_of(a)))
        print(f"imports against the declared stage order: {len(against)}")
        for a, b in against:
            print(f"    {a} -> {b}")

    print(f"modules: {len(mods)}  lines: {sum(len(p.read_text().splitlines()) for p in mods.values())}")
    print(f"import circles: {len(circles)}")
    for c in circles:
        print("   ", " <-> ".join(c))
    print(f"imports that run back up (to a higher floor): {len(up)}")
    for a, b in up:
        print(f"    {a} -> {b}")
    print(f"imports inside functions in fuzzcomp/ (all, stdlib too): {fz_inside}")
    print(f"  of which import fuzzcomp modules: {inside}")
    sizes = sorted(((len(p.read_text().splitlines()), str(p.relative_to(ROOT))) for p in mods.values()), reverse=True)
    print("largest modules:")
    for n, p in sizes[:10]:
        print(f"    {n:5d}  {p}")
    print(f"modules over 500 lines: {sum(1 for n, _ in sizes if n > 500)}")
    per = collections.Counter(str(p.parent.relative_to(ROOT)) for p in mods.values())
    print("modules per package:")
    for pkg, n in sorted(per.items()):
        print(f"    {pkg:24s} {n}")


if __name__ == "__main__":
    main()
