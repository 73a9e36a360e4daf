#!/usr/bin/env python3
"""fuzzcomp repro: aliasing at stage backend.

alias of output tensor 0: eager='shares storage with x0' compiled='fresh'

fuzzcomp 0.0-golden (generator 0.8) | torch 2.x-golden (git 0123456789ab)
Python 3.x | golden-platform
seed: 5 | bucket: aliasing-backend-0891a3d8 (alias of output tensor N: eager='shares storage with xN' compiled='fresh')

Run `python THIS_FILE.py`: exit 1 while the bug shows, 0 once it is fixed.
Judged like PyTorch's fuzzer reports: fp64 reference, fallback_random, RNG reset
per call, eager run twice to screen its own nondeterminism.
"""
import sys

import torch
import torch._inductor.config
from fuzzcomp.planted import break_aliasing as planted_backend  # the custom backend under test
torch._inductor.config.fallback_random = True
torch.set_num_threads(1)  # as the campaign's workers ran: parallel reductions sum in another order

def fn(x0):
    v3 = torch.movedim(x0, 0, 0)
    return (v3,)


# (name, shape: ints or symbolic sizes, dtype, memory layout[, kind info])
INPUTS = [
    ('x0', (), 'float32', 'contiguous'),
]
# module parameters/buffers and tensor globals, loaded with seeded values before each call
STATE = [
]
SYMBOLS = ()
# one entry per call, in order: (a size for each symbol, value seed[, call state:
# scalar arguments, scalar globals, grad mode, requires_grad, dynamic marks])
CALLS = [
    ((), 0),
]
DEVICE = 'cpu'
# float inputs that require grad: backward of sum(out * fixed weights) is checked too
REQUIRES_GRAD = ['x0']
# compile events the schedule may cost (Dynamo's documented guards, modelled conservatively)
MAX_COMPILE_EVENTS = 1
FLOOR_EPS = 0.0  # the coarsest float type the program casts to (fp64 rule floor)
FLOOR_EPS_OF = {}  # outputs whose value never passed through that type
REDUCE_N = 1  # the most terms one sum can add (fp64 rule floor: sqrt(n) steps)
COARSE_EPS = 1.1920928955078125e-07  # floor when the fp64 run fails: the coarsest float type in the program
COMPILE = dict(backend=planted_backend, dynamic=None, fullgraph=False)
PERTURB_EPS, PERTURB_DRAWS = 4.0, 2

# ---- fuzzcomp runtime: seeded inputs with layouts, one call -> outputs + inputs after ----
import collections  # noqa: E402
import contextlib  # noqa: E402
import math  # noqa: E402
import traceback  # noqa: E402

Outcome = collections.namedtuple("Outcome", "values labels error")
# values: list of detached tensors (outputs, then inputs after the call; with run_call's
#         ``aliases=True`` one alias string per output tensor; with ``grad=True`` the grad
#         of every input that requires grad, None where autograd gave none)
# error:  None, or (exception type name, one-line message, last frames); an error raised
#         in backward has frames starting with "backward: " (parity is judged per call)


def _base_values(shape, dtype, seed, perturb, draw, perturb_floor=0.0):
    g = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dtype)
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=g).to(dt)
    if dt.is_floating_point:
        t = (torch.rand(shape, generator=g, dtype=torch.float64) * 4 - 2).to(dt)
        return _jitter(t, seed, perturb, draw, perturb_floor) if perturb else t
    lo = 0 if dtype == "uint8" else -8
    return torch.randint(lo, 9, shape, generator=g).to(dt)


def _jitter(t, seed, perturb, draw, perturb_floor=0.0):
    """``t`` with each element moved by a relative ``perturb`` machine epsilons (noise seeded
    by ``seed`` and ``draw``), in its own dtype."""
    g2 = torch.Generator().manual_seed(seed * 1_000_003 + draw + 1)
    noise = torch.rand(t.shape, generator=g2, dtype=torch.float64) * 2 - 1
    eps = max(torch.finfo(t.dtype).eps, perturb_floor)
    return (t.double() * (1 + perturb * eps * noise)).to(t.dtype)


def _perturbed_copies(shape, base_shape, dtype, seed, perturb, draw, special, perturb_floor):
    """A perturbed run's expanded float input, materialised. The copies of a broadcast input are
    equal only by construction, so each copy moves on its own (once, by ``perturb`` epsilons, as
    every other input's elements do): a result exact only because the copies agree (a norm over
    equal rows) then shows as ill-conditioned, not as the compiler's error. Special values stay
    exactly where and what the unperturbed input has them."""
    row = _base_values(base_shape, dtype, seed, 0.0, 0)
    out = _jitter(row.expand(shape), seed, perturb, draw, perturb_floor)
    if special:
        salted = salt_special(row, seed)
        out = torch.where((salted != row).expand(shape), salted.expand(shape), out)
    return out


def salt_special(t, seed):
    """About a third of the elements of a float tensor replaced (seeded) by special values:
    NaN, +-inf, -0.0, +0.0, +-the largest finite value and +-the smallest normal (no subnormals:
    GPU kernels flush them to zero by design, which is no compiler bug). float64 takes float32's
    extremes: no wider type can judge it, and at its own largest value a legal reordering of a
    product overflows where eager's order does not."""
    if t.numel() == 0 or not t.dtype.is_floating_point:
        return t
    fi = torch.finfo(torch.float32 if t.dtype == torch.float64 else t.dtype)
    pool = torch.tensor([math.nan, math.inf, -math.inf, -0.0, 0.0, fi.max, -fi.max, fi.tiny, -fi.tiny],
                        dtype=torch.float64).to(t.dtype)
    g = torch.Generator().manual_seed(seed * 7 + 5)
    pick = torch.rand(t.shape, generator=g) < 0.3
    idx = torch.randint(0, len(pool), t.shape, generator=g)
    return torch.where(pick, pool[idx], t)


