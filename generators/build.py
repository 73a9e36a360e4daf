"""Seed -> Case: the random program builder and its call schedule.

Contract: ``generate(seed)`` is deterministic: the same seed and
``GENERATOR_VERSION`` give the same Case, hence byte-identical source. Every
decision is drawn from one ``ChoiceStream``; ``generate_from_choices`` rebuilds
a Case from a recorded (possibly edited) choice list.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

from . import edges, reach, structure, structure_inputs
from .choices import ChoiceStream
from .ir import Case, CompileSpec, Input, Program, Ref, TensorType, tainted_sources
from .knobs import RANDOM_OPS, weights_for  # noqa: F401  (RANDOM_OPS re-exported)
from .ops_scalar import param_inputs
from .reach_args import BUILDERS as REACH_ARGS
from .reach_stmts import BUILDERS as REACH_BUILDERS
from .tail_forms import BUILDERS as TAIL_FORMS
from .registry import REGISTRY, op_filter_mask
from .schedule import SIZES, make_calls, schedule_sizes  # noqa: F401  (SIZES re-exported)
from .scope import LIMIT, Scope, Val, new_counter
from .structure import StructScope

GENERATOR_VERSION = "0.10"

DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool")
DTYPE_WEIGHTS = (7, 1.5, 1.5, 1, 1, 1, 1, 1, 1, 0.7)  # narrow ints: separate, bug-rich vector paths
LAYOUTS = ("contiguous", "transposed", "sliced", "offset", "expanded", "channels_last")
LAYOUT_WEIGHTS = (6, 1.5, 1, 1, 1, 0.7)
OUT_KINDS = ("tuple", "list", "dict", "single")
RANK_WEIGHTS = (0.3, 1.5, 3, 2, 1, 0.4)  # ranks 0..5


@dataclass(frozen=True)
class GenConfig:
    """Knobs of the generator. Part of a case's identity together with the seed."""
    max_stmts: int = 10
    max_inputs: int = 3
    max_calls: int = 4
    max_rank: int = 5
    max_numel: int = 1 << 14
    p_struct: float = 0.3     # chance that a statement is a structural one (control flow, calls...)
    half_weight: float = 1.0  # multiplies the weight of float16/bfloat16 inputs (3.0 on CUDA)
    # Random ops (dropout, rand_like, randn_like). Off on CUDA: there eager's fused dropout and
    # bernoulli kernels consume the Philox stream differently from Inductor's decomposed RNG, even
    # under fallback_random, so their masks differ by design (a report PyTorch rejects as "RNG").
    random_ops: bool = True
    # Integer matmul/mm/bmm/einsum (bounds keep them free of overflow). Off on CUDA, whose eager
    # has no integer GEMM. NNSmith found a uint8 matmul miscompile that this once could not reach.
    int_matmul: bool = True
    # Op filter (names or callables / families, see registry.op_filter_mask); empty = every op.
    ops: tuple = ()
    families: tuple = ()
    exclude: tuple = ()
    # capability weights (generators.reach.CAPABILITIES): (name, weight) overrides, and
    # capabilities every case gets (a test or campaign that aims at one capability)
    reach_weights: tuple = ()
    force: tuple = ()
    # Multipliers of the registry weights of one capability each (knobs.KNOBS lists their specs):
    # 0 turns one off, a large value forces it (the planted-fault tests do).
    forms_weight: float = 1.0          # pooling/matmul/dtype-view/out= argument forms
    resample_weight: float = 1.0       # interpolate in every mode
    scalar_param_weight: float = 1.0   # Python floats as op parameters, literals meeting fp16/bf16
    scalar_param_p: float = 0.15       # chance of one extra Python-float argument for them
    scatter_reduce_weight: float = 1.0  # scatter_reduce / index_reduce
    inplace_view_weight: float = 1.0   # unsqueeze_, t_, resize_ ...
    grad_forms_weight: float = 1.0     # in-place updates of non-leaf grad tensors, losses with kinks
    # GEMMs/convs big enough for autotuned templates: slow to compile, so off unless the mode
    # autotunes (for_device turns them on there: often on CUDA, rarely on CPU)
    big_matmul_weight: float = 0.0
    # Novelty steering (fuzzcomp.campaign.novelty): (registry op name, factor) multipliers of op
    # draw weights, and (structure kind, factor) multipliers of structure.KINDS' weights
    op_scale: tuple = ()
    kind_scale: tuple = ()
    # the device the case runs on: a factory with no tensor to take its device from (a constant
    # subgraph) names DEVICE, which the runtime and the repros define; "cpu" programs never do
    device: str = "cpu"

    def __post_init__(self):
        # settings files and flags give lists; the config is hashed (weights are cached per config)
        for name, value in vars(self).items():
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(tuple(v) if isinstance(v, list) else v for v in value))

    @classmethod
    def for_device(cls, device: str, mode: str | None = None, **overrides) -> "GenConfig":
        """The campaign's config for a device and mode: fp16/bf16 weighted up and random ops off
        on CUDA; big GEMMs/convs under the max-autotune modes."""
        if device != "cpu":
            overrides.setdefault("device", device)
            overrides.setdefault("half_weight", 3.0)
            overrides.setdefault("random_ops", False)
            overrides.setdefault("int_matmul", False)
        if mode in ("max-autotune", "max-autotune-no-cudagraphs"):
            overrides.setdefault("big_matmul_weight", 1.0 if device != "cpu" else 0.05)
        return cls(**overrides)


