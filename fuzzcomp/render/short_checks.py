"""The check of a short repro, one function per symptom, registered in ``CHECKS``.

Contract: ``check_lines(ctx, symptom, gstate, fp64, requires_grad)`` returns (helper lines, the
check lines of one call, lines the file needs before ``compiled = ...``) for the symptom's
short form; ``ctx`` is the renderer's context (``shortrepro._Ctx``). A program that changes a
torch global is checked by the globals after the call, whatever its symptom but numeric.
``CHECKS`` has one entry per symptom of ``fuzzcomp.base.symptoms``; a symptom with none is
checked as a crash. Each check prints one ``BUG:`` line and exits 1 while the bug shows.
"""
from __future__ import annotations

import re

from fuzzcomp.oracles.fp64rule import HALF_ROUNDINGS
from fuzzcomp.render.shortinputs import _EPS


def tol_of(spec) -> float | None:
    """``same``'s tol raised to the campaign's floor (4 eps, ``tol/10`` in ``same``), if above 1e-4.
    At a half-precision floor (tol of 0.01 or more) the file checks with ``close`` instead: ``same``
    tries allclose at that tol first, which would pass any error below 30% for bfloat16."""
    dtypes = {s[2] for s in spec.inputs} | {d for d in _EPS if f"torch.{d}" in spec.fn_src}
    eps = max([spec.floor_eps, _EPS["float32"] * max(1, spec.reduce_n) ** 0.5] +
              [_EPS[d] * HALF_ROUNDINGS / 4 for d in dtypes if d in ("float16", "bfloat16")])
    tol = min(0.5, 40 * eps)
    return tol if tol > 1e-4 else None


def _tensors(leaves: str, cond: str = "") -> str:
    """The expression of a call's output tensors (``leaves``: see ``_leaves``), filtered by ``cond``."""
    return f"[o for o in {leaves} if isinstance(o, torch.Tensor){cond}]"


def _loss(ctx) -> list[str]:
    """``outs``, what backward starts from, as the campaign's loss: every output carrying grad,
    and every input a program writing in place left with autograd history (a compiled backward
    covers it, so eager's must too)."""
    lines = [f"outs = {_tensors(ctx.leaves, ' and o.requires_grad')}"]
    if _INPLACE.search(ctx.fn_src):
        lines.append("outs += [x for x in xs if isinstance(x, torch.Tensor) and x.grad_fn is not None]"
                     "  # inputs written in place")
    return lines


_INPLACE = re.compile(r"\w_\(|\bout=")


def _weights_seed(ctx) -> str:
    seed = ctx.spec.calls[0][1]
    if ctx.per_call:
        return "SEEDS[call] * 7919 + i"
    return f"{seed * 7919} + i" if seed else "i"


def _state_after(spec) -> list[str]:
    """Expressions of what the campaign reads after a call besides the inputs: buffers, tensor
    globals and the globals the program rebinds."""
    out = [f"{p}.clone()" for p, _s, _d, kind in spec.state if kind.startswith("buffer") or kind == "global"]
    rebound = {n for c in spec.calls for n in (c[2] if len(c) > 2 else {}).get("rebound", ())}
    return out + sorted(rebound)


def close_helper(floor: float) -> list[str]:
    """``close(ref, res, fp64)``: ``same``'s fp64 rule (compiled's RMS error against the fp64 run at
    most 3x eager's, plus the campaign's floor) without the allclose ``same`` tries first, which
    at a half-precision tol would pass any error below 30%."""
    return [
        "def close(r, c, f):  # same()'s fp64 rule: compiled's RMS error vs fp64 within 3x eager's + FLOOR",
        "    if isinstance(r, dict):",
        "        return r.keys() == c.keys() and all(close(r[k], c[k], f[k]) for k in r)",
        "    if isinstance(r, (list, tuple)):",
        "        return len(r) == len(c) and all(map(close, r, c, f))",
        "    if not (isinstance(r, torch.Tensor) and r.is_floating_point()):",
        "        return same(r, c, fp64_ref=f, equal_nan=True)",
        "    if same(r, c, fp64_ref=f, equal_nan=True):",
        "        return True",
        "    if c.shape != r.shape or c.dtype != r.dtype or (~c.isfinite() & f.isfinite() & r.isfinite()).any():",
        "        return False  # compiled is non-finite where eager and fp64 are finite",
        "    ok = f.isfinite() & r.isfinite()",
        "    err = [(t.double() - f)[ok].square().mean().sqrt().item() if ok.any() else 0.0 for t in (r, c)]",
        f"    return err[1] <= 3 * err[0] + {floor:.3g}  # FLOOR: 4 eps of the program's coarsest float type",
        "", ""]


