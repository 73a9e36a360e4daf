#!/usr/bin/env python3
# fuzzcomp-corpus: status=open torch>=2.13.0 bucket=compile-crash-inductor-1de55c3f dedup=compile-crash-inductor-1de55c3f:Tensor.abs_+torch.true_divide symptom=compile-crash device=cpu issue=none
"""fuzzcomp repro: compile-crash at stage inductor.

compiled raised InductorError: TypeError: mul expected 2 arguments, got 3 | While executing %mul : [num_users=3] = call_function[target=operator.mul](args = (%arg2_1, %arg4_1, %arg3_1), kwargs = {}) | Original traceback: | None | Use tlparse to see full graph. (https://github.com/pytorch/tlparse?tab=readme-ov-file#tlparse-parse-s

fuzzcomp 0.1.0 (generator 0.6) | torch 2.13.0+cpu (git cf30153c4c13)
Python 3.11.7 | Linux-6.18.44-fc-v595-x86_64-with-glibc2.36
seed: 1000053 | bucket: compile-crash-inductor-1de55c3f (InductorError: TypeError: mul expected N arguments, got N)

Run `python THIS_FILE.py`: exit 1 while the bug shows, 0 once it is fixed.
Judged like PyTorch's fuzzer reports: fp64 reference, fallback_random, RNG reset
per call, eager run twice to screen its own nondeterminism.
"""
import sys

import torch
import torch._inductor.config

torch._inductor.config.fallback_random = True
torch.set_num_threads(1)  # as the campaign's workers ran: parallel reductions sum in another order

def fn(x0, x1):
    v0 = torch.true_divide(x1, torch.abs(x0) + 0.5)
    x1.select(0, -1).abs_()
    return (v0,)


# (name, shape: ints or symbolic sizes, dtype, memory layout[, kind info])
INPUTS = [
    ('x0', ('s0', 's0', 's0', 's0'), 'float32', 'contiguous'),
    ('x1', ('s0',), 'float32', 'contiguous', {'kind': 'alias', 'of': 0, 'view': 'transposed'}),
]
# module parameters/buffers and tensor globals, loaded with seeded values before each call
STATE = [
]
SYMBOLS = ('s0',)
# one entry per call, in order: (a size for each symbol, value seed[, call state:
# scalar arguments, scalar globals, grad mode, requires_grad, dynamic marks])
CALLS = [
    ((3,), 0),
    ((2,), 1),
]
DEVICE = 'cpu'
# float inputs that require grad: backward of sum(out * fixed weights) is checked too
REQUIRES_GRAD = []
# compile events the schedule may cost (Dynamo's documented guards, modelled conservatively)
MAX_COMPILE_EVENTS = 2
FLOOR_EPS = 0.0  # the coarsest float type the program casts to (fp64 rule floor)
REDUCE_N = 1  # the most terms one sum can add (fp64 rule floor: sqrt(n) steps)
COARSE_EPS = 1.1920928955078125e-07  # floor when the fp64 run fails: the coarsest float type in the program
COMPILE = dict(backend='inductor', dynamic=None, fullgraph=False)
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
    comes from ``call_extra["scalars"]``)|alias (a view of input number ``of``: view same|view|transposed).
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
                           else base.view(base.shape))
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

# ---- the fp64 rule (PyTorch's fuzzer rule) ----
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
    eps = max(_EPS[e.dtype], floor_eps, acc_eps * math.sqrt(max(1, reduce_n)))
    floor = 4 * eps * max(1.0, math.sqrt(float(torch.mean(r * r))))
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
        if comp.error and not eager.error:
            return f"call {k}: compiled raised {comp.error[0]}: {comp.error[1]} ({comp.error[2]})"
        if eager.error and not comp.error:
            return f"call {k}: eager raised {eager.error[0]}: {eager.error[1]}; compiled returned"
        if eager.error:
            continue
        if eager.labels != comp.labels:
            return f"call {k}: eager gave values {eager.labels}, compiled {comp.labels}"
        perturbed = None
        for i, label in enumerate(eager.labels):
            r = ref.values[i] if ref.error is None and i < len(ref.values) else None
            status, why = compare(eager.values[i], again.values[i], r, comp.values[i], floor_eps=FLOOR_EPS,
                                  reduce_n=REDUCE_N, coarse_eps=COARSE_EPS)
            if status == "mismatch":  # could a tiny input perturbation explain it?
                if perturbed is None:
                    perturbed = [run(fn, entry, perturb=PERTURB_EPS, draw=d)
                                 for d in range(PERTURB_DRAWS)]
                pert = [p.values[i] for p in perturbed if p.error is None and i < len(p.values)]
                status, why = compare(eager.values[i], again.values[i], r, comp.values[i], pert,
                                      floor_eps=FLOOR_EPS, reduce_n=REDUCE_N, coarse_eps=COARSE_EPS)
            if status == "mismatch":
                return f"call {k}, {label}: {why}"
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