def generate(seed: int, config: GenConfig = GenConfig()) -> Case:
    return _build(ChoiceStream(seed=seed), seed, config)


def generate_from_choices(choices: list[int], seed: int = 0, config: GenConfig = GenConfig()) -> Case:
    return _build(ChoiceStream(replay=choices), seed, config)


def generate_from_stream(ch: ChoiceStream, seed: int = 0, config: GenConfig = GenConfig()) -> Case:
    """Build from any ChoiceStream (e.g. one that draws from Hypothesis)."""
    return _build(ch, seed, config)


def _build(ch: ChoiceStream, seed: int, cfg: GenConfig) -> Case:
    n_sym = ch.integer(1, 3)
    symbols = tuple(f"s{i}" for i in range(n_sym))
    n_calls = ch.integer(1, cfg.max_calls)
    sizes = schedule_sizes(ch, symbols, n_calls)
    counter = new_counter()
    scope = StructScope(ch, counter, sizes={s: sizes[s] for s in symbols}, max_numel=cfg.max_numel)
    scope.int_matmul = cfg.int_matmul
    scope.device = cfg.device
    inputs = _inputs(ch, scope, symbols, cfg)
    weights = weights_for(cfg)
    if cfg.ops or cfg.families or cfg.exclude:
        weights = tuple(w if keep else 0.0 for w, keep in
                        zip(weights, op_filter_mask(tuple(cfg.ops), tuple(cfg.families), tuple(cfg.exclude))))
    one_stmt = functools.partial(_one_stmt, weights=weights)
    ctx = structure.Context(one_stmt, symbols, out_kind=ch.weighted(OUT_KINDS, (5, 1, 1, 1)),
                            kind_weights=structure.kind_weights(cfg.kind_scale))
    inputs += structure_inputs.extra_inputs(ch, scope, inputs, ctx)
    inputs += param_inputs(ch, scope, inputs, ctx, cfg.scalar_param_p * min(cfg.scalar_param_weight, 1.0))
    structure_inputs.setup_state(ch, scope, inputs, ctx)
    caps = reach.plan(ch, reach.weights_of(cfg.reach_weights), cfg.force)
    if "special" in caps:
        inputs = reach.special_inputs(ch, inputs)
    scope.float_scalars = tuple(ctx.float_names())
    n_stmts = ch.integer(2, cfg.max_stmts)
    # each body capability goes in once, after a drawn statement (later ones run under its change)
    at = {name: ch.integer(0, n_stmts - 1) for name in sorted(caps) if name in REACH_BUILDERS}
    for j in range(n_stmts):
        if ch.boolean(cfg.p_struct):
            structure.structure_stmt(ch, scope, ctx)
        else:
            one_stmt(ch, scope)
        for name in sorted(n for n, k in at.items() if k == j):
            REACH_BUILDERS[name](ch, scope, ctx)
    outputs = _outputs(ch, scope)
    out_kind = ctx.out_kind
    if out_kind == "single":  # early returns were drawn for one value too
        outputs = outputs[:1]
    else:
        outputs += tuple(n for n in ctx.extra_outputs if n not in outputs)
    program = Program(tuple(inputs), tuple(scope.stmts), outputs, symbols,
                      helpers=tuple(h.fn for h in ctx.helpers) + tuple(ctx.cond_fns),
                      module=structure.module_def(ctx, scope.stmts),
                      globals=tuple(ctx.globals) + tuple(ctx.rebound), out_kind=out_kind)
    dynamic = ch.choice((None, None, True, False))
    mutated = tainted_sources(program)
    calls = make_calls(ch, program, symbols, sizes, n_calls, ctx, mutated, dynamic)
    from .schedule import grad_candidates
    calls = reach.finish_calls(ch, calls, caps, bool(ctx.library), grad_candidates(program, mutated))
    config = reach.compile_config(ch, any(getattr(s, "op", "").startswith("dds:") for s in scope.stmts))
    program = _arg_capabilities(ch, scope, program, cfg)
    program = _tail_forms(ch, scope, program, cfg, ctx)
    cache = reach.plan_cache(ch, reach.weights_of(cfg.reach_weights), cfg.force)
    program, calls = _edges(ch, scope, program, calls, cfg)  # the stream's very last draws
    return Case(program, calls, CompileSpec(dynamic=dynamic, config=config, cache=cache), seed, GENERATOR_VERSION)