class _Common:
    """What every symptom's check shares: the context, the fp64 comparison and the BUG line."""

    def __init__(self, ctx, fp64: bool, rg: list):
        self.ctx, self.spec, self.a64, self.fp64, self.rg = ctx, ctx.spec, ctx.a64, fp64, rg
        tol = tol_of(self.spec)
        self.same_args = ", equal_nan=True" + (f", tol={tol:.3g}" if tol else "")
        self.coarse = bool(tol and tol >= 1e-2 and fp64)  # a half-precision floor: close(), not a loose same()
        self.helpers0 = close_helper(tol / 10) if self.coarse else []
        self.call_word = "call {call}: " if ctx.many else ""

    def fp64_check(self, a="ref", b="res"):
        return f"if not close({a}, {b}, fp64):" if self.coarse else \
            f"if not same({a}, {b}, fp64_ref=fp64{self.same_args}):"

    def bug(self, msg):
        return f'    print(f"BUG: {self.call_word}{msg}")'



def _numeric(c: _Common):
    """Outputs against eager and the fp64 reference (zero signs too, where the bucket says so)."""
    helpers = c.ctx.helper("run", "", ["out = f(*xs)"], ["return out"]) if not c.ctx.plain else []

    def run(f, a=None):
        return c.ctx.call("run" if helpers else None, f, a)
    if c.fp64:
        check = [f"ref, fp64, res = {run('fn')}, {run('fn', c.a64)}, {run('compiled')}", c.fp64_check(),
                 c.bug("compiled output differs from eager beyond the fp64 reference's error"),
                 "    raise SystemExit(1)"]
    else:  # no float input: the fp64 run would be eager again
        check = [f"ref, res = {run('fn')}, {run('compiled')}", f"if not same(ref, res{c.same_args}):",
                 c.bug("compiled output differs from eager"), "    raise SystemExit(1)"]
    if c.spec.signature == "output zero sign":
        # same() compares neither the sign of a zero nor, through it, which infinity 1/x gives
        check += ["for a, b in zip(ref, res):  # same() ignores the sign of zeros and infinities",
                  "    m = (a == 0) | a.isinf() if a.is_floating_point() else a != a",
                  "    bad = torch.signbit(a[m]) != torch.signbit(b[m])",
                  "    if bad.any():",
                  '        print(f"BUG: compiled gives {b[m][bad][0]} where eager gives {a[m][bad][0]}")',
                  "        raise SystemExit(1)"]
    return c.helpers0 + helpers, check, []


def _global_state(c: _Common):
    """The torch globals after the call (grad mode, deterministic algorithms, default dtype):
    the check of any symptom but numeric when the program changes one."""
    # the program changes a torch global (grad mode, deterministic algorithms, the default
    # dtype): the state after the call is the check, reset to the starting state after it
    helpers = ["def state():  # the torch globals a program can change",
               "    return (torch.is_grad_enabled(), torch.are_deterministic_algorithms_enabled(),",
               "            torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_default_dtype())",
               "", ""]
    helpers += c.ctx.helper("after", "torch's globals after a call, then reset to how they were",
                          ["f(*xs)", "s = state()"],
                          ["torch.set_grad_enabled(start[0])",
                           "torch.use_deterministic_algorithms(start[1], warn_only=start[2])",
                           "torch.set_default_dtype(start[3])", "return s"], pre=["start = state()"])
    check = [f"ref, res = {c.ctx.call('after', 'fn')}, {c.ctx.call('after', 'compiled')}",
             "if ref != res:",
             c.bug("torch globals after the call (grad, deterministic, warn_only, default dtype): "
                 "eager {ref}, compiled {res}"), "    raise SystemExit(1)"]
    return helpers, check, []


