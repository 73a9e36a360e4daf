"""The inputs and state of a structured program beyond its plain tensors: container, aliased and
Python-scalar inputs, and module parameters, buffers and globals.

Contract: ``extra_inputs(ch, scope, inputs, ctx)`` returns the inputs appended after the tensor
inputs; ``setup_state(ch, scope, inputs, ctx)`` adds module state and globals to ``scope`` and
``ctx``. Both draw from the case's one choice stream, in the order ``build`` calls them.
"""
from __future__ import annotations

from . import shapes
from .choices import ChoiceStream
from .ir import GRAD_SAFE_SUFFIX, Global, Input, Ref, StateTensor, TensorType
from .scope import Val
from .structure import Context, StructScope


def extra_inputs(ch: ChoiceStream, scope: StructScope, inputs: list[Input], ctx: Context) -> list[Input]:
    """Container, aliased and Python-scalar inputs appended after the tensor inputs."""
    extra: list[Input] = []
    tensors = [i for i in inputs if i.kind == "tensor"]
    n = len(inputs)
    if tensors and ch.boolean(0.15):  # a list/tuple/dict of tensors in
        kind = ch.choice(("list", "tuple", "dict"))
        base = ch.choice(tensors)
        t = TensorType(base.type.shape, "float32")
        name, count = f"x{n}", ch.integer(2, 3)
        extra.append(Input(name, t, kind=kind, count=count))
        n += 1
        for k in range(count):
            key = f"'k{k}'" if kind == "dict" else str(k)
            v = scope.assign("container:getitem", "{0}[%s]" % key, (Ref(name),), t, 2.0)
            if v is not None:
                v.is_input = True
        ctx.container = (name, kind, t)
    if tensors and ch.boolean(0.15):  # two arguments that are views of one storage
        base = ch.choice(tensors)
        bval = next(v for v in scope.vals if v.name == base.name)
        view = ch.choice(("same", "view", "transposed") if base.type.rank >= 2 else ("same", "view"))
        shape = list(base.type.shape)
        if view == "transposed":
            shape[-1], shape[-2] = shape[-2], shape[-1]
        elif base.type.rank >= 1 and scope.min_dim(shape[0]) >= 1 and ch.boolean(0.35):
            view, shape[0] = "offset", shapes.add(shape[0], -1)  # base[1:]: overlaps the base one row on
        name = f"x{n}"
        # drawn behind the alias's own draw: only programs with an aliased argument change
        rebase = base.type.is_float and base.layout != "expanded" and ch.boolean(NONLEAF_VIEW_P)
        extra.append(Input(name, TensorType(tuple(shape), base.type.dtype), base.layout,
                           kind="alias", alias_of=base.name,
                           view=NONLEAF + view.replace("same", "view") if rebase else view))
        n += 1
        scope.vals.append(Val(name, TensorType(tuple(shape), base.type.dtype), bval.bound, bval.root,
                              bval.writable, is_input=True))
        if rebase:
            _write_nonleaf_view(ch, scope, scope.vals[-1])
    for _ in range(ch.integer(0, 2) if ch.boolean(0.35) else 0):
        kind = ch.choice(("int", "float"))
        name = f"x{n}"
        n += 1
        extra.append(Input(name, TensorType((), "int64" if kind == "int" else "float64"), kind=kind))
        ctx.scalars.append((name, kind))
    return extra


#: the ``Input.view`` prefix of an aliased argument taken as a view of a non-leaf copy of its base
#: (``(base * 1)[...]``, an activation's view as a layer hands it on): it requires grad once the
#: base does, without being a leaf, so the program may write it in place and autograd rebases it
NONLEAF = "nonleaf:"
#: share of the aliased arguments (of a float base) taken so and written in place
NONLEAF_VIEW_P = 0.3
#: the first statement's in-place write of such an argument: (template, bound factor, add to bound)
NONLEAF_WRITES = (("{0}.mul_(2)", 2.0, 0.0), ("{0}[:1] = {0}[:1] * 0.5", 1.0, 0.0),
                  ("{0}.add_(torch.tanh({0}))", 1.0, 1.0))


def _write_nonleaf_view(ch: ChoiceStream, scope: StructScope, x: Val) -> None:
    """The program's first statement writes the non-leaf view ``x`` in place, before anything
    reads it (a read saved for backward and then overwritten would fail eager's backward). The
    view and its base are not written again: the base is a leaf that requires grad."""
    writes = NONLEAF_WRITES if x.type.rank >= 1 else NONLEAF_WRITES[::2]
    template, factor, plus = ch.choice(writes)
    scope.mutate("input:view_write" + GRAD_SAFE_SUFFIX, template, (Ref(x.name),), x, x.bound * factor + plus)
    for v in scope.all_vals():
        if v.root == x.root:
            v.writable = False


def setup_state(ch: ChoiceStream, scope: StructScope, inputs: list[Input], ctx: Context) -> None:
    """Globals (closures over module-level names) and, sometimes, an nn.Module."""
    tensors = [i for i in inputs if i.kind == "tensor"]
    for k in range(ch.integer(0, 2) if ch.boolean(0.3) else 0):
        kind = ch.choice(("tensor", "int", "float"))
        name = f"G{k}"
        if kind == "tensor":
            shape = ch.choice(tensors).type.shape if tensors and ch.boolean(0.7) else ()
            t = TensorType(shape, "float32")
            if not scope.fits(t):
                t = TensorType((), "float32")
            ctx.globals.append(Global(name, kind, t))
            scope.vals.append(Val(name, t, 2.0, name, True))
        else:
            ctx.globals.append(Global(name, kind))
    if ch.boolean(0.25):
        ctx.module = True
        for k in range(ch.integer(0, 2)):
            t = TensorType(ch.choice(((), (1,))), "float32")
            ctx.state.append(StateTensor(f"p{k}", t, "param"))
            scope.vals.append(Val(f"self.p{k}", t, 2.0, f"self.p{k}", writable=False))
        if ch.boolean(0.6):
            t = TensorType(ch.choice(((), (1,))), "float32")
            ctx.state.append(StateTensor("buf0", t, "buffer"))
            scope.vals.append(Val("self.buf0", t, 2.0, "self.buf0", writable=True))
        if ch.boolean(0.5):
            k = ch.choice((1, 3, 8))
            ctx.state.append(StateTensor("lin_w", TensorType((k, 1), "float32"), "param"))
            ctx.state.append(StateTensor("lin_b", TensorType((k,), "float32"), "param"))
            ctx.linear = ("self.lin_w", "self.lin_b", k)


# ---- conditions ----------------------------------------------------------------------