def make_input(shape, dtype, layout="contiguous", seed=0, device="cpu", upcast=False, perturb=0.0,
               draw=0, special=False, perturb_floor=0.0):
    """A tensor of ``shape``/``dtype`` with seeded values and the given memory layout.

    upcast: float tensors become float64 holding the same values (the fp64 reference).
    perturb: relative noise of ``perturb`` machine epsilons on float values (``draw`` picks the noise);
    an expanded input is then materialised, each of its copies moved on its own;
    ``perturb_floor``: an epsilon no finer than this (a call under autocast computes in bfloat16).
    special: float values salted with special values (``salt_special``).
    """
    shape = tuple(shape)
    base_shape = list(shape)
    if layout == "transposed":
        base_shape[-1], base_shape[-2] = base_shape[-2], base_shape[-1]
    elif layout == "sliced":
        base_shape[-1] = base_shape[-1] * 2
    elif layout == "expanded":
        base_shape[0] = 1
    elif layout == "offset":
        base_shape = [math.prod(shape) + 3]
    if layout == "expanded" and perturb and getattr(torch, dtype).is_floating_point:
        t = _perturbed_copies(shape, tuple(base_shape), dtype, seed, perturb, draw, special, perturb_floor)
        return (t.to(torch.float64) if upcast else t).to(device)
    base = _base_values(tuple(base_shape), dtype, seed, perturb, draw, perturb_floor)
    if special:
        base = salt_special(base, seed)
    if upcast and base.dtype.is_floating_point:
        base = base.to(torch.float64)
    base = base.to(device)
    if layout == "transposed":
        return base.transpose(-1, -2)
    if layout == "sliced":
        return base[..., ::2]
    if layout == "expanded":
        return base.expand(shape)
    if layout == "offset":
        return base[3:].view(shape)
    if layout == "channels_last":
        return base.contiguous(memory_format=torch.channels_last)
    return base


def make_inputs(specs, sizes, seed, device="cpu", upcast=False, perturb=0.0, draw=0, call_extra=None,
                requires_grad=(), perturb_floor=0.0):
    """specs: [(name, shape with symbol names or ints, dtype, layout[, info])], sizes: {symbol: int}.

    info (optional dict): kind tensor|list|tuple|dict (``count`` tensors)|int|float (the value
    comes from ``call_extra["scalars"]``)|alias (a view of input number ``of``: view same|view|transposed|offset, the last ``base[1:]``;
    prefixed ``nonleaf:``, the same view of ``base * 1``: a non-leaf view once the base requires grad).
    call_extra (optional dict): scalars, inference_inputs, requires_grad (names), marks
    ((name, dim, mark|maybe) for torch._dynamo.mark_dynamic / maybe_mark_dynamic).
    requires_grad: more names of float inputs that become leaves requiring grad (in place, so
    strides, storage and aliases between inputs are kept).
    """
    extra = call_extra or {}
    scalars = dict(extra.get("scalars", ()))
    out = []
    creation = torch.inference_mode() if extra.get("inference_inputs") else contextlib.nullcontext()
    with creation:
        for i, spec in enumerate(specs):
            name, shape, dtype, layout = spec[:4]
            info = spec[4] if len(spec) > 4 else {}
            kind = info.get("kind", "tensor")
            if kind in ("int", "float"):
                out.append(scalars[name])
                continue
            if kind == "alias":  # taken once the bases require grad (below)
                out.append(None)
                continue
            concrete = [sizes[d] if isinstance(d, str) else d for d in shape]
            if kind in ("list", "tuple", "dict"):
                elems = [make_input(concrete, dtype, layout, (seed * 31 + i) * 7 + j, device, upcast, perturb,
                                    draw, perturb_floor=perturb_floor) for j in range(info["count"])]
                out.append(elems if kind == "list" else tuple(elems) if kind == "tuple"
                           else {f"k{j}": e for j, e in enumerate(elems)})
                continue
            out.append(make_input(concrete, dtype, layout, seed * 31 + i, device, upcast, perturb, draw,
                                  special=info.get("special", False), perturb_floor=perturb_floor))
    names = [spec[0] for spec in specs]

    def leaves_require_grad():
        for name in dict.fromkeys(tuple(extra.get("requires_grad") or ()) + tuple(requires_grad)):
            x = out[names.index(name)] if name in names else None
            if isinstance(x, torch.Tensor) and x.dtype.is_floating_point and not x.is_inference() \
                    and x.is_leaf and not x.requires_grad:
                x.requires_grad_()
    leaves_require_grad()
    # an alias is a view of its base as autograd sees it: taken before the base required grad,
    # it would require grad with no path back to the base, and eager's backward would skip what
    # the base's gradient needs (a saved tensor the program then writes in place)
    with creation:
        for i, spec in enumerate(specs):
            info = spec[4] if len(spec) > 4 else {}
            if info.get("kind") == "alias":
                base, view = out[info["of"]], info.get("view", "same")
                if view.startswith("nonleaf:"):  # a view of a non-leaf copy: it may be written in place
                    base, view = base * 1, view[len("nonleaf:"):]
                out[i] = (base if view == "same" else base.transpose(-1, -2) if view == "transposed"
                          else base[1:] if view == "offset" else base.view(base.shape))
    leaves_require_grad()  # an alias named itself, of a base that does not require grad
    for name, dim, how in extra.get("marks", ()):
        dynamo = __import__("torch._dynamo", fromlist=["mark_dynamic"])
        mark = getattr(dynamo, "maybe_mark_dynamic" if how == "maybe" else "mark_dynamic", None)
        if mark is not None and name in names:
            mark(out[names.index(name)], dim)
    return out