def _mutation(c: _Common):
    """Inputs, buffers and globals after the call."""
    state = _state_after(c.spec)
    after = ["xs"] + ([f"[{', '.join(state)}]"] if state else [])
    what = "an input" + (" or buffer" if c.spec.state else "")
    helpers = c.ctx.helper("run", "the inputs" + (", buffers and globals" if len(after) > 1 else "")
                         + " after the call", (["out = f(*xs)"] if c.ctx.writes else ["f(*xs)"]) + c.ctx.writes,
                         [f"return {' + '.join(after)}"])
    if c.fp64:
        check = [f"ref, fp64, res = {c.ctx.call('run', 'fn')}, {c.ctx.call('run', 'fn', c.a64)}, {c.ctx.call('run', 'compiled')}",
                 c.fp64_check()]
    else:
        check = [f"ref, res = {c.ctx.call('run', 'fn')}, {c.ctx.call('run', 'compiled')}",
                 f"if not same(ref, res{c.same_args}):"]
    check += [c.bug(f"{what} holds other values after the compiled call than after eager"),
              "    raise SystemExit(1)"]
    return c.helpers0 + helpers, check, []


def _gradient(c: _Common):
    """Gradients of a fixed weighted loss against eager and the fp64 reference."""
    if c.spec.signature.startswith("caller write"):
        return _caller_write_gradient(c)
    helpers = c.ctx.helper("grads", "backward of sum(out * w) with fixed weights k/64", ["out = f(*xs)"],
                         c.ctx.writes + _loss(c.ctx) + _backward(c))
    check = [f"ref, fp64, res = {c.ctx.call('grads', 'fn')}, {c.ctx.call('grads', 'fn', c.a64)}, "
             f"{c.ctx.call('grads', 'compiled')}",
             "# a grad eager leaves None and compiled gives as zeros is a known, accepted difference",
             "res = [None if e is None and r is not None and not r.ne(0).any() else r for e, r in zip(ref, res)]",
             c.fp64_check(),
             c.bug("compiled gradients differ from eager beyond the fp64 reference's error"),
             "    raise SystemExit(1)"]
    return c.helpers0 + helpers, check, []


def _backward(c: _Common) -> list[str]:
    return ["ws = [(torch.randint(-64, 65, o.shape, generator=torch.Generator().manual_seed("
            f"{_weights_seed(c.ctx)})) / 64).to(o) for i, o in enumerate(outs)]",
            "torch.autograd.backward(outs, grad_tensors=ws)",
            "return [x.grad for x in xs if isinstance(x, torch.Tensor) and x.requires_grad]"]


def _caller_write_gradient(c: _Common):
    """The caller's write after the call overwrote a tensor eager saved for backward, so eager's
    backward raises; compiled returns, and its gradients are checked against eager with the write
    made so it cannot invalidate a saved tensor: an input's write (under no_grad, outside the
    graph) left out, an output's write out of place (``2 * out`` in the loss)."""
    per = [tuple((e[2] if len(e) > 2 else {}).get("caller", ()) or ()) for e in c.spec.calls]
    out_write = ["if not write and 'mutate_output' in CALLER[call]:  # out of place: 2 * out in the loss",
                 f"    first = {_tensors(c.ctx.leaves, ' and o.is_floating_point()')}[:1]",
                 "    outs = [o * 2 if any(o is w for w in first) else o for o in outs]"] \
        if any("mutate_output" in p for p in per) else []
    if out_write and len(set(per)) == 1:
        out_write[0] = "if not write:  # the reference: the output's write out of place, 2 * out in the loss"
    writes = ["if write:  # the caller's writes, in place"] + ["    " + ln for ln in c.ctx.writes] \
        if c.ctx.writes else []
    helpers = c.ctx.helper("grads", "backward of sum(out * w) with fixed weights k/64; write=False: the "
                           "caller's write made so it cannot invalidate a tensor saved for backward",
                           ["out = f(*xs)"], writes + _loss(c.ctx) + out_write + _backward(c))
    helpers[0] = helpers[0].replace("):", ", write=True):", 1)
    x, x64 = f"inputs({c.ctx.arg})", f"inputs({c.a64})"
    extra = ", call" if c.ctx.per_call else ""
    check = ["try:",
             f"    ref, fp64 = grads(fn, {x}{extra}), grads(fn, {x64}{extra})",
             '    what = "differ from eager"',
             "except RuntimeError as e:  # eager's backward refuses: the caller overwrote a tensor it saved",
             f'    print(f"{c.call_word}eager raises: {{str(e).splitlines()[0][:150]}}")',
             "    # the right answer: the gradient of the forward as computed (no input write; an output's",
             "    # write out of place)",
             f"    ref, fp64 = grads(fn, {x}{extra}, write=False), grads(fn, {x64}{extra}, write=False)",
             "    what = \"after the caller's write (eager raises) differ from eager without it (out of place for an output)\"",
             "try:",
             f"    res = grads(compiled, {x}{extra})  # compiled returns",
             "except RuntimeError as e:",
             '    if what == "differ from eager" or "modified by an inplace operation" not in str(e):',
             "        raise",
             "    res = ref  # compiled refuses the write as eager does: parity",
             "# a grad eager leaves None and compiled gives as zeros is a known, accepted difference",
             "res = [None if e is None and r is not None and not r.ne(0).any() else r for e, r in zip(ref, res)]",
             c.fp64_check(),
             c.bug("compiled gradients {what} beyond the fp64 reference's error"),
             "    raise SystemExit(1)"]
    return c.helpers0 + helpers, check, []


