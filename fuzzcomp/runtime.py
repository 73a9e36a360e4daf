"""Self-contained run helpers, shared by the worker and by every repro file.

Contract: this module imports only ``torch`` and the standard library, and its
source is pasted verbatim into repro files, so a repro builds inputs and runs
calls exactly as the campaign did. ``make_input`` is deterministic in its
arguments; ``run_call`` returns plain data (an ``Outcome`` tuple), never raises
for errors raised by the program itself. ``run_scheduled`` applies one entry
of a call table ``(sizes, seed[, extra])`` the same way for every run (eager,
fp64, compiled): module state and globals (``load_state``), inputs with the
call's scalars, requires_grad, inference-mode creation and dynamic marks, and
the call's grad mode; buffers and tensor globals are reported after the call.
"""
import collections
import contextlib
import math
import traceback

import torch

Outcome = collections.namedtuple("Outcome", "values labels error")
# values: list of detached tensors (outputs, then inputs after the call; with run_call's
#         ``aliases=True`` one alias string per output tensor; with ``grad=True`` the grad
#         of every input that requires grad, None where autograd gave none)
# error:  None, or (exception type name, one-line message, last frames); an error raised
#         in backward has frames starting with "backward: " (parity is judged per call)


def _base_values(shape, dtype, seed, perturb, draw):
    g = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dtype)
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=g).to(dt)
    if dt.is_floating_point:
        t = (torch.rand(shape, generator=g, dtype=torch.float64) * 4 - 2).to(dt)
        if perturb:
            g2 = torch.Generator().manual_seed(seed * 1_000_003 + draw + 1)
            noise = torch.rand(shape, generator=g2, dtype=torch.float64) * 2 - 1
            eps = torch.finfo(dt).eps
            t = (t.double() * (1 + perturb * eps * noise)).to(dt)
        return t
    lo = 0 if dtype == "uint8" else -8
    return torch.randint(lo, 9, shape, generator=g).to(dt)


def make_input(shape, dtype, layout="contiguous", seed=0, device="cpu", upcast=False, perturb=0.0,
               draw=0):
    """A tensor of ``shape``/``dtype`` with seeded values and the given memory layout.

    upcast: float tensors become float64 holding the same values (the fp64 reference).
    perturb: relative noise of ``perturb`` machine epsilons on float values (``draw`` picks the noise).
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
    base = _base_values(tuple(base_shape), dtype, seed, perturb, draw)
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
                requires_grad=()):
    """specs: [(name, shape with symbol names or ints, dtype, layout[, info])], sizes: {symbol: int}.

    info (optional dict): kind tensor|list|tuple|dict (``count`` tensors)|int|float (the value
    comes from ``call_extra["scalars"]``)|alias (a view of input number ``of``: view same|view|transposed|offset, the last ``base[1:]``).
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
            if kind == "alias":
                base, view = out[info["of"]], info.get("view", "same")
                out.append(base if view == "same" else base.transpose(-1, -2) if view == "transposed"
                           else base[1:] if view == "offset" else base.view(base.shape))
                continue
            concrete = [sizes[d] if isinstance(d, str) else d for d in shape]
            if kind in ("list", "tuple", "dict"):
                elems = [make_input(concrete, dtype, layout, (seed * 31 + i) * 7 + j, device, upcast, perturb,
                                    draw) for j in range(info["count"])]
                out.append(elems if kind == "list" else tuple(elems) if kind == "tuple"
                           else {f"k{j}": e for j, e in enumerate(elems)})
                continue
            out.append(make_input(concrete, dtype, layout, seed * 31 + i, device, upcast, perturb, draw))
    names = [spec[0] for spec in specs]
    for name in dict.fromkeys(tuple(extra.get("requires_grad") or ()) + tuple(requires_grad)):
        x = out[names.index(name)] if name in names else None
        if isinstance(x, torch.Tensor) and x.dtype.is_floating_point and not x.is_inference() \
                and x.is_leaf and not x.requires_grad:
            x.requires_grad_()
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