def _arg_capabilities(ch: ChoiceStream, scope: Scope, program: Program, cfg: GenConfig) -> Program:
    """The argument capabilities (``reach.ARG_CAPABILITIES``): the stream's last draws, built at
    the end of the body and returned. They read values already made and write none, so the call
    schedule drawn before them still fits. A single-output program has no place for them."""
    caps = reach.plan_args(ch, reach.weights_of(cfg.reach_weights), cfg.force)
    names = [] if program.out_kind == "single" else [REACH_ARGS[c](ch, scope) for c in caps]
    names = [n for n in names if n is not None]
    if not names:
        return program
    return dataclasses.replace(program, body=tuple(scope.stmts), outputs=program.outputs + tuple(names))


def _tail_forms(ch: ChoiceStream, scope: Scope, program: Program, cfg: GenConfig, ctx) -> Program:
    """The tail forms (``reach.TAIL_CAPABILITIES``): the stream's very last draws, built at the end
    of the body like the argument capabilities (a single-output program has no place for them)."""
    caps = reach.plan_tail(ch, reach.weights_of(cfg.reach_weights), cfg.force)
    names: list[str] = []
    helpers: list = []
    # an op filter (--ops/--families/--exclude) names the registry ops a campaign may draw: the
    # tail forms' own ops (out= reductions, dtype views, nested regions) stay out of it then
    filtered = bool(cfg.ops or cfg.families or cfg.exclude)
    for c in caps if program.out_kind != "single" and not filtered else ():
        made, fns = TAIL_FORMS[c](ch, scope, ctx)
        names += made
        helpers += fns
    if not names:
        return program
    return dataclasses.replace(program, body=tuple(scope.stmts), outputs=program.outputs + tuple(names),
                               helpers=program.helpers + tuple(helpers))


def _edges(ch: ChoiceStream, scope: Scope, program: Program, calls, cfg: GenConfig) -> tuple:
    """The edge capabilities (``edges.EDGE_CAPABILITIES``): drawn after everything else, so a seed
    that draws none keeps its case. They add inputs, a symbol and calls, so they come after the
    schedule; an op filter keeps them out, like the tail forms."""
    caps = reach.plan_tail(ch, reach.weights_of(cfg.reach_weights), cfg.force, names=tuple(edges.EDGE_CAPABILITIES))
    if not caps or cfg.ops or cfg.families or cfg.exclude:
        return program, calls
    return edges.apply(ch, scope, program, calls, caps)


def _inputs(ch: ChoiceStream, scope: Scope, symbols, cfg: GenConfig) -> list[Input]:
    inputs = []
    for i in range(ch.integer(1, cfg.max_inputs)):
        rank = ch.weighted(range(0, cfg.max_rank + 1), RANK_WEIGHTS[: cfg.max_rank + 1])
        shape = [1 if ch.boolean(0.12) else ch.choice(symbols) for _ in range(rank)]
        weights = DTYPE_WEIGHTS if cfg.half_weight == 1.0 else tuple(
            w * cfg.half_weight if d in ("float16", "bfloat16") else w for d, w in zip(DTYPES, DTYPE_WEIGHTS))
        dtype = ch.weighted(DTYPES, weights)
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


def _one_stmt(ch: ChoiceStream, scope: Scope, weights=weights_for(GenConfig())) -> None:
    for _attempt in range(12):
        op = ch.weighted(REGISTRY, weights)
        if op.build(scope):
            return


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