def _resolve(namespace, path):
    obj = namespace[path.split(".")[0]]
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _owner(namespace, path):
    """(object holding the attribute, attribute name) for a dotted state path."""
    parent = _resolve(namespace, path.rsplit(".", 1)[0])
    return parent, path.rsplit(".", 1)[1]


def load_state(namespace, state_specs, sizes, seed, call_extra=None, device="cpu", upcast=False,
               perturb=0.0, draw=0, perturb_floor=0.0):
    """Before a call: seeded values into parameters/buffers (``MODEL.p0``) and tensor globals,
    and the call's scalar globals. state_specs: [(path, shape, dtype, kind param|buffer|global)].

    Every call starts from fresh, detached state, as a training step does after
    ``zero_grad(set_to_none=True)``: parameter grads are set to None (a grad accumulated by an
    earlier call would otherwise live on, in CUDA-graph memory the next replay overwrites), a
    buffer that picked up autograd history is replaced by a plain tensor, and a parameter or
    buffer whose device, dtype or shape changes is replaced by a new tensor rather than moved
    with ``.data =`` (which keeps the old grad and its device)."""
    for i, (path, shape, dtype, kind) in enumerate(state_specs):
        concrete = [sizes[d] if isinstance(d, str) else d for d in shape]
        t = make_input(concrete, dtype, "contiguous", seed * 31 + 1009 + i, device, upcast, perturb, draw,
                       perturb_floor=perturb_floor)
        if kind == "buffer_var":  # a running variance: positive
            t = t.abs() + 0.5
        if kind == "global":
            namespace[path] = t
            continue
        owner, attr = _owner(namespace, path)
        target = getattr(owner, attr)
        same = target.dtype == t.dtype and target.shape == t.shape and target.device == t.device
        if kind == "param":
            target.grad = None
            if same and target.is_leaf:
                with torch.no_grad():
                    target.copy_(t)
            else:
                setattr(owner, attr, torch.nn.Parameter(t, requires_grad=target.requires_grad))
        elif same and not target.requires_grad and not target.is_inference():
            with torch.no_grad():
                target.copy_(t)
        else:  # history from an earlier call, or a new device/shape: a fresh buffer
            owner._buffers[attr] = t
    for name, value in (call_extra or {}).get("globals", ()):
        namespace[name] = value


def state_after(namespace, state_specs):
    """(label, value) of every buffer and tensor global, read after a call."""
    return [(f"{kind} {path} after call", _resolve(namespace, path))
            for path, _shape, _dtype, kind in state_specs if kind.startswith("buffer") or kind == "global"]


def _flatten(obj, prefix, values, labels):
    if isinstance(obj, torch.Tensor):
        values.append(obj.detach().clone())
        labels.append(prefix)
    elif isinstance(obj, (list, tuple)):
        for i, x in enumerate(obj):
            _flatten(x, f"{prefix}[{i}]", values, labels)
    elif isinstance(obj, dict):
        for k in sorted(obj, key=str):
            _flatten(obj[k], f"{prefix}[{k!r}]", values, labels)
    else:
        values.append(obj)
        labels.append(prefix)


_GRAD_MODES = {"no_grad": torch.no_grad, "inference": torch.inference_mode}


def _error(e, stage=""):
    frames = traceback.extract_tb(e.__traceback__)[-3:]
    where = " <- ".join(f"{f.name}" for f in reversed(frames))
    # wrapped compiler errors put the real one on later lines: keep a few, joined by " | "
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    carets = [i for i, ln in enumerate(lines) if set(ln) == {"^"}]
    if carets and lines and lines[0].endswith(":") and " at " in f" {lines[0]}":
        # Triton's CompilationError: "at L:C:", source lines, "^", then the cause: cause first
        lines = lines[:1] + lines[carets[-1] + 1:] + lines[1:carets[-1]]
    for i, ln in enumerate(lines[1:4], 1):
        # Dynamo's fake-tensor wrapper names the real error last, after the FX node's arguments
        # (a long list of FakeTensors): put it second, so the cut below keeps it
        if "with fake tensors" in ln and "): got " in ln:
            lines.insert(1, "got " + ln.split("): got ", 1)[1])
            break
    head = next((i for i, ln in enumerate(lines[:3]) if ln.endswith("C++ compile error")), None)
    if head is not None:
        # the compiler's first error comes after the command line and the source path: next
        first = next((ln for ln in lines[head + 1:] if " error: " in ln), None)
        if first:
            lines.insert(head + 1, "error: " + first.split(" error: ", 1)[1])
    msg = " | ".join(lines[:6])[:600]
    return (type(e).__name__, msg, stage + where)


def _history(x):
    """A float tensor carrying autograd history (a mutated input or buffer that took in a value
    requiring grad): part of the loss, since a compiled backward covers it."""
    return isinstance(x, torch.Tensor) and x.dtype.is_floating_point and x.requires_grad \
        and not x.is_leaf


def global_state():
    """The torch globals a call may change: grad mode, deterministic algorithms, default dtype."""
    return (torch.is_grad_enabled(), torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_default_dtype())


def restore_global_state(state):
    torch.set_grad_enabled(state[0])
    torch.use_deterministic_algorithms(state[1], warn_only=state[2])
    torch.set_default_dtype(state[3])


