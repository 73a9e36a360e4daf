"""Seed -> Case: the random program builder and its call schedule.

Contract: ``generate(seed)`` is deterministic: the same seed and
``GENERATOR_VERSION`` give the same Case, hence byte-identical source. Every
decision is drawn from one ``ChoiceStream``; ``generate_from_choices`` rebuilds
a Case from a recorded (possibly edited) choice list.
"""
from __future__ import annotations

from dataclasses import dataclass

from .choices import ChoiceStream
from .ir import Call, Case, CompileSpec, If, Input, Program, Ref, SizeCond, TensorType
from .registry import REGISTRY
from .scope import LIMIT, Scope, Val, new_counter

GENERATOR_VERSION = "0.2"

# Sizes straddle the CPU vector widths so both vector bodies and scalar tails run;
# 0 and 1 are the edge cases (ops that fail on empty dims check the schedule's minimum).
SIZES = (0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65)
DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool")
DTYPE_WEIGHTS = (7, 1.5, 1.5, 1, 1, 1, 1, 1, 1, 0.7)  # narrow ints: separate, bug-rich vector paths
LAYOUTS = ("contiguous", "transposed", "sliced", "offset", "expanded", "channels_last")
LAYOUT_WEIGHTS = (6, 1.5, 1, 1, 1, 0.7)
RANK_WEIGHTS = (0.3, 1.5, 3, 2, 1, 0.4)  # ranks 0..5
BRANCH_OPS = ("torch.sin({0})", "torch.tanh({0})", "torch.relu({0})", "torch.neg({0})",
              "torch.sigmoid({0})", "{0}.clone()", "torch.abs({0})")


@dataclass(frozen=True)
class GenConfig:
    """Knobs of the generator. Part of a case's identity together with the seed."""
    max_stmts: int = 10
    max_inputs: int = 3
    max_calls: int = 4
    max_rank: int = 5
    max_numel: int = 1 << 14
    p_if: float = 0.12


def generate(seed: int, config: GenConfig = GenConfig()) -> Case:
    return _build(ChoiceStream(seed=seed), seed, config)


def generate_from_choices(choices: list[int], seed: int = 0, config: GenConfig = GenConfig()) -> Case:
    return _build(ChoiceStream(replay=choices), seed, config)


def _build(ch: ChoiceStream, seed: int, cfg: GenConfig) -> Case:
    n_sym = ch.integer(1, 3)
    symbols = tuple(f"s{i}" for i in range(n_sym))
    n_calls = ch.integer(1, cfg.max_calls)
    sizes = _schedule_sizes(ch, symbols, n_calls)
    counter = new_counter()
    scope = Scope(ch, counter, sizes={s: sizes[s] for s in symbols}, max_numel=cfg.max_numel)
    inputs = _inputs(ch, scope, symbols, cfg)
    n_stmts = ch.integer(2, cfg.max_stmts)
    for _ in range(n_stmts):
        if ch.boolean(cfg.p_if):
            _if_block(ch, scope, symbols)
        else:
            _one_stmt(ch, scope)
    outputs = _outputs(ch, scope)
    program = Program(tuple(inputs), tuple(scope.stmts), outputs, symbols)
    calls = tuple(Call(tuple(sizes[s][i] for s in symbols), ch.subseed()) for i in range(n_calls))
    dynamic = ch.choice((None, None, True, False))
    return Case(program, calls, CompileSpec(dynamic=dynamic), seed, GENERATOR_VERSION)


def _schedule_sizes(ch: ChoiceStream, symbols, n_calls) -> dict[str, list[int]]:
    sizes = {s: [ch.choice(SIZES)] for s in symbols}
    for _ in range(1, n_calls):
        change = ch.boolean(0.6)
        for s in symbols:
            prev = sizes[s][-1]
            sizes[s].append(ch.choice(SIZES) if change and ch.boolean(0.6) else prev)
    return sizes


