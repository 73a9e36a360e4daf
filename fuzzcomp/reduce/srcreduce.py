"""Source-level fallback reducer for a repro file a user edited by hand.

Contract: the interestingness test is one predicate, ``is_interesting(path,
expect)``: run the file in a fresh interpreter and hold when it exits 1 and
its ``BUG:`` line starts with the same words (digits masked) as ``expect``.
The same predicate runs as a standalone script, C-Reduce style::

    python -m fuzzcomp.reduce.srcreduce FILE --expect "BUG: call N, output[N]: rmse vs"

exits 0 when FILE is interesting, 1 when it is not (without ``--expect`` it
prints the signature FILE shows). ``reduce_source(path)`` edits only the
program (the ``fn`` body and signature, its return tuple, the ``CALLS`` and
``INPUTS`` lists) with the ``ast`` module: it deletes runs of statements
(halves first, then single ones), replaces an assignment's call by one of its
operands, unwraps ``if``s, drops return values, calls and unused inputs, and
keeps an edit only if the predicate still holds. Edits are spliced into the
user's text by line range, so comments and the rest of the file stay as they
were. It never touches the user's file: the caller writes the result.
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from fuzzcomp.base.repro_runner import last_line, run_repro_file

WORDS = 6


class SourceReduceError(ValueError):
    pass


def bug_signature(line: str, words: int = WORDS) -> str:
    """The first ``words`` words of a BUG line with every number masked."""
    masked = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", line.strip())
    return " ".join(masked.split()[:words])


def run_file(path: Path, timeout_s: float, search_path: Path | None = None,
             should_stop=None, log_to: Path | None = None) -> tuple[int | None, str]:
    """(exit code or None on timeout or stop, the last BUG line or last output line).

    ``should_stop()``, polled twice a second, kills the run at once (a campaign ending).
    ``log_to``: where to keep the run's whole stdout and stderr (the report's traceback).
    """
    run = run_repro_file(path, timeout_s, search_path=search_path, should_stop=should_stop, log_to=log_to)
    return run.code, (run.why if run.code is None else last_line(run))


def is_interesting(path: Path, expect: str, timeout_s: float = 300.0,
                   search_path: Path | None = None) -> bool:
    code, line = run_file(path, timeout_s, search_path)
    return code == 1 and bug_signature(line, len(expect.split())) == expect


# ---- candidate edits on the text ------------------------------------------------------
def _find_fn(tree: ast.Module, name: str) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise SourceReduceError(f"no top-level function {name!r} to reduce")


def _module_list(tree: ast.Module, name: str) -> ast.Assign | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and node.targets[0].id == name and \
                isinstance(node.value, (ast.List, ast.Tuple)):
            return node
    return None


def _splice(lines: list[str], node: ast.AST, new: list[str]) -> str:
    return "".join(lines[:node.lineno - 1] + new + lines[node.end_lineno:])


def _indent_of(lines: list[str], node: ast.AST) -> str:
    line = lines[node.lineno - 1]
    return line[:len(line) - len(line.lstrip())]


def _body_of(fn: ast.FunctionDef) -> list[ast.stmt]:
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # a docstring stays
    return body


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def visit_Name(self, node: ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id in self.mapping:
            return ast.copy_location(ast.Name(self.mapping[node.id], ast.Load()), node)
        return node


def _first_operand(s: ast.stmt, locals_: set[str]) -> tuple[str, str] | None:
    """(target, first operand) of ``target = expr(operand, ...)``."""
    if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
        ops = [n for n in _operands(s.value, locals_) if n != s.targets[0].id]
        if ops:
            return s.targets[0].id, ops[0]
    return None


def _delete(lines: list[str], stmts: list[ast.stmt], run: list[ast.stmt], locals_: set[str]) -> str:
    """Delete ``run``; later readers of a deleted assignment read its first operand instead."""
    mapping: dict[str, str] = {}
    for s in run:
        pair = _first_operand(s, locals_)
        if pair:
            mapping[pair[0]] = mapping.get(pair[1], pair[1])
    out = lines[:run[0].lineno - 1]
    pos = run[-1].end_lineno
    for s in stmts:
        if s.lineno <= run[-1].end_lineno or not mapping:
            continue
        new = _Rename(mapping).visit(ast.parse(ast.unparse(s)).body[0])
        if ast.unparse(new) != ast.unparse(s):
            out += lines[pos:s.lineno - 1]
            out.append(textwrap.indent(ast.unparse(new), _indent_of(lines, s)) + "\n")
            pos = s.end_lineno
    return "".join(out + lines[pos:])


def _delete_runs(lines, stmts: list[ast.stmt], tail: list[ast.stmt], keep_one: bool,
                 locals_: set[str]) -> Iterator[str]:
    n = len(stmts)
    k = max(n // 2, 1)
    while True:
        for start in reversed(range(0, n, k)):
            run = stmts[start:start + k]
            if keep_one and len(run) == n:
                continue
            yield _delete(lines, stmts + tail, run, locals_)
        if k == 1:
            break
        k //= 2


def _dead(stmts: list[ast.stmt], tail: list[ast.stmt]) -> list[ast.stmt]:
    """Assignments to a plain name that no later statement reads."""
    dead = []
    for i, s in enumerate(stmts):
        if isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets):
            later = {n.id for x in stmts[i + 1:] + tail for n in ast.walk(x) if isinstance(n, ast.Name)}
            if not any(t.id in later for t in s.targets):
                dead.append(s)
    return dead


def _operands(node: ast.AST, locals_: set[str]) -> list[str]:
    names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in locals_]
    return list(dict.fromkeys(names))


def candidates(text: str, function: str = "fn") -> Iterator[str]:
    """Edits of ``text``, biggest first. Each is a whole new file text."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    fn = _find_fn(tree, function)
    body = _body_of(fn)
    ret = body[-1] if body and isinstance(body[-1], ast.Return) else None
    stmts = body[:-1] if ret is not None else body
    params = [a.arg for a in fn.args.args]
    locals_ = set(params) | {t.id for s in ast.walk(fn) if isinstance(s, (ast.Assign, ast.AugAssign))
                             for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
                             if isinstance(t, ast.Name)}
    # 1. drop return values (one output left: the rest of the body can die)
    if ret is not None and isinstance(ret.value, ast.Tuple) and len(ret.value.elts) > 1:
        for e in ret.value.elts:
            yield _splice(lines, ret, [f"{_indent_of(lines, ret)}return ({ast.unparse(e)},)\n"])
    # 2. dead assignments, all at once; then runs of statements, halves first (readers rewired)
    dead = _dead(stmts, [ret] if ret is not None else [])
    if dead:
        keep = [x for x in lines]
        for s in reversed(dead):
            del keep[s.lineno - 1:s.end_lineno]
        yield "".join(keep)
    if stmts:
        yield from _delete_runs(lines, stmts, [ret] if ret is not None else [], ret is None, locals_)
    # 3. replace an assignment's right-hand side by one of its operands; unwrap ifs
    for s in reversed(stmts):
        pad = _indent_of(lines, s)
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and not isinstance(s.value, ast.Name):
            target = ast.unparse(s.targets[0])
            for name in _operands(s.value, locals_):
                if name != target:
                    yield _splice(lines, s, [f"{pad}{target} = {name}\n"])
        elif isinstance(s, ast.If):
            for branch in (s.body, s.orelse):
                if branch:
                    inner = "".join(lines[branch[0].lineno - 1:branch[-1].end_lineno])
                    yield _splice(lines, s, [textwrap.indent(textwrap.dedent(inner), pad)])
    # 4. drop calls from the schedule
    calls = _module_list(tree, "CALLS")
    if calls is not None and len(calls.value.elts) > 1:
        for k in range(len(calls.value.elts)):
            kept = calls.value.elts[:k] + calls.value.elts[k + 1:]
            yield _splice(lines, calls, [f"CALLS = [{', '.join(ast.unparse(e) for e in kept)}]\n"])
    # 5. drop an input the body no longer reads (from the signature and from INPUTS)
    read = {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name)}
    specs = _module_list(tree, "INPUTS")
    for p in params:
        if p in read or len(params) == 1:
            continue
        new_def = f"{_indent_of(lines, fn)}def {fn.name}({', '.join(x for x in params if x != p)}):\n"
        first_body = fn.body[0].lineno
        text2 = "".join(lines[:fn.lineno - 1] + [new_def] + lines[first_body - 1:])
        if specs is not None:
            tree2 = ast.parse(text2)
            specs2 = _module_list(tree2, "INPUTS")
            kept = [e for e in specs2.value.elts if not (isinstance(e, ast.Tuple) and e.elts and
                                                         isinstance(e.elts[0], ast.Constant) and
                                                         e.elts[0].value == p)]
            text2 = _splice(text2.splitlines(keepends=True), specs2,
                            ["INPUTS = [\n"] + [f"    {ast.unparse(e)},\n" for e in kept] + ["]\n"])
        yield text2