def _caller_context(grad_mode, caller, inputs):
    """The contexts the caller sets around the call: grad mode, autocast, deterministic."""
    stack = contextlib.ExitStack()
    stack.enter_context(_GRAD_MODES.get(grad_mode, contextlib.nullcontext)())
    if "autocast" in caller:
        dev = next((x.device.type for x in inputs if isinstance(x, torch.Tensor)), "cpu")
        stack.enter_context(torch.autocast(dev, dtype=torch.bfloat16))
    if "deterministic" in caller:
        prev = global_state()
        torch.use_deterministic_algorithms(True)
        stack.callback(restore_global_state, prev)
    return stack


def _overlaps(t):
    check = getattr(torch, "_debug_has_internal_overlap", None)
    return check is not None and check(t) == 1


def _caller_mutations(result, inputs, names, caller, values, labels, reference=False):
    """The caller's writes after the call: the first float output (then the inputs are read
    again, seeing it through any alias), or the first float input (between forward and backward).
    Returns what backward starts from in place of ``result``.

    reference: the write made so that it cannot invalidate a tensor saved for backward, the
    right answer where eager's backward refuses the real write: the input write is left out (it
    is made under no_grad, outside the graph, so the gradient is that of the forward as
    computed), the output write becomes ``out * 2`` in the loss (out of place). An output that
    shares storage with another output or an input has no such equivalent: ``CallerWriteAliased``."""
    loss_of = result
    if "mutate_output" in caller:
        tensors = _tensors(result, [])
        outs = [t for t in tensors if t.dtype.is_floating_point]
        if outs and not _overlaps(outs[0]):
            if reference:
                key = _storage_key(outs[0])
                others = [t for t in tensors if t is not outs[0]] + _tensors(list(inputs), [])
                if key is None or any(_storage_key(t) == key for t in others):
                    raise CallerWriteAliased("the written output shares storage with another output "
                                             "or an input: it has no out-of-place equivalent")
                loss_of = [t * 2 if t is outs[0] else t for t in tensors]
            else:
                outs[0].mul_(2)
            for name, x in zip(names, inputs):
                _flatten(x, f"input {name} after output mutation", values, labels)
    if "mutate_input" in caller and not reference:
        xs = [x for x in inputs if isinstance(x, torch.Tensor) and x.dtype.is_floating_point]
        if xs and not _overlaps(xs[0]):
            with torch.no_grad():
                xs[0].mul_(2)
    return loss_of


class CallerWriteAliased(Exception):
    """The caller's output write has no out-of-place equivalent (``_caller_mutations``)."""


def output_meta(result, inputs):
    """[(label, description)] per output tensor: requires_grad, is_leaf, inference, and for an
    output sharing storage with an input, whether it is a view (in-place writes through it reach
    the input, and autograd treats it as one)."""
    keys = {_storage_key(x) for x in inputs if isinstance(x, torch.Tensor)} - {None}
    out = []
    for i, t in enumerate(_tensors(result, [])):
        shares = _storage_key(t) in keys
        out.append((f"alias meta of output tensor {i}",
                    f"requires_grad={t.requires_grad} leaf={_leaf(t)} inference={t.is_inference()}"
                    + (f" view={t._is_view()}" if shares else "")))
    return out


def _leaf(t):
    """``t.is_leaf``, or "invalid" for an output of a multi-output view op (split, chunk) whose
    base was written in place: autograd refuses to say, and touching it raises."""
    try:
        return t.is_leaf
    except RuntimeError:
        return "invalid"


def run_call(fn, inputs, names, rng_seed=0, grad_mode="grad", after=None, aliases=False, grad=False,
             caller=(), caller_ref=False):
    """Call ``fn(*inputs)`` with the RNG reset; return outputs and the inputs after the call.

    grad_mode: grad | no_grad | inference (the call runs under that mode); after: optional
    zero-argument callable giving extra (label, value) pairs to report after the call.
    aliases: also record, per output tensor, which inputs it shares storage with, and its
    autograd metadata (``output_meta``).
    grad: also run backward (``backward_weights``) and record the grad of every input that
    requires grad. An error in backward is the call's error: parity covers the whole call.
    The loss reaches every output and every input or state tensor the call left with autograd
    history (mutated in place with a value that requires grad).
    caller: actions of the caller around the call (autocast, deterministic, mutate_output,
    mutate_input). The torch globals after the call are reported (``state torch globals after
    call``) and then restored, so one call never leaks into the next.
    caller_ref: the caller's writes made so they cannot invalidate a saved tensor (the reference
    where eager's backward refuses the real write; ``_caller_mutations``).
    """
    for x in inputs:  # grads are the call's own, as after zero_grad(set_to_none=True)
        if isinstance(x, torch.Tensor) and x.is_leaf and x.grad is not None:
            x.grad = None
    torch.manual_seed(rng_seed)
    saved = global_state()
    values, labels = [], []
    state = []
    try:
        try:
            with _caller_context(grad_mode, caller, inputs):
                result = fn(*inputs)
                gstate = global_state()
        except Exception as e:  # the program's own failure is data, not a harness error
            return Outcome([], [], _error(e))
        _flatten(result, "output", values, labels)
        for name, x in zip(names, inputs):
            _flatten(x, f"input {name} after call", values, labels)
        state = list(after()) if after is not None else []
        for label, x in state:
            _flatten(x, label, values, labels)
        values.append("grad={} deterministic={} warn_only={} default_dtype={}".format(*gstate))
        labels.append("state torch globals after call")
        if aliases:
            for label, rel in alias_relations(result, inputs, names) + output_meta(result, inputs):
                values.append(rel)
                labels.append(label)
    finally:
        restore_global_state(saved)
    loss_of = result
    if caller:
        try:
            with _caller_context(grad_mode, (), inputs):
                loss_of = _caller_mutations(result, inputs, names, caller, values, labels, caller_ref)
        except Exception as e:
            return Outcome([], [], _error(e, "caller: "))
    leaves = [isinstance(x, torch.Tensor) and x.is_leaf and x.requires_grad for x in inputs]
    mutated = [x for x in _tensors(list(inputs) + [v for _, v in state], []) if _history(x)]
    # backward runs whenever an output carries grad (inputs or module parameters): compiled code
    # traces backward at compile time, so eager must run it too for parity over the whole call
    if grad and (any(leaves) or mutated or any(t.requires_grad for t in _tensors(result, []))):
        try:
            run_backward((loss_of, mutated), rng_seed)
        except Exception as e:
            return Outcome([], [], _error(e, "backward: "))
        for name, x, leaf in zip(names, inputs, leaves):
            if leaf:
                values.append(None if x.grad is None else x.grad.detach().clone())
                labels.append(f"grad of input {name}")
    return Outcome(values, labels, None)


