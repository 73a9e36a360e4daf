"""Dead code in a short repro's function: what the minimiser and the generator's structures leave.

Contract: ``prune(src, keep_inputs)`` returns the source with, repeatedly until nothing changes:
loops over ``range(0)`` and values nothing reads (in any block: function bodies, loops,
branches) dropped, unless computing them has a side effect (an in-place op, ``out=``, a random
draw); statements after a ``return`` dropped; a loop over a literal tuple whose variable nobody
reads written ``for _ in range(n)``; an input returned untouched beside other outputs dropped from
the return (``keep_inputs`` keeps it: an aliasing or mutation check reads it); top-level helper
functions nothing calls dropped. ``_RANDOM`` matches the ops that draw random numbers.
"""
from __future__ import annotations

import ast
import re

_RANDOM = re.compile(r"\b(rand|randn|randint|randperm|rand_like|randn_like|randint_like|dropout\w*|"
                     r"bernoulli_?|multinomial|normal_|uniform_|rrelu_?|exponential_|geometric_|"
                     r"cauchy_|log_normal_|random_)\b")


def _bodies(tree):
    """Every statement list of every function: bodies of loops, branches and with blocks too."""
    for f in ast.walk(tree):
        if isinstance(f, ast.FunctionDef):
            for node in ast.walk(f):
                for name in ("body", "orelse"):
                    body = getattr(node, name, None)
                    if isinstance(body, list) and body and isinstance(body[0], ast.stmt) \
                            and not isinstance(node, ast.ClassDef):
                        yield f, node, body


def _tidy(src: str, tree, keep_inputs: bool) -> str | None:
    """One rewrite of dead code the generator's structures leave (None: nothing to do): a
    statement after a ``return``; a loop over a literal tuple whose variable nobody reads (it
    becomes ``for _ in range(n)``); an input ``fn`` returns untouched beside other outputs
    (unless ``keep_inputs``: an aliasing or mutation check needs it)."""
    lines = src.splitlines()
    for _f, _node, body in _bodies(tree):
        for i, st in enumerate(body[:-1]):
            if isinstance(st, ast.Return):
                nxt, last = body[i + 1], body[-1]
                del lines[nxt.lineno - 1:last.end_lineno]
                return "\n".join(lines) + "\n"
    reads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for n in ast.walk(tree):
        if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and n.target.id not in reads \
                and n.target.id != "_" and isinstance(n.iter, ast.Tuple) \
                and all(isinstance(e, (ast.Name, ast.Constant)) for e in n.iter.elts):
            line = lines[n.lineno - 1]
            head = f"for _ in range({len(n.iter.elts)}):"
            pad = line[:len(line) - len(line.lstrip())]
            if line.rstrip().endswith(":") and n.body[0].lineno > n.lineno:
                lines[n.lineno - 1] = pad + head
                return "\n".join(lines) + "\n"
    if keep_inputs:
        return None
    fn = next((f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "fn"), None)
    if fn is None:
        return None
    params = {a.arg for a in fn.args.args}
    touched = {t.id for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.For))
               for t in ast.walk(n.targets[0] if isinstance(n, ast.Assign) else n.target)
               if isinstance(t, ast.Name)}
    seg = ast.get_source_segment
    for n in ast.walk(fn):
        if isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple) and len(n.value.elts) > 1 \
                and n.lineno == n.end_lineno:
            for e in n.value.elts:
                if isinstance(e, ast.Name) and e.id in params and e.id not in touched and \
                        not re.search(r"\b%s\b(\.\w+_\(|\[[^\]]*\]\s*=[^=])|out=\(?[^)]*\b%s\b" % (e.id, e.id),
                                      seg(src, fn) or ""):
                    rest = [seg(src, x) for x in n.value.elts if x is not e]
                    line = lines[n.lineno - 1]
                    pad = line[:len(line) - len(line.lstrip())]
                    lines[n.lineno - 1] = pad + "return (" + ", ".join(rest) + ("," if len(rest) == 1 else "") + ")"
                    return "\n".join(lines) + "\n"
    return None


def prune(src: str, keep_inputs: bool = True) -> str:
    """Drop what the minimiser can leave behind: loops over ``range(0)``, values nothing reads
    (in any block), statements after a ``return``, loop variables nobody reads, inputs returned
    untouched (see ``_tidy``) and top-level helper functions nothing calls."""
    while True:
        tree = ast.parse(src)
        tidied = _tidy(src, tree, keep_inputs)
        if tidied is not None:
            src = tidied
            continue
        empty = [n for n in ast.walk(tree) if isinstance(n, ast.For) and isinstance(n.iter, ast.Call)
                 and getattr(n.iter.func, "id", "") == "range" and len(n.iter.args) == 1
                 and isinstance(n.iter.args[0], ast.Constant) and n.iter.args[0].value == 0 and not n.orelse]
        reads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        lines = src.splitlines()
        dead_stmts = [st for f, _node, body in _bodies(tree) for st in body
                      if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                      and st.targets[0].id not in reads and len(body) > (2 if body is f.body else 1)
                      and not re.search(r"_\(|\bout=|manual_seed", ast.get_source_segment(src, st.value) or "_(")
                      and not _RANDOM.search(ast.get_source_segment(src, st.value) or "")]
        if empty or dead_stmts:  # a value nothing reads, computed without side effects: dead
            n = (empty or dead_stmts)[0]
            del lines[n.lineno - 1:n.end_lineno]
            src = "\n".join(lines) + "\n"
            continue
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        dead = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != "fn" and n.name not in used]
        if not dead:
            return src
        lines = src.splitlines()
        for n in sorted(dead, key=lambda n: -n.lineno):
            start = min([n.lineno] + [d.lineno for d in n.decorator_list]) - 1
            del lines[start:n.end_lineno]
        src = re.sub(r"\n{3,}", "\n\n\n", "\n".join(lines)).strip() + "\n"
