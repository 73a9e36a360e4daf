"""The culprit op of a value finding: what splits numeric, gradient and mutation buckets.

Contract: ``culprit_of(case, obs, verdict, options, deep)`` returns a short
signature naming one op of the program, cheap to get and stable across
programs that show the same bug:

* ``deep`` (the case's primary verdict, numeric or mutation): one extra
  compile of a variant of the program that also returns every top-level
  intermediate; each intermediate is judged with the fp64 rule, and the first
  one (in program order) whose compiled value leaves eager's names the op;
* otherwise, or when the variant hides the bug (every intermediate agrees,
  the variant cannot be built, or it fails to run): the op that last wrote the
  mismatching value, and for a gradient the first live op (its value used) that reads the
  input or a view of it.

Both ways the signature is ``"culprit op: NAME"``: when no intermediate
diverges but the output does, the output's writer is the first diverging op,
so the two ways agree on one bug. ``obs.stats["culprit"]`` says which way
was taken.

Sub-expressions count as ops: a statement such as ``torch.sqrt(torch.abs(x) + 0.25)`` (the
guard that keeps an op in its domain) is judged part by part, innermost first, so a fault in
the guard's add names ``torch.add``, not ``torch.sqrt``. NAME is the computation, whatever
spelling the program used: ``torch.add``, ``Tensor.add``, ``Tensor.__add__``, ``x + y``,
``Tensor.add_`` and ``scalar:add`` all name ``torch.add``, so one faulty kernel files one bucket
(a mutation finding keeps the in-place name: ``torch.mul_``; full names such as
``torch.nn.functional.avg_pool1d`` are kept, which the known-bug registry's rules match).
"""
from __future__ import annotations

import ast
import re
from dataclasses import replace

from fuzzcomp.generators import Case
from fuzzcomp.generators.emit import render_arg
from fuzzcomp.generators.ir import Assign, CallFn, Mutate, Program, Ref, Return, walk_program
from fuzzcomp.generators.liveness import dce
from fuzzcomp.oracles.special import compare_special
from fuzzcomp.oracles import Observation, Verdict
from fuzzcomp.oracles.fp64rule import compare
from fuzzcomp.base.symptoms import SYMPTOMS
from fuzzcomp.run.execute import observe

MAX_INTERMEDIATES = 48


def _plain(op: str) -> str:
    return re.sub(r"\[.*\]$", "", op.split(":", 1)[1] if op.startswith(("branch:", "cond:")) else op)


def _refs(args) -> set[str]:
    out = set()
    for a in args:
        name = getattr(a, "name", None)
        if isinstance(name, str):
            out.add(name)
    return out


def _root(name: str) -> str:
    return name.split("[")[0].split(".")[0] if not name.startswith("self.") else name.split("[")[0]


def _top_op(stmt) -> str:
    """The op at the top of a statement's expression (``add`` for ``c * 0.5 + tanh(x) * 0.5``)."""
    try:
        node = ast.parse(stmt.template.format(*map(render_arg, stmt.args)), mode="eval").body
    except (SyntaxError, IndexError, KeyError, ValueError):
        return ""
    if isinstance(node, ast.BinOp):
        return _BINOPS.get(type(node.op), "")
    if isinstance(node, ast.Call):
        return ast.unparse(node.func)
    return ""


def _named(stmt) -> str:
    """A statement's op; a structural one (a loop's carry) is named by what its expression computes."""
    if stmt.op.startswith(("loop:", "while:")):
        return _top_op(stmt) or _plain(stmt.op)
    return _plain(stmt.op)


def cheap_culprit(program: Program, label: str) -> str:
    """The op that last wrote the value ``label`` names; for a gradient, the first op that reads
    the input or a view of it and whose value is used (a dead statement's op explains nothing:
    CPU 1602 named a dead ``atan2(x1, x1)`` for amax's NaN gradient); "" if none."""
    stmts = [s for s in walk_program(program) if isinstance(s, (Assign, Mutate))]
    if label.startswith("grad of input "):
        name = label.removeprefix("grad of input ")
        if program.module is not None:  # a module's forward is not swept: its first reader
            return _plain(next((s.op for s in stmts if name in _refs(s.args)), ""))
        names = {name} | {i.name for i in program.inputs if i.alias_of == name}
        live = [s for s in walk_program(dce(program)) if isinstance(s, (Assign, Mutate))]
        return _plain(next((s.op for s in live if names & _refs(s.args)), ""))
    if label.startswith("output"):
        # output[k] of a tuple or list, output['ok'] of a dict (its keys o0, o1... in output order)
        m = re.match(r"output\[(\d+)\]", label) or re.match(r"output\['o(\d+)'\]", label)
        k = int(m.group(1)) if m else 0
        if k >= len(program.outputs):
            return ""
        var = program.outputs[k]
    else:  # "input x after call", "buffer MODEL.buf0 after call", "global g after call"
        parts = label.split(" ")
        var = parts[1] if len(parts) > 1 else ""
        if var.startswith("MODEL."):
            var = "self." + var.split(".", 1)[1]
    writers = [s for s in stmts if (isinstance(s, Assign) and s.out == var)
               or (isinstance(s, Mutate) and _root(s.target) == var)]
    return _named(writers[-1]) if writers else ""