# ---- the loop ----------------------------------------------------------------------------
@dataclass
class SourceStats:
    probes: int = 0
    accepted: int = 0
    seconds: float = 0.0
    out_of_time: bool = False
    statements_before: int = 0
    statements_after: int = 0
    expect: str = ""
    notes: list = field(default_factory=list)


def count_statements(text: str, function: str = "fn") -> int:
    fn = _find_fn(ast.parse(text), function)
    return sum(1 for s in ast.walk(fn) if isinstance(s, ast.stmt)) - 1


def reduce_source(path: Path, budget_s: float = 120.0, timeout_s: float = 300.0, words: int = WORDS,
                  function: str = "fn", log=lambda msg: None) -> tuple[str, SourceStats]:
    path = Path(path)
    text = path.read_text()
    try:
        ast.parse(text)
    except SyntaxError as e:
        raise SourceReduceError(f"{path}: not valid Python (line {e.lineno}: {e.msg})") from None
    stats = SourceStats(statements_before=count_statements(text, function))
    start = time.monotonic()
    code, line = run_file(path, timeout_s, path.parent.resolve())
    if code != 1 or not line.startswith("BUG:"):
        raise SourceReduceError(f"{path} does not show a bug (exit {code}: {line or 'no output'}); "
                                "nothing to minimise")
    stats.expect = expect = bug_signature(line, words)
    log(f"interesting = exits 1 and prints {expect!r} ...")
    seen = {text}
    with tempfile.TemporaryDirectory(prefix="fuzzcomp-srcmin-") as tmp:
        trial = Path(tmp) / path.name
        changed = True
        while changed and not stats.out_of_time:
            changed = False
            for cand in candidates(text, function):
                if time.monotonic() - start > budget_s:
                    stats.out_of_time = True
                    break
                if cand in seen:
                    continue
                seen.add(cand)
                try:
                    compile(cand, str(trial), "exec")
                except SyntaxError:
                    continue
                trial.write_text(cand)
                stats.probes += 1
                if is_interesting(trial, expect, timeout_s, path.parent.resolve()):
                    text = cand
                    stats.accepted += 1
                    changed = True
                    log(f"  kept an edit: {count_statements(text, function)} statements")
                    break
    stats.seconds = time.monotonic() - start
    stats.statements_after = count_statements(text, function)
    return text, stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fuzzcomp.reduce.srcreduce",
                                 description="The reducer's interestingness test as a script: exit 0 "
                                 "when FILE exits 1 with a BUG line starting like --expect, else 1.")
    ap.add_argument("file")
    ap.add_argument("--expect", default=None, help="words the BUG line must start with (digits as N)")
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args(argv)
    path = Path(args.file)
    if not path.is_file():
        print(f"srcreduce: error: no such file: {path}", file=sys.stderr)
        return 2
    if args.expect is None:
        code, line = run_file(path, args.timeout, path.parent.resolve())
        print(bug_signature(line) if code == 1 and line.startswith("BUG:") else f"not interesting: {line}")
        return 0 if code == 1 and line.startswith("BUG:") else 1
    return 0 if is_interesting(path, args.expect, args.timeout, path.parent.resolve()) else 1


if __name__ == "__main__":
    sys.exit(main())