def load_state(namespace, state_specs, sizes, seed, call_extra=None, device="cpu", upcast=False,
               perturb=0.0, draw=0):
    """Before a call: seeded values into parameters/buffers (``MODEL.p0``) and tensor globals,
    and the call's scalar globals. state_specs: [(path, shape, dtype, kind param|buffer|global)]."""
    for i, (path, shape, dtype, kind) in enumerate(state_specs):
        concrete = [sizes[d] if isinstance(d, str) else d for d in shape]
        t = make_input(concrete, dtype, "contiguous", seed * 31 + 1009 + i, device, upcast, perturb, draw)
        if kind == "global":
            namespace[path] = t
            continue
        target = _resolve(namespace, path)
        with torch.no_grad():
            if target.dtype == t.dtype and target.shape == t.shape and target.device == t.device:
                target.copy_(t)
            else:  # first load: the module was built on the CPU, its state moves to the device here
                if target.grad is not None and target.grad.device != t.device:
                    target.grad = None
                target.data = t
    for name, value in (call_extra or {}).get("globals", ()):
        namespace[name] = value


def state_after(namespace, state_specs):
    """(label, value) of every buffer and tensor global, read after a call."""
    return [(f"{kind} {path} after call", _resolve(namespace, path))
            for path, _shape, _dtype, kind in state_specs if kind in ("buffer", "global")]


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
    msg = " | ".join(lines[:6])[:600]
    return (type(e).__name__, msg, stage + where)


def run_call(fn, inputs, names, rng_seed=0, grad_mode="grad", after=None, aliases=False, grad=False):
    """Call ``fn(*inputs)`` with the RNG reset; return outputs and the inputs after the call.

    grad_mode: grad | no_grad | inference (the call runs under that mode); after: optional
    zero-argument callable giving extra (label, value) pairs to report after the call.
    aliases: also record, per output tensor, which inputs it shares storage with.
    grad: also run backward (``backward_weights``) and record the grad of every input that
    requires grad. An error in backward is the call's error: parity covers the whole call.
    """
    torch.manual_seed(rng_seed)
    try:
        with _GRAD_MODES.get(grad_mode, contextlib.nullcontext)():
            result = fn(*inputs)
    except Exception as e:  # the program's own failure is data, not a harness error
        return Outcome([], [], _error(e))
    values, labels = [], []
    _flatten(result, "output", values, labels)
    for name, x in zip(names, inputs):
        _flatten(x, f"input {name} after call", values, labels)
    for label, x in (after() if after is not None else ()):
        _flatten(x, label, values, labels)
    if aliases:
        for label, rel in alias_relations(result, inputs, names):
            values.append(rel)
            labels.append(label)
    leaves = [isinstance(x, torch.Tensor) and x.is_leaf and x.requires_grad for x in inputs]
    # backward runs whenever an output carries grad (inputs or module parameters): compiled code
    # traces backward at compile time, so eager must run it too for parity over the whole call
    if grad and (any(leaves) or any(t.requires_grad for t in _tensors(result, []))):
        try:
            run_backward(result, rng_seed)
        except Exception as e:
            return Outcome([], [], _error(e, "backward: "))
        for name, x, leaf in zip(names, inputs, leaves):
            if leaf:
                values.append(None if x.grad is None else x.grad.detach().clone())
                labels.append(f"grad of input {name}")
    return Outcome(values, labels, None)


def run_scheduled(namespace, fn, specs, state_specs, symbols, entry, device="cpu", upcast=False,
                  perturb=0.0, draw=0, requires_grad=(), aliases=False, grad=False):
    """Run one call-table entry ``(sizes, seed[, extra])`` of ``fn`` defined in ``namespace``."""
    sizes, seed = entry[0], entry[1]
    extra = entry[2] if len(entry) > 2 else {}
    env = dict(zip(symbols, sizes))
    load_state(namespace, state_specs, env, seed, extra, device, upcast, perturb, draw)
    inputs = make_inputs(specs, env, seed, device, upcast, perturb, draw, call_extra=extra,
                         requires_grad=requires_grad)
    after = (lambda: state_after(namespace, state_specs)) if state_specs else None
    return run_call(fn, inputs, [spec[0] for spec in specs], seed, extra.get("grad_mode", "grad"), after,
                    aliases=aliases, grad=grad)


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
    """[(label, relation)]: per output tensor, the inputs it shares storage with ("fresh": none)."""
    keys = {}
    for name, x in zip(names, inputs):
        if isinstance(x, torch.Tensor):
            k = _storage_key(x)
            if k is not None:
                keys.setdefault(k, []).append(name)
    out = []
    for i, t in enumerate(_tensors(result, [])):
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