_BINOPS = {ast.Add: "torch.add", ast.Sub: "torch.sub", ast.Mult: "torch.mul", ast.Div: "torch.div",
           ast.Pow: "torch.pow", ast.Mod: "torch.remainder", ast.FloorDiv: "torch.floor_divide",
           ast.MatMult: "torch.matmul"}
_DUNDER = {"radd": "add", "iadd": "add", "rsub": "sub", "isub": "sub", "rmul": "mul", "imul": "mul",
           "truediv": "div", "rtruediv": "div", "itruediv": "div", "mod": "remainder", "rpow": "pow",
           "floordiv": "floor_divide", "neg": "neg", "abs": "abs"}


def canonical(op: str, inplace: bool = False) -> str:
    """The torch name of the computation an op name spells: ``torch.add``, ``Tensor.add``,
    ``Tensor.__add__``, ``Tensor.add_``, ``scalar:add`` and ``x + y`` are all ``torch.add``
    (dunders and the in-place underscore go; ``inplace`` keeps the underscore: a lost in-place
    write is the in-place op's own). Full names stay as they are (``torch.nn.functional.relu``),
    so the known-bug registry's rules on them still match; a bare name (``mul``) stays bare."""
    import torch
    name = _plain(op)
    prefixed = ":" in name
    name = name.split(":", 1)[1] if prefixed else name
    if name.startswith("Tensor."):
        meth = name[len("Tensor."):]
        if meth.startswith("__") and meth.endswith("__"):
            meth = _DUNDER.get(meth[2:-2], meth[2:-2])
        base = meth if inplace else (meth.rstrip("_") or meth)
        return f"torch.{base}" if hasattr(torch, base) else f"Tensor.{base}"
    if prefixed and "." not in name and hasattr(torch, name):
        return f"torch.{name}"
    return name


def _subexpressions(stmt: Assign) -> list[tuple[str, str]]:
    """(op name, source) of each tensor-valued sub-expression of the statement's expression,
    innermost first (the order they are evaluated in); [] for a plain one-op statement."""
    try:
        src = stmt.template.format(*map(render_arg, stmt.args))
        tree = ast.parse(src, mode="eval").body
    except (SyntaxError, IndexError, KeyError, ValueError):
        return []
    names = _refs(stmt.args)
    out: list[tuple[str, str]] = []

    def visit(node, top):
        for child in ast.iter_child_nodes(node):
            visit(child, False)
        if top or not isinstance(node, (ast.Call, ast.BinOp, ast.UnaryOp)):
            return
        text = ast.unparse(node)
        if ".shape" in text or not any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node)):
            return  # sizes and constants are no tensor computation of the inputs
        if isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
        elif isinstance(node, ast.UnaryOp):
            op = "torch.neg" if isinstance(node.op, ast.USub) else None
        else:
            op = ast.unparse(node.func)
        if op and not op.endswith((".to", ".detach", ".clone", ".contiguous", ".float", ".double")):
            out.append((op, text))
    visit(tree, True)
    return out


def _inlined(program: Program) -> tuple:
    """The body with each call of a straight-line helper replaced by the helper's statements
    (locals renamed per call site), so what the helper computes is judged op by op."""
    helpers = {f.name: f for f in program.helpers}
    out = []
    for k, s in enumerate(program.body):
        f = helpers.get(s.fn) if isinstance(s, CallFn) else None
        if f is None or not all(isinstance(t, Assign) for t in f.body) or len(f.params) != len(s.args) \
                or not all(isinstance(a, Ref) for a in s.args):
            out.append(s)
            continue
        names = {p: a.name for (p, _t), a in zip(f.params, s.args)}
        for t in f.body:
            names.setdefault(t.out, f"{t.out}_in{k}")
            args = tuple(Ref(names.get(a.name, a.name)) if isinstance(a, Ref) else a for a in t.args)
            out.append(replace(t, out=names[t.out], args=args))
        out.append(Assign(s.out, "helper result", "{0}", (Ref(names.get(f.result, f.result)),), s.type))
    return tuple(out)