def perturb_floor(entry) -> float:
    """The perturbed runs' epsilon floor for one call ``entry``: under autocast the call computes
    in bfloat16, and compiled code may round at other points, so the perturbed runs that tell
    ill-conditioning from a bug move values by bfloat16 steps."""
    extra = entry[2] if len(entry) > 2 else {}
    return 2.0 ** -7 if "autocast" in tuple(extra.get("caller", ())) or extra.get("autocast") else 0.0


def fine_entry(entry):
    """``entry`` with the program's autocast mark dropped, when it is what coarsens the perturbed
    runs (None otherwise): perturbed runs for the values that never pass through bfloat16."""
    extra = entry[2] if len(entry) > 2 else {}
    if not extra.get("autocast") or "autocast" in tuple(extra.get("caller", ())):
        return None
    return (entry[0], entry[1], {k: v for k, v in extra.items() if k != "autocast"})


def run_scheduled(namespace, fn, specs, state_specs, symbols, entry, device="cpu", upcast=False,
                  perturb=0.0, draw=0, requires_grad=(), aliases=False, grad=False, step_begin=False,
                  caller_ref=False):
    """Run one call-table entry ``(sizes, seed[, extra])`` of ``fn`` defined in ``namespace``.

    step_begin: start a new CUDA-graph step first, as a training loop does between iterations
    (outputs are cloned as soon as the call returns, before the next replay can reuse them).
    caller_ref: the caller's writes in their reference form (``run_call``).
    extra may also hold ``caller`` (actions around the call; ``eval`` puts ``MODEL`` in eval
    mode, else it is in train mode), ``rebound`` (globals the program rebinds: None before
    the call, reported after it) and ``autocast`` (the program computes in bfloat16 somewhere:
    perturbed runs, like a caller's autocast, move inputs by bfloat16 steps)."""
    sizes, seed = entry[0], entry[1]
    extra = entry[2] if len(entry) > 2 else {}
    env = dict(zip(symbols, sizes))
    caller = tuple(extra.get("caller", ()))
    floor = perturb_floor(entry)
    load_state(namespace, state_specs, env, seed, extra, device, upcast, perturb, draw, floor)
    if isinstance(namespace.get("MODEL"), torch.nn.Module):
        namespace["MODEL"].train("eval" not in caller)
    rebound = tuple(extra.get("rebound", ()))
    for name in rebound:
        namespace[name] = None
    inputs = make_inputs(specs, env, seed, device, upcast, perturb, draw, call_extra=extra,
                         requires_grad=requires_grad, perturb_floor=floor)
    after = None
    if state_specs or rebound:
        def after():
            return state_after(namespace, state_specs) + [(f"state global {n} after call", namespace[n])
                                                          for n in rebound]
    if step_begin:
        mark_step_begin()
    return run_call(fn, inputs, [spec[0] for spec in specs], seed, extra.get("grad_mode", "grad"), after,
                    aliases=aliases, grad=grad, caller=caller, caller_ref=caller_ref)


def mark_step_begin():
    """``torch.compiler.cudagraph_mark_step_begin()`` where torch has it (False otherwise)."""
    mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
    if mark is None:
        return False
    mark()
    return True


def _tensors(obj, out):
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _tensors(x, out)
    elif isinstance(obj, dict):
        for k in sorted(obj, key=str):
            _tensors(obj[k], out)
    return out


def _storage_key(t):
    try:
        st = t.untyped_storage()
        return (st.data_ptr(), t.device) if st.nbytes() > 0 else None
    except Exception:  # a tensor without storage (sparse, functional wrapper): no relation
        return None


def alias_relations(result, inputs, names):
    """[(label, relation)]: per output tensor, the inputs it shares storage with ("fresh": none).

    A zero-element tensor reads and writes no memory, so whether it shares a storage is an
    implementation detail: its relation is "empty" (never judged), and empty inputs are left out.
    """
    keys = {}
    for name, x in zip(names, inputs):
        if isinstance(x, torch.Tensor) and x.numel() > 0:
            k = _storage_key(x)
            if k is not None:
                keys.setdefault(k, []).append(name)
    out = []
    for i, t in enumerate(_tensors(result, [])):
        if t.numel() == 0:
            out.append((f"alias of output tensor {i}", "empty"))
            continue
        k = _storage_key(t)
        shared = keys.get(k, []) if k is not None else []
        out.append((f"alias of output tensor {i}", "shares storage with " + ", ".join(shared)
                     if shared else "fresh"))
    return out


