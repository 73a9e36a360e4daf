"""Per-output floors of the fp64 rule: the coarsest precision each output's own value went through.

Contract: ``output_floor_eps(case, cast_eps)`` is a pure function of the IR. It returns
``{output label: eps}`` for the outputs whose value, followed back through the statements and
regions that produce it, never passed through a type coarser than ``eps`` where ``eps`` is finer
than ``cast_eps`` (the program-wide floor, ``case_tables.cast_floor_eps``); the judge and the
repro file use that eps instead of ``cast_eps`` for those outputs, and the program-wide one for
every other value (inputs after the call, gradients, state).

A statement coarsens what it makes by the same rules as the program-wide floor, read from the
statement alone: a bfloat16/float16 cast or result type, a float32 cast (or an integer value that
a later op promotes to the default float type), or a place inside an enabled autocast region (a
nested ``autocast(enabled=False)`` region computes in full precision again). A value's eps is the
largest over everything it is computed from, helper and submodule bodies whole. Whatever the
walk cannot follow keeps the program-wide floor: an early return, a name it does not know, and an
in-place write that brings a coarser value in (views may carry it anywhere the written tensor's
data reaches, so every value connected to the written one takes the coarse eps).
"""
from __future__ import annotations

from fuzzcomp.generators.ir import (Assign, CallFn, Case, CondOp, If, Loop, Mutate, Ref, Return, While,
                                    With, walk, walk_program)
from fuzzcomp.run.call_extras import output_labels

BF16, F16, F32 = 2.0 ** -7, 2.0 ** -10, 2.0 ** -23


def _text_eps(text: str) -> float:
    """The coarsest float type a statement's own text casts to (as ``cast_floor_eps`` reads a program)."""
    if "bfloat16" in text or "autocast" in text:
        return BF16
    if "float16" in text or ".half()" in text:
        return F16
    if "float32" in text or ".float()" in text:
        return F32
    return 0.0


def _type_eps(t) -> float:
    """The precision a value of this type holds: half types and float32 their own, integers float32
    (an op promoting them takes the default float type in the fp64 run too), float64 none (a
    float32 value promoted into a float64 one keeps float32's rounding: ``mixed_precision_eps``)."""
    if t is None:
        return 0.0
    return {"bfloat16": BF16, "float16": F16, "float32": F32}.get(t.dtype, 0.0 if t.is_float else F32)


def _body_eps(body) -> float:
    """Everything a helper or submodule body may do, taken whole."""
    eps = 0.0
    for s in walk(body):
        if isinstance(s, With) and s.kind == "autocast":
            eps = max(eps, BF16)
        if isinstance(s, (Assign, Mutate)):
            eps = max(eps, _text_eps(s.template), _type_eps(getattr(s, "type", None)))
        elif isinstance(s, (CallFn, CondOp)):
            eps = max(eps, _type_eps(s.type))
    return eps