def _aliasing(c: _Common):
    """Which inputs each output shares storage with (or what autograd believes of it)."""
    if c.spec.signature.startswith("alias meta"):
        # what autograd believes of each output: an output sharing an input's storage that is
        # no view lets an in-place write reach the input behind autograd's back
        name, doc, what = ("meta", "per output: requires_grad, is_leaf, and if it shares an input's "
                           "storage, is it a view", "outputs (requires_grad, is_leaf, is a view of an input)")
        post = ["ptrs = {x.untyped_storage().data_ptr() for x in xs if isinstance(x, torch.Tensor)}",
                "return [(o.requires_grad, o.is_leaf, o._is_view() if o.untyped_storage().data_ptr() in ptrs "
                "else None)", f"        for o in {c.ctx.leaves} if isinstance(o, torch.Tensor)]"]
    else:
        name, doc, what = ("shared", "for each output, which inputs it shares storage with",
                           "outputs share storage with inputs")
        post = ["ptr = lambda t: t.untyped_storage().data_ptr()  # noqa: E731",
                "return [[ptr(o) == ptr(x) for x in xs if isinstance(x, torch.Tensor)]",
                f"        for o in {c.ctx.leaves} if isinstance(o, torch.Tensor)]"]
    helpers = c.ctx.helper(name, doc, ["out = f(*xs)"], post)
    check = [f"ref, res = {c.ctx.call(name, 'fn')}, {c.ctx.call(name, 'compiled')}", "if ref != res:",
             c.bug(what + ": {res} compiled, {ref} in eager"), "    raise SystemExit(1)"]
    return helpers, check, []


def _recompile(c: _Common):
    """Graphs compiled over the schedule (or on its replay) against the bound."""
    helpers = c.ctx.helper("run", "", ["return f(*xs)"], []) if not c.ctx.plain else []

    def run():
        return c.ctx.call("run" if helpers else None, "compiled")
    n = len(c.spec.calls)
    bound = c.spec.max_events if c.spec.max_events is not None else n
    check = ["compiles = 0  # calls that compiled a new graph",
             f"for call in range({n}):" + ("  # the sizes change between calls" if c.ctx.many else ""),
             '    before = counters["stats"]["unique_graphs"]', f"    {run()}",
             '    compiles += counters["stats"]["unique_graphs"] > before']
    if c.spec.signature.startswith("recompile: replay"):
        check += ["for _ in range(2):  # the same calls again, twice: the second time, nothing may compile",
                  '    before = counters["stats"]["unique_graphs"]',
                  f"    for call in range({n}):", f"        {run()}", 'if counters["stats"]["unique_graphs"] > before:',
                  '    print(f"BUG: replaying calls it has already seen, a second time, compiled '
                  '{counters[\'stats\'][\'unique_graphs\'] - before} new graph(s)")', "    raise SystemExit(1)"]
    else:
        check += [f"if compiles > {bound}:",
                  f'    print(f"BUG: {{compiles}} of {n} calls compiled a new graph; their sizes and '
                  f'dtypes need at most {bound}")', "    raise SystemExit(1)"]
    return helpers, check, []