def backward_weights(shape, seed, dtype):
    """Fixed seeded weights k/64, k in [-64, 64]: exact in every float dtype."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(-64, 65, tuple(shape), generator=g, dtype=torch.int64) / 64).to(dtype)


def run_backward(result, seed):
    """Backward of the scalar loss sum_i sum(out_i * w_i) over the differentiable float outputs."""
    outs = [t for t in _tensors(result, []) if t.dtype.is_floating_point and t.requires_grad]
    if not outs:
        return
    weights = [backward_weights(t.shape, seed * 7919 + i, t.dtype).to(t.device)
               for i, t in enumerate(outs)]
    torch.autograd.backward(outs, grad_tensors=weights)

# ---- the fp64 rule (PyTorch's fuzzer rule) ----
#: torch._dynamo.utils.same's default absolute allowance beside its multiplier (tol=1e-4, tol / 10)
SAME_FLOOR = 1e-5
#: roundings of a float16/bfloat16 value's own type in the floor: compiled code may round a half
#: result once where eager's is exact (Inductor computes half math in float32 and rounds at the
#: end). Measured on 1196 real-Inductor seeds (benchmarks/oracle_fp_rate.py): same()'s default,
#: which allows none, flagged no native half value beyond this rule; 4 let 1% errors pass at 1.
HALF_ROUNDINGS = 1
_EPS = {torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7, torch.float32: 2.0 ** -23,
        torch.float64: 2.0 ** -52}


def bitwise_same(a, b):
    """Same shape, dtype and bits (NaN equal to NaN)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.is_floating_point or a.dtype.is_complex:
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return bool(torch.equal(a, b))


def _rmse(a, b):
    if a.numel() == 0:
        return 0.0
    return math.sqrt(float(torch.mean((a - b) ** 2)))


def _first_diff(e, c, diff):
    idx = tuple(int(i) for i in diff.nonzero()[0]) if diff.any() else ()
    return f"first at {list(idx)}: eager={e[idx].item()!r} compiled={c[idx].item()!r}"


def off_nan_inputs(eager, label, values):
    """``values`` of the gradient ``label`` with the elements where its input is NaN set to 0
    (``eager``: a run's outcome, with ``labels`` and ``values``, holding ``input NAME after call``).
    The gradient at a NaN input is no defined number (eager's own CPU softshrink backward gives 0 in
    its vector lanes and 1 in the scalar tail, #195075), so no run is a witness there."""
    name = label[len("grad of input "):] if label.startswith("grad of input ") else None
    if name is None or f"input {name} after call" not in eager.labels:
        return values
    x = eager.values[eager.labels.index(f"input {name} after call")]
    if not (isinstance(x, torch.Tensor) and x.dtype.is_floating_point):
        return values
    nan = x.detach().cpu().isnan()
    if not nan.any():
        return values
    return [v.detach().cpu().masked_fill(nan, 0.0) if isinstance(v, torch.Tensor) and v.shape == nan.shape
            and v.dtype.is_floating_point else v for v in values]


def compare(eager, eager_again, ref64, compiled, perturbed=(), strict=False, floor_eps=0.0, reduce_n=1,
            coarse_eps=0.0):
    if eager is None or compiled is None:
        if eager is None and compiled is None:
            return "ok", ""
        return "mismatch", (f"eager gave {'None' if eager is None else 'a tensor'}, "
                            f"compiled {'None' if compiled is None else 'a tensor'}")
    if not isinstance(eager, torch.Tensor):
        if eager != eager_again and eager == eager:
            return "skip", "eager returned different non-tensor values on two runs"
        same = eager == compiled or (isinstance(eager, float) and eager != eager and compiled != compiled)
        return ("ok", "") if same else ("mismatch", f"eager={eager!r} compiled={compiled!r}")
    if not isinstance(compiled, torch.Tensor):
        return "mismatch", f"compiled returned {type(compiled).__name__}, eager a tensor"
    if compiled.shape != eager.shape:
        # a data-dependent shape (nonzero, masked_select, unique) decided by comparing values that
        # sit on a tie: the fp64 run or a perturbed eager run moves it too (a bfloat16 sin landing
        # exactly on the threshold in eager, one float32 rounding off it compiled)
        if any(isinstance(w, torch.Tensor) and w.shape != eager.shape for w in (ref64, *perturbed)):
            return "skip", "a data-dependent shape sits on a tie: the fp64 or a perturbed run changes it too"
        return "mismatch", f"shape: eager {tuple(eager.shape)} compiled {tuple(compiled.shape)}"
    if compiled.dtype != eager.dtype:
        return "mismatch", f"dtype: eager {eager.dtype} compiled {compiled.dtype}"
    e, c = eager.detach().cpu(), compiled.detach().cpu()
    if not isinstance(eager_again, torch.Tensor) or not bitwise_same(e, eager_again.detach().cpu()):
        return "skip", "eager is nondeterministic on this value"
    perturbed = [p.detach().cpu() for p in perturbed
                 if isinstance(p, torch.Tensor) and p.shape == e.shape]
    ref = ref64.detach().cpu() if isinstance(ref64, torch.Tensor) and ref64.shape == e.shape else None
    if not e.dtype.is_floating_point:
        return _compare_exact(e, c, ref, perturbed)
    if strict and e.dtype in (torch.float16, torch.bfloat16):
        return _compare_strict(e, c)
    if ref is None:  # eager is the only witness: it may have rounded where compiled need not
        floor_eps = max(floor_eps, coarse_eps)
    return _compare_float(e, c, ref, perturbed, floor_eps, reduce_n)