def _inputs(ch: ChoiceStream, scope: Scope, symbols, cfg: GenConfig) -> list[Input]:
    inputs = []
    for i in range(ch.integer(1, cfg.max_inputs)):
        rank = ch.weighted(range(0, cfg.max_rank + 1), RANK_WEIGHTS[: cfg.max_rank + 1])
        shape = [1 if ch.boolean(0.12) else ch.choice(symbols) for _ in range(rank)]
        dtype = ch.weighted(DTYPES, DTYPE_WEIGHTS)
        layout = ch.weighted(LAYOUTS, LAYOUT_WEIGHTS)
        if rank == 4 and layout == "contiguous" and ch.boolean(0.25):
            layout = "channels_last"  # only rank 4 can have it: draw it more often there
        if layout in ("transposed",) and rank < 2 or layout == "channels_last" and rank != 4 \
                or layout in ("sliced", "offset", "expanded") and rank < 1:
            layout = "contiguous"
        # Too big for some call: pin dims (front first) to small literals until it fits.
        for j in range(rank):
            if scope.fits(TensorType(tuple(shape), dtype)):
                break
            shape[j] = ch.choice((1, 2, 3))
        t = TensorType(tuple(shape), dtype)
        name = f"x{i}"
        inputs.append(Input(name, t, layout))
        bound = 1.0 if dtype == "bool" else min(LIMIT[dtype], 8.0 if t.is_int else 2.0)
        scope.vals.append(Val(name, t, bound, root=name, writable=layout != "expanded", is_input=True,
                              exact=True, contig=layout in ("contiguous", "offset")))
    return inputs


def _one_stmt(ch: ChoiceStream, scope: Scope) -> None:
    weights = [op.weight for op in REGISTRY]
    for _attempt in range(12):
        op = ch.weighted(REGISTRY, weights)
        if op.build(scope):
            return


def _if_block(ch: ChoiceStream, scope: Scope, symbols) -> None:
    cands = [v for v in scope.all_vals() if v.is_input and any(isinstance(d, str) for d in v.type.shape)]
    if not cands:
        return _one_stmt(ch, scope)
    x = ch.choice(cands)
    dims = [i for i, d in enumerate(x.type.shape) if isinstance(d, str)]
    dim = ch.choice(dims)
    seen = sorted(set(scope.sizes[x.type.shape[dim]]))
    # Split the schedule's values across the two branches where it can.
    value = seen[ch.integer(0, len(seen) - 2)] if len(seen) > 1 else max(seen[0] - ch.integer(0, 1), 0)
    joined = scope.pick(lambda v: v.type.is_float)
    if joined is None:
        return _one_stmt(ch, scope)
    join_name = scope.fresh()
    branches = []
    for _ in range(2):
        child = scope.child()
        for _k in range(ch.integer(0, 2)):
            _one_stmt(ch, child)
        src = child.pick(lambda v: v.type == joined.type and v.bound <= joined.bound)
        src = src or joined
        template = ch.choice(BRANCH_OPS)
        child.assign("branch:" + template.split("(")[0], template, (Ref(src.name),), joined.type,
                     src.bound, name=join_name)
        branches.append(tuple(child.stmts))
    scope.stmts.append(If(SizeCond(x.name, dim, value), branches[0], branches[1],
                          ((join_name, joined.type),)))
    scope.vals.append(Val(join_name, joined.type, joined.bound, root=join_name))


def _outputs(ch: ChoiceStream, scope: Scope) -> tuple[str, ...]:
    made = [v for v in scope.vals if not v.is_input]
    if not made:
        x = scope.vals[0]
        scope.assign("Tensor.clone", "{0}.clone()", (Ref(x.name),), x.type, x.bound)
        made = [scope.vals[-1]]
    k = ch.integer(1, min(3, len(made)))
    picked = [made[-1]] + [ch.choice(made) for _ in range(k - 1)]
    names: list[str] = []
    for v in picked:
        if v.name not in names:
            names.append(v.name)
    return tuple(names)