def _crash_run(c: _Common):
    """Eager runs the whole call (backward too); the helper and the call that run it."""
    # a crash, an error only eager raises, a hang or a segfault: eager runs the whole call
    # (backward too), compiled raises, returns where eager raised, hangs or kills the process
    post = list(c.ctx.writes)
    if c.rg or "MODEL" in c.ctx.fn_src:  # backward whenever an output carries grad (a model's parameters too)
        post += _loss(c.ctx) + ["torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])"]
    helpers = c.ctx.helper("run", "", ["out = f(*xs)"], post) if post or not c.ctx.plain else []

    def run(f):
        return c.ctx.call("run" if helpers else None, f)
    return helpers, run


def _error_parity(c: _Common):
    """An error eager raises (forward or backward) that the compiled call does not."""
    helpers, run = _crash_run(c)
    inner = "run(f, *args)" if helpers else "f(*args[0])"
    helpers += ["def error(f, *args):  # what a call raises (forward or backward), else None",
                "    try:", f"        {inner}",
                "    except Exception as e:",
                '        return f"{type(e).__name__}: {(str(e).strip().splitlines() or [\'\'])[0][:200]}"',
                "    return None", "", ""]
    check = [f"ref, res = {c.ctx.call('error', 'fn')}, {c.ctx.call('error', 'compiled')}", "if ref and not res:",
             c.bug("eager raises {ref}; the compiled call returns"), "    raise SystemExit(1)"]
    return helpers, check, []


def _hang_or_segfault(c: _Common):
    """The calls run in a child process, which the bug kills or hangs."""
    helpers, run = _crash_run(c)
    parent = ['if sys.argv[1:] != ["--child"]:  # the calls run in a child process, which the bug kills or hangs',
              "    try:",
              '        child = subprocess.run([sys.executable, "-X", "faulthandler", __file__, "--child"], '
              f"timeout={c.spec.hang_s})",
              "    except subprocess.TimeoutExpired:",
              f'        print("BUG: the compiled call did not return within {c.spec.hang_s} s")',
              "        raise SystemExit(1)",
              "    if child.returncode < 0:",
              '        print(f"BUG: the compiled call killed the process (signal {-child.returncode})")',
              "        raise SystemExit(1)",
              "    raise SystemExit(child.returncode)", ""]
    check = [f"{run('fn')}  # eager is fine", run("compiled")]
    return helpers, check, parent


def _crash(c: _Common):
    """The compiled call raises where eager is fine (compile-crash, runtime-crash)."""
    helpers, run = _crash_run(c)
    check = [f"{run('fn')}  # eager is fine", "try:", f"    {run('compiled')}", "except Exception as e:"]
    if c.ctx.many and _hard_marks(c.spec):  # as the campaign's judge: a refused mark is by design
        check += ['    if type(e).__name__ == "ConstraintViolationError":  # mark_dynamic refused: '
                  'the program specialised the dim', "        continue"]
    check += ["    traceback.print_exc()",
             '    why = [ln for ln in str(e).splitlines() if ln.strip() and not ln.endswith(" raised:")] + [""]',
             c.bug("compiled call raised {type(e).__name__}: {why[0][:200]}"),
             "    raise SystemExit(1)"]
    return helpers, check, []


def _hard_marks(spec) -> bool:
    """Some call marks a dim with ``mark_dynamic`` (not the lenient ``maybe_mark_dynamic``)."""
    return any(how != "maybe" for entry in spec.calls if len(entry) > 2 and isinstance(entry[2], dict)
               for _, _, how in entry[2].get("marks", ()))


#: the check of each symptom's short form (the symptom table, fuzzcomp.base.symptoms, names them)
CHECKS = {"numeric": _numeric, "mutation": _mutation, "gradient": _gradient, "aliasing": _aliasing,
          "recompile": _recompile, "error-parity": _error_parity, "hang": _hang_or_segfault,
          "segfault": _hang_or_segfault, "compile-crash": _crash, "runtime-crash": _crash}


def check_lines(ctx, sym: str, gstate: bool, fp64: bool, rg: list):
    """(helper lines, check lines of one call, lines before ``compiled = ...``) for the symptom."""
    c = _Common(ctx, fp64, rg)
    if gstate and sym != "numeric":
        return _global_state(c)
    return CHECKS.get(sym, _crash)(c)