def _compare_strict(e, c):
    ed, cd = e.double(), c.double()
    fin_diff = ed.isfinite() != cd.isfinite()
    if fin_diff.any():
        return "mismatch", "strict: finiteness differs from eager; " + _first_diff(e, c, fin_diff)
    mask = ed.isfinite() & cd.isfinite()
    diff = (ed - cd).abs()
    diff[~mask] = 0
    over = diff > _EPS[e.dtype] * ed.abs()
    if not over.any():
        return "ok", ""
    return "mismatch", (f"strict: {int(over.sum())} elements differ from eager by more than one "
                        f"rounding step; max abs diff {float(diff.max()):.3g}; "
                        + _first_diff(e, c, over))


def _compare_exact(e, c, ref, perturbed):
    diff = e != c
    if not diff.any():
        return "ok", ""
    witnesses = [p for p in perturbed if p.dtype == e.dtype]
    if ref is not None:
        witnesses.append(ref.to(e.dtype) if ref.dtype != e.dtype else ref)
    for w in witnesses:
        if (w != e)[diff].any():
            return "skip", "differing elements sit on a tie or rounding boundary"
    n = int(diff.sum())
    return "mismatch", f"{n} of {e.numel()} elements differ; " + _first_diff(e, c, diff)


def _compare_float(e, c, ref, perturbed, floor_eps=0.0, reduce_n=1):
    ed, cd = e.double(), c.double()
    rd = ref.double() if ref is not None and ref.dtype.is_floating_point else ed
    r_fin, e_fin, c_fin = rd.isfinite(), ed.isfinite(), cd.isfinite()
    broke = r_fin & e_fin & ~c_fin
    if broke.any():
        return "mismatch", (f"compiled is non-finite at {int(broke.sum())} elements where eager and "
                            f"fp64 are finite; " + _first_diff(e, c, broke))
    mask = r_fin & e_fin & c_fin
    if not mask.any():
        return "ok", ""
    r, ev, cv = rd[mask], ed[mask], cd[mask]
    err_c, err_e = _rmse(r, cv), _rmse(r, ev)
    mult = 3.0 if (e.dtype in (torch.float16, torch.bfloat16) or r.numel() < 1000) else 2.0
    # a sum of n terms in another order moves by about sqrt(n) rounding steps of the type it
    # accumulates in (float32 for the half types): eager's cascade sum is no standard to hold to
    acc_eps = _EPS[torch.float64] if e.dtype == torch.float64 else _EPS[torch.float32]
    own = _EPS[e.dtype] * (HALF_ROUNDINGS / 4 if e.dtype in (torch.float16, torch.bfloat16) else 1)
    eps = max(own, floor_eps, acc_eps * math.sqrt(max(1, reduce_n)))
    rms = math.sqrt(float(torch.mean(r * r)))
    # 4 roundings of the values' own size, never below same()'s default absolute floor (tol/10):
    # an absolute 4-eps floor under rms 1 let several percent of relative error pass on small values
    floor = 4 * eps * max(1.0, rms) if rms >= 1.0 else max(4 * eps * rms, min(4 * eps, SAME_FLOOR))
    if err_c <= mult * err_e + floor:
        return "ok", ""
    if perturbed:
        err_p = max((_rmse(r, p.double()[mask]) if p.double()[mask].isfinite().all() else math.inf)
                    for p in perturbed)
        if err_c <= mult * max(err_e, err_p) + floor:
            return "skip", "ill-conditioned: a perturbed eager run moves as far from fp64"
    diff = (ed - cd).abs()
    diff[~mask] = 0
    which = "fp64" if ref is not None else "eager (no fp64 run)"
    return "mismatch", (f"rmse vs {which}: compiled {err_c:.3g} > {mult:g} x eager {err_e:.3g} + "
                        f"{floor:.2g}; max abs diff {float(diff.max()):.3g}; "
                        + _first_diff(e, c, diff == diff.max()))


def _graphs():
    from torch._dynamo.utils import counters
    return int(counters["stats"]["unique_graphs"])


def _limit_hit():
    from torch._dynamo.utils import counters
    return any("recompile limit" in k or "cache size limit" in k for k in counters["unimplemented"])


def _class_lost(e, r, c):
    """Where eager and the fp64 run agree that a value is NaN, +inf or -inf, compiled must too
    (the campaign's exact rule for special values); None when it does."""
    if not all(isinstance(t, torch.Tensor) and t.dtype.is_floating_point for t in (e, r, c))             or not e.shape == r.shape == c.shape:
        return None
    e, r, c = e.detach().cpu().double(), r.detach().cpu().double(), c.detach().cpu().double()
    for name, cls in (("NaN", torch.isnan), ("+inf", lambda t: t == math.inf), ("-inf", lambda t: t == -math.inf)):
        lost = cls(e) & cls(r) & ~cls(c)
        if lost.any():
            at = tuple(int(i) for i in lost.nonzero()[0])
            return f"{int(lost.sum())} elements where eager and fp64 are {name} are not compiled; first at {list(at)}: compiled={c[at].item()!r}"
    return None


def _caller_overwrote(eager, entry):
    """Eager's backward refused a tensor it saved, and the caller wrote a tensor after the call."""
    caller = (entry[2] if len(entry) > 2 else {}).get("caller", ())
    return eager.error[2].startswith("backward: ") and "modified by an inplace operation" in eager.error[1]         and any(a in caller for a in ("mutate_output", "mutate_input"))