class _Flow:
    def __init__(self, case: Case, cast_eps: float):
        p = case.program
        self.cast_eps = cast_eps
        self.eps: dict[str, float] = {}
        for i in p.inputs:  # Python scalars are exact; tensors hold their own type's values
            self.eps[i.name] = 0.0 if i.kind in ("int", "float") else _type_eps(i.type)
        for g in p.globals:
            self.eps[g.name] = _type_eps(g.type) if g.kind == "tensor" else 0.0
        mods = [(("self",), p.module)] if p.module is not None else []
        while mods:
            path, m = mods.pop()
            for st in m.state:
                self.eps[".".join(path + (st.name,))] = _type_eps(st.type)
            mods += [(path + (attr,), sub) for attr, sub in m.submodules]
        self.fns = {f.name: _body_eps(f.body) for f in p.helpers}
        if p.module is not None:
            for attr, sub in p.module.submodules:
                if sub.forward is not None:
                    self.fns[f"self.{attr}"] = max(_body_eps(sub.forward.body),
                                                   *(_type_eps(st.type) for st in sub.state), 0.0)
        # names connected by any statement: an in-place write may reach all of them through views
        self.parent: dict[str, str] = {}
        for i in p.inputs:
            if i.kind == "alias" and not i.view.startswith("nonleaf:"):
                self._union(i.name, i.alias_of)
        self.poisoned = False

    def _find(self, n: str) -> str:
        while self.parent.get(n, n) != n:
            n = self.parent[n]
        return n

    def _union(self, a: str, b: str) -> None:
        ra, rb = self._find(a), self._find(b)
        if ra != rb:
            self.parent[ra] = rb

    def read(self, names) -> float:
        eps = 0.0
        for n in names:
            eps = max(eps, self.eps.get(n, self.cast_eps))  # unknown: the program-wide floor
        return eps

    def set(self, name: str, eps: float) -> bool:
        if eps > self.eps.get(name, -1.0):
            self.eps[name] = eps
            return True
        return False

    def block(self, body, autocast: bool) -> bool:
        changed = False
        for s in body:
            region = BF16 if autocast else 0.0
            if isinstance(s, Return):
                self.poisoned = True
            elif isinstance(s, With):
                changed |= self.block(s.body, s.kind == "autocast")
            elif isinstance(s, If):
                changed |= self.block(s.then, autocast) | self.block(s.orelse, autocast)
            elif isinstance(s, (Loop, While)):
                if isinstance(s, Loop):  # the loop index holds what it iterates over
                    items = list(s.items) + ([s.count] if isinstance(s.count, str) else [])
                    changed |= self.set(s.index, self.read(items))
                changed |= self.block(s.body, autocast)
            elif isinstance(s, Assign):
                reads = _names(s.args)
                eps = max(region, _text_eps(s.template), _type_eps(s.type), self.read(reads))
                changed |= self.set(s.out, eps)
                for n in reads:
                    self._union(s.out, n)
            elif isinstance(s, CallFn):
                reads = _names(s.args)
                eps = max(region, self.fns.get(s.fn, self.cast_eps), _type_eps(s.type), self.read(reads))
                changed |= self.set(s.out, eps)
                for n in reads:
                    self._union(s.out, n)
            elif isinstance(s, CondOp):
                eps = max(region, self.fns.get(s.true_fn, self.cast_eps), self.fns.get(s.false_fn, self.cast_eps),
                          _type_eps(s.type), self.read(s.operands))
                changed |= self.set(s.out, eps)
                for n in s.operands:
                    self._union(s.out, n)
            elif isinstance(s, Mutate):
                reads = _names(s.args) | ({s.target} if s.target else set())
                eps = max(region, _text_eps(s.template), self.read(reads))
                for n in reads:
                    if s.target:
                        self._union(s.target, n)
                if s.target and eps > self.eps.get(s.target, 0.0):
                    self._poison(s.target, eps)
                    changed = True
                elif not s.target and eps > 0.0:
                    self.poisoned = True  # a global-state change (default dtype): anything may follow
        return changed

    def _poison(self, target: str, eps: float) -> None:
        """Every known value connected to ``target`` takes ``eps``."""
        root = self._find(target)
        for n in list(self.eps):
            if self._find(n) == root:
                self.eps[n] = max(self.eps[n], eps)


def _names(args) -> set[str]:
    """The tensors a statement reads (a ``Size`` is an exact Python int)."""
    return {a.name for a in args if isinstance(a, Ref)}


def output_floor_eps(case: Case, cast_eps: float) -> dict[str, float]:
    """{output label: eps} for the outputs whose value is finer than ``cast_eps`` (see module doc)."""
    if cast_eps <= 0.0:
        return {}
    if any("autocast" in getattr(c, "caller", ()) for c in case.calls):
        return {}  # the caller's autocast reaches every op of the call
    p = case.program
    if any(isinstance(s, Return) for s in walk_program(p)):
        return {}
    flow = _Flow(case, cast_eps)
    for _ in range(8):  # to a fixpoint: loop bodies feed names read earlier in them
        if not flow.block(p.body, False):
            break
    else:
        return {}
    if flow.poisoned:
        return {}
    out = {}
    for label, name in zip(output_labels(case), p.outputs):
        eps = flow.read([name])
        if eps < cast_eps:
            out[label] = eps
    return out