def intermediates_variant(program: Program) -> tuple[Program, list[Assign]] | None:
    """The program also returning each top-level intermediate, and before each one the
    tensor-valued sub-expressions of its expression (None: nothing to add, or a body with an
    early return, whose outputs the variant could not extend)."""
    if any(isinstance(s, Return) for s in walk_program(program)):
        return None
    # every top-level value in program order, the outputs' own statements too, each read right
    # after it is computed (a clone under a fresh name: a later statement may rebind or write it)
    extra: list[Assign] = []   # the statement naming each extra output
    outs: list[str] = []
    body = []
    defined = {i.name for i in program.inputs}

    def snapshot(name, named, t):
        body.append(Assign(f"{name}_at{len(body)}", "snapshot", f"{name}.clone()", (), t))
        outs.append(body[-1].out)
        extra.append(named)

    for s in _inlined(program):
        if isinstance(s, Assign) and s.op == "helper result":
            body.append(s)
            defined.add(s.out)
            continue
        if isinstance(s, Assign) and s.type is not None:
            for k, (op, text) in enumerate(_subexpressions(s)):
                sub = Assign(f"{s.out}_part{len(body)}_{k}", op, text.replace("{", "{{").replace("}", "}}"), (),
                             s.type)
                body.append(sub)
                outs.append(sub.out)
                extra.append(sub)
            body.append(s)
            snapshot(s.out, s, s.type)
        else:
            body.append(s)
        if not isinstance(s, (Assign, Mutate)):
            # a loop or branch: the values it rebinds (defined before it, so defined after it
            # whichever way it ran), each named by its last writer inside
            inner = [t for t in walk_program(replace(program, body=(s,), helpers=(), module=None))
                     if isinstance(t, Assign) and t.out in defined and t.type is not None]
            for name in dict.fromkeys(t.out for t in inner):
                last = [t for t in inner if t.out == name][-1]
                snapshot(name, last, last.type)
        if isinstance(s, Assign):
            defined.add(s.out)
    extra, outs = extra[:MAX_INTERMEDIATES], outs[:MAX_INTERMEDIATES]  # later ones stay unread
    if not extra:
        return None
    return replace(program, body=tuple(body), outputs=tuple(program.outputs) + tuple(outs),
                   out_kind="tuple"), extra


def first_diverging(case: Case, obs: Observation, verdict: Verdict, options) -> str:
    """The op of the first intermediate whose compiled value fails the fp64 rule; "" if none."""
    built = intermediates_variant(case.program)
    if built is None or verdict.call < 0:
        return ""
    program, extra = built
    variant = replace(case, program=program, calls=case.calls[:verdict.call + 1])
    sub = replace(options, grad="off", replay=False, aliases=False, ladder=False, culprit=False,
                  cross_device=False)
    try:
        vobs = observe(variant, options=sub)
    except Exception:  # the variant is a probe: failing to build it falls back, never raises
        return ""
    stats = obs.stats
    n_out = len(case.program.outputs)
    # the earliest call where an intermediate diverges: one bug names one op whichever call of
    # the schedule the primary verdict came from
    for rec in vobs.calls:
        if rec.eager.error or rec.compiled is None or rec.compiled.error \
                or rec.eager.labels != rec.compiled.labels:
            continue
        ref = rec.fp64.values if rec.fp64 is not None and rec.fp64.error is None else None
        for j, stmt in enumerate(extra):
            prefix = f"output[{n_out + j}]"
            for i, label in enumerate(rec.eager.labels):
                if label != prefix and not label.startswith(prefix + "["):
                    continue
                r = ref[i] if ref is not None and i < len(ref) else None
                status, _ = compare(rec.eager.values[i], rec.eager_again.values[i], r, rec.compiled.values[i],
                                    floor_eps=float(stats.get("floor_eps", 0.0)),
                                    reduce_n=int(stats.get("reduce_n", 1)),
                                    coarse_eps=float(stats.get("coarse_eps", 0.0)))
                if status != "mismatch" and r is not None:  # a special value changing class (NaN
                    # to inf) or a zero its sign: the fp64 rule leaves non-finite values alone
                    status, _ = compare_special(rec.eager.values[i], rec.eager_again.values[i], r,
                                                rec.compiled.values[i], sign="zero sign" in verdict.detail
                                                or "zero sign" in verdict.signature)
                if status == "mismatch":
                    return _named(stmt)
    return ""


def culprit_of(case: Case, obs: Observation, verdict: Verdict, options, deep: bool = False) -> str:
    found = ""
    if deep and verdict.symptom in SYMPTOMS and SYMPTOMS[verdict.symptom].culprit_deep:
        found = first_diverging(case, obs, verdict, options)
        obs.stats["culprit"] = "first diverging intermediate" if found else \
            "no intermediate diverges: the value's writer"
    name = found or cheap_culprit(case.program, verdict.label)
    return f"culprit op: {canonical(name, verdict.symptom == 'mutation') if name else 'unknown'}"