def check():
    """None when compiled agrees with eager on every call, else a one-line problem."""
    compiled = torch.compile(fn, **COMPILE)

    def run(f, entry, **kw):
        return run_scheduled(globals(), f, INPUTS, STATE, SYMBOLS, entry, DEVICE,
                             requires_grad=REQUIRES_GRAD, aliases=True, grad=True, **kw)

    events, before = 0, _graphs()
    for k, entry in enumerate(CALLS):
        eager, again = run(fn, entry), run(fn, entry)
        ref, comp = run(fn, entry, upcast=True), run(compiled, entry)
        events += _graphs() > before
        before = _graphs()
        if comp.error and comp.error[0] == "ConstraintViolationError":
            continue  # mark_dynamic refused: the program specialised the dim, by design (as the judge)
        if comp.error and not eager.error:
            return f"call {k}: compiled raised {comp.error[0]}: {comp.error[1]} ({comp.error[2]})"
        only, wrote, ref_kw = "", "", {}
        if eager.error and not comp.error and _caller_overwrote(eager, entry):
            # the caller's write after the call overwrote a tensor eager saved for backward: eager
            # raises, compiled returned; its gradients must be those of eager without the write
            # (an output's write made out of place)
            ref_kw = dict(caller_ref=True)
            eager, again, ref = run(fn, entry, **ref_kw), run(fn, entry, **ref_kw), run(fn, entry, upcast=True, **ref_kw)
            if eager.error:
                continue  # the written output shares storage: no out-of-place reference, not judged
            only, wrote = "grad of input ", (" (after the caller's write, which eager's backward refuses; "
                                             "reference: eager without it, out of place for an output)")
        if eager.error and not comp.error:
            return f"call {k}: eager raised {eager.error[0]}: {eager.error[1]}; compiled returned"
        if eager.error:
            continue
        if eager.labels != comp.labels:
            return f"call {k}: eager gave values {eager.labels}, compiled {comp.labels}"
        perturbed = None
        for i, label in enumerate(eager.labels):
            if not label.startswith(only):
                continue
            r = ref.values[i] if ref.error is None and i < len(ref.values) else None
            e, a, r, c = off_nan_inputs(eager, label, [eager.values[i], again.values[i], r, comp.values[i]])
            floor = FLOOR_EPS_OF.get(label, FLOOR_EPS)
            status, why = compare(e, a, r, c, floor_eps=floor, reduce_n=REDUCE_N, coarse_eps=COARSE_EPS)
            lost = _class_lost(e, r, c) if status == "ok" and isinstance(e, torch.Tensor) and                 isinstance(a, torch.Tensor) and bitwise_same(e.detach().cpu(), a.detach().cpu()) else None
            if lost:
                return f"call {k}, {label}: {lost}"
            if status == "mismatch":  # could a tiny input perturbation explain it?
                if perturbed is None:
                    perturbed = [run(fn, entry, perturb=PERTURB_EPS, draw=d, **ref_kw)
                                 for d in range(PERTURB_DRAWS)]
                fine = fine_entry(entry) if label in FLOOR_EPS_OF else None
                runs = perturbed if fine is None else [run(fn, fine, perturb=PERTURB_EPS, draw=d)
                                                       for d in range(PERTURB_DRAWS)]
                pert = off_nan_inputs(eager, label, [p.values[i] for p in runs if p.error is None and i < len(p.values)])
                status, why = compare(e, a, r, c, pert, floor_eps=floor, reduce_n=REDUCE_N, coarse_eps=COARSE_EPS)
            if status == "mismatch":
                return f"call {k}, {label}: {why}{wrote}"
    for k, entry in enumerate(CALLS):  # replay: nothing seen before may compile again
        run(compiled, entry)
        if _graphs() > before:
            return f"replaying call {k} compiled a new graph"
    if MAX_COMPILE_EVENTS is not None and events > MAX_COMPILE_EVENTS:
        return f"{events} calls compiled, the schedule allows at most {MAX_COMPILE_EVENTS}"
    if _limit_hit():
        return "hit the Dynamo recompile limit"
    return None


def test_repro():
    problem = check()
    assert problem is None, problem


if __name__ == "__main__":
    problem = check()
    print(f"BUG: {problem}" if problem else "OK: compiled matches eager on every call")
    sys.exit(1 if problem else 0)

# fuzzcomp-case: eNqtU02P00AM/StVTiChqrsrJNQb4oTEYQV7QyhyE09qdTIzzEcgrfLfsSdpNtpm4cKlbd57du3nl0tRxmK/KT5BwOLdpqhA68DAhfHkNPLP75dZo/VVg/6F6MfATKPtAW7qR8pDXba2FiQ/SCcyCj2aCksyLkUpVFyPTLXgT6uNPP5M5DGUucl+Y5LWDAeeCvxqRUAU4U5+0hlvNUOWVbZ1lKF54RH55rCSaQ9QndBIq0Kl81n0W6fBRKz3B49wKkETBDJNdskaRc3aPDV2VGUfKpdEWvcGWqqel1H8xeu549KQ0TtRZD/RoIdofdmhD2SN9NttP0g/5y1Xt4tNHidEtrB1/8qBP4ZAjRER+Oa1FHxFJQqeOK/we1fwOFfyC0UhO9BJ2N3fqOyFdcLxGtVx29oOa8pD2pRrugd5iNiyzRFvlG8u+Q/u5ON+eJu1vVte8AlNsP5JQPF5YgulLcSHe8HCEeaKRSKGf+X5iNrhet7mLK/Z91nIbLFkpbRKwDEvycQppicaYxbz+MJq6CdPOFeRmmRTeHGGlXfjmp3ACSbQC+R/+SQXJfyVlxg945wmjc9Zvk6ozHTYct4u9xnBFcfk+uP727cHu3KFxbv9fvgDGaB9jQ==
