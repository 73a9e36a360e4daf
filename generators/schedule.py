"""The call schedule: how a case is called, one Call after another.

Contract: ``schedule_sizes`` draws one size per symbol per call (sizes change on
chosen symbols between calls); ``make_calls`` adds the rest of each call's
state: a fresh value seed (same shapes, new values), Python scalar argument
and scalar global values that change between calls, the grad mode (grad,
no_grad, inference_mode), inputs created under inference_mode,
requires_grad flips on inputs that are never written, and mark_dynamic /
maybe_mark_dynamic on dims whose sizes stay >= 2. Everything is drawn from the
choice stream; nothing here runs torch.
"""
from __future__ import annotations

from .choices import ChoiceStream
from .ir import Call, Input, Program, walk_program
from .structure import FLOAT_SCALARS, INT_SCALARS, Context

# Sizes straddle the CPU vector widths so both vector bodies and scalar tails run.
# Sizes straddle the CPU vector widths so both vector bodies and scalar tails run;
# 0 and 1 are the edge cases (ops that fail on empty dims check the schedule's minimum).
SIZES = (0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65)
GRAD_MODES = ("grad", "no_grad", "inference")


def schedule_sizes(ch: ChoiceStream, symbols, n_calls) -> dict[str, list[int]]:
    sizes = {s: [ch.choice(SIZES)] for s in symbols}
    for _ in range(1, n_calls):
        change = ch.boolean(0.6)
        for s in symbols:
            prev = sizes[s][-1]
            sizes[s].append(ch.choice(SIZES) if change and ch.boolean(0.6) else prev)
    return sizes


def _values(ch: ChoiceStream, kind: str, n_calls: int) -> list:
    pool = INT_SCALARS if kind == "int" else FLOAT_SCALARS
    vals = [ch.choice(pool)]
    for _ in range(1, n_calls):
        vals.append(ch.choice(pool) if ch.boolean(0.5) else vals[-1])
    return vals


def grad_candidates(program: Program, mutated: set[str]) -> list[str]:
    """Float tensor inputs that may require grad: never written, not aliased, no ``out=`` ops."""
    if any("out=" in getattr(s, "template", "") for s in walk_program(program)):
        return []
    aliased = {i.alias_of for i in program.inputs if i.kind == "alias"}
    return [i.name for i in program.inputs if i.kind == "tensor" and i.type.is_float
            and i.name not in mutated and i.name not in aliased and i.layout != "expanded"]


def nonleaf_view_bases(program: Program, mutated: set[str]) -> tuple[str, ...]:
    """Bases of the arguments taken as views of a non-leaf copy (``structure_inputs.NONLEAF``):
    they require grad, so the program's write into the view is one autograd must rebase; a base
    the program writes itself (a leaf requiring grad may not be) is left without."""
    return tuple(dict.fromkeys(i.alias_of for i in program.inputs if i.kind == "alias"
                               and i.view.startswith("nonleaf:") and i.alias_of not in mutated))


def make_calls(ch: ChoiceStream, program: Program, symbols, sizes: dict[str, list[int]], n_calls: int,
               ctx: Context, mutated: set[str], dynamic) -> tuple[Call, ...]:
    seeds = [ch.subseed() for _ in range(n_calls)]
    scalars = [(n, _values(ch, k, n_calls)) for n, k in ctx.scalars]
    gvals = [(g.name, _values(ch, g.kind, n_calls)) for g in ctx.globals if g.kind != "tensor"]
    modes = ["grad"] * n_calls
    if ch.boolean(0.25):
        for k in range(n_calls):
            if k > 0 or ch.boolean(0.3):
                modes[k] = ch.weighted(GRAD_MODES, (2, 1, 1))
    inference = [m == "inference" and ch.boolean(0.5) for m in modes]
    cands = grad_candidates(program, mutated)
    grads: list = [None] * n_calls
    if cands and ch.boolean(0.35):
        cur = {n for n in cands if ch.boolean(0.5)}
        for k in range(n_calls):
            if k > 0 and ch.boolean(0.4):
                cur ^= {ch.choice(cands)}  # flip one input's requires_grad
            grads[k] = tuple(n for n in cands if n in cur)
    bases = nonleaf_view_bases(program, mutated)
    if bases:  # no draw: the base of a non-leaf view written in place requires grad in every call
        grads = [tuple(g or ()) + tuple(b for b in bases if b not in (g or ())) for g in grads]
    marks: tuple = ()
    if dynamic is not False and ch.boolean(0.25):
        found = []
        for inp in program.inputs:
            if inp.kind not in ("tensor", "alias"):
                continue
            for d, dim in enumerate(inp.type.shape):
                if isinstance(dim, str) and dim in sizes and min(sizes[dim]) >= 2:
                    found.append((inp.name, d))
        if found:
            name, d = ch.choice(found)
            marks = ((name, d, "maybe" if ch.boolean(0.7) else "mark"),)
    return tuple(Call(tuple(sizes[s][k] for s in symbols), seeds[k],
                      scalars=tuple((n, v[k]) for n, v in scalars),
                      globals=tuple((n, v[k]) for n, v in gvals),
                      grad_mode=modes[k], inference_inputs=inference[k],
                      requires_grad=grads[k], marks=marks)
                 for k in range(n_calls))


def tensor_inputs(inputs: list[Input]) -> list[Input]:
    return [i for i in inputs if i.kind == "tensor"]
