"""Case -> one standalone repro file that needs nothing but torch.

Contract: ``render_repro(case, key, detail)`` returns the short form a person
writes (``fuzzcomp.render.shortrepro``) where it can express the case, else the long
form; ``render_repro(..., form="long")`` always the long form. Both end with one
machine-readable ``# fuzzcomp-case:`` line that ``fuzzcomp replay`` reads to judge
the file with the full oracle. The caller checks the file in a fresh process and
writes the long form where the short one does not reproduce. The long form (1) states versions, seed and bucket in its header, (2) defines the
program, its inputs (shapes, layouts, dtypes, seeded values; no pickles) and
the exact compile settings, (3) embeds fuzzcomp's runtime and fp64 rule
verbatim, so it judges exactly as the campaign did, and (4) exits 1 with a
one-line message while the bug shows and 0 once it is fixed. pytest collects
its ``test_repro``. A custom backend given as ``module:attr`` is imported from
its module; nothing else outside torch is needed.
"""
from __future__ import annotations

import inspect
import platform
import re

import torch

from fuzzcomp import __version__
from fuzzcomp.generators import emit

from fuzzcomp.base import symptoms
from fuzzcomp.generators.ir import Case
from fuzzcomp.oracles import fp64rule

from fuzzcomp.run import runtime
from fuzzcomp.run.execute import call_entry, input_specs, observe, PERTURB_DRAWS, PERTURB_EPS, state_specs
from fuzzcomp.run.call_extras import config_lines
from fuzzcomp.findings.triage import BucketKey
from fuzzcomp.findings.store import case_to_json
from fuzzcomp.reduce.passes import drop_unused_symbols
from fuzzcomp.render.shortrepro import case_line, render_short, Spec
from fuzzcomp.run.recompiles import max_compile_events

_MAIN = '''
def _graphs():
    from torch._dynamo.utils import counters
    return int(counters["stats"]["unique_graphs"])


def _limit_hit():
    from torch._dynamo.utils import counters
    return any("recompile limit" in k or "cache size limit" in k for k in counters["unimplemented"])


def _class_lost(e, r, c):
    """Where eager and the fp64 run agree that a value is NaN, +inf or -inf, compiled must too
    (the campaign's exact rule for special values); None when it does."""
    if not all(isinstance(t, torch.Tensor) and t.dtype.is_floating_point for t in (e, r, c)) \
            or not e.shape == r.shape == c.shape:
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
    return eager.error[2].startswith("backward: ") and "modified by an inplace operation" in eager.error[1] \
        and any(a in caller for a in ("mutate_output", "mutate_input"))


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
            lost = _class_lost(e, r, c) if status == "ok" and isinstance(e, torch.Tensor) and \
                isinstance(a, torch.Tensor) and bitwise_same(e.detach().cpu(), a.detach().cpu()) else None
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
'''


def _strip_docstring_and_imports(module) -> str:
    src = inspect.getsource(module)
    lines = src.splitlines()
    # drop the module docstring: the repro has its own header
    if lines and lines[0].startswith('"""'):
        end = next(i for i in range(len(lines)) if lines[i].rstrip().endswith('"""') and
                   (i > 0 or lines[0].count('"""') == 2))
        lines = lines[end + 1:]
    return "\n".join(l for l in lines if not l.startswith(("import ", "from "))).strip() + "\n"


def versions() -> dict:
    return {"fuzzcomp": __version__, "torch": torch.__version__,
            "torch_git": getattr(torch.version, "git_version", "unknown"),
            "python": platform.python_version(), "platform": platform.platform(terse=True)}


def _compile_literal(case: Case) -> tuple[str, str]:
    """(import line or '', the COMPILE dict literal)."""
    spec = case.compile
    fields = []
    if ":" in spec.backend:
        mod, _, attr = spec.backend.partition(":")
        imp = f"from {mod} import {attr.split('.')[0]} as planted_backend  # the custom backend under test"
        backend = "planted_backend" + "".join(f".{a}" for a in attr.split(".")[1:])
        fields.append(f"backend={backend}")
    else:
        imp = ""
        fields.append(f"backend={spec.backend!r}")
    fields += [f"dynamic={spec.dynamic!r}", f"fullgraph={spec.fullgraph!r}"]
    if spec.mode and spec.backend == "inductor":
        fields.append(f"mode={spec.mode!r}")
    return imp, "dict(" + ", ".join(fields) + ")"


def _oracle_settings(case: Case) -> tuple[list, int | None, dict]:
    """What the campaign's oracle used for this case: the grad set, the compile-count bound and
    the fp64 rule's floor settings (``floor_eps``, ``reduce_n``, ``coarse_eps``)."""
    obs = observe(case, eager_only=True)
    floors = {k: obs.stats[k] for k in ("floor_eps", "reduce_n", "coarse_eps")}
    floors["floor_eps_by_label"] = dict(obs.stats.get("floor_eps_by_label") or {})
    return list(obs.stats.get("grad_inputs", [])), max_compile_events(case), floors


def headline(detail: str) -> str:
    """A verdict's detail as one short phrase: no ladder tag, and of a wrapped compiler error
    ("X: backend='inductor' raised: | RuntimeError: ... | paths, commands") only the wrapper's
    type and the first line of what it wraps."""
    first = re.sub(r"^\[stage by backend ladder: [^]]*\]\s*", "", detail).splitlines()[0] if detail else ""
    parts = first.split(" | ")
    if len(parts) > 1 and parts[0].endswith(" raised:"):
        first = re.sub(r":[^:]*raised:$", ":", parts[0]) + " " + parts[1]
    else:
        first = parts[0]
    return _PATH.sub(_short_path, first)


# an absolute path of two or more parts (a generated kernel in Inductor's cache, a torch source file)
_PATH = re.compile(r"(?<![\w.])(?:/[\w.+\-]+){2,}")


def _short_path(m: re.Match) -> str:
    """A title names the file, not where this machine keeps it; a hashed generated name is noise."""
    name = m.group(0).rsplit("/", 1)[-1]
    stem, dot, ext = name.partition(".")
    return f"<generated>{dot}{ext}" if len(stem) >= 24 else name


def title(case: Case, key: BucketKey, detail: str) -> str:
    """One line in the upstream fuzzer-issue shape."""
    kind = symptoms.title_kind(key.symptom)
    spec = case.compile
    backend = spec.backend.split(":")[-1]
    what = symptoms.title_phrase(key.symptom)
    if key.signature.startswith("torch globals"):
        what = "leaves torch's global state different from eager"
    return f"[Fuzzer][{kind}] torch.compile ({backend}, {spec.device}) {what}: {clip(headline(detail))}"


def clip(text: str, limit: int = 120) -> str:
    """``text`` cut to about ``limit`` characters at a word boundary, with "..." where it was cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    head = cut.rsplit(" ", 1)[0] if " " in cut[limit // 2:] else cut
    return head.rstrip(" ,;:") + " ..."


def short_spec(case: Case, key: BucketKey, detail: str):
    """The ``shortrepro.Spec`` of a case and its bucket."""
    grads, _max_events, floors = _oracle_settings(case)
    imp = ""
    comp = {"backend": case.compile.backend, "dynamic": case.compile.dynamic,
            "fullgraph": case.compile.fullgraph, "mode": case.compile.mode}
    if ":" in case.compile.backend:
        imp, lit = _compile_literal(case)
        comp["backend"] = re.search(r"backend=([^,)]+)", lit).group(1)
    v = versions()
    head = (f"{title(case, key, detail)}\n\nFound by fuzzcomp {v['fuzzcomp']} (seed {case.seed}) on torch "
            f"{v['torch']}; bucket {key.slug()}.")
    return Spec(fn_src=emit(case.program), inputs=input_specs(case),
                calls=[call_entry(case, c) for c in case.calls], symbols=case.program.symbols,
                symptom=key.symptom, title=head, compile=comp, device=case.compile.device,
                requires_grad=grads, floor_eps=floors["floor_eps"] or 0.0, reduce_n=floors.get("reduce_n") or 1,
                state=state_specs(case), backend_import=imp, footer=_case_line(case),
                signature=key.signature, config=tuple(getattr(case.compile, "config", ())),
                max_events=_max_events)


def _short(case: Case, key: BucketKey, detail: str, prune: bool = True) -> str | None:
    if getattr(case.compile, "cache", "") == "warm":  # two processes and a cache folder: the long form
        return None
    spec = short_spec(case, key, detail)
    spec.prune = prune
    return render_short(spec)


def _case_line(case: Case) -> str:
    return case_line(case_to_json(case))


def render_repro(case: Case, key: BucketKey, detail: str, form: str = "short") -> str:
    """The short form where it can express the case, else the long form.

    form: ``short`` (dead statements, unused parameters and state pruned), ``short-full`` (the
    minimised program as it is: what the minimiser kept may be what the bug needs, so this is the
    fallback when the pruned file does not reproduce) or ``long``."""
    case = next(drop_unused_symbols(case), case)
    if form in ("short", "short-full"):
        text = _short(case, key, detail, prune=form == "short")
        if text is not None:
            return text
    return render_long(case, key, detail)


_CACHE_PRE = '''import atexit
import os
import shutil
import subprocess
import tempfile

# Inductor's FX-graph and AOTAutograd caches on, as users have them, in a fresh folder: this file
# first runs itself as a first process (the cold compile fills the cache); the run judged below is
# a second process, served from that cache
os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = os.environ["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "1"
if not os.environ.get("FUZZCOMP_COLD_PROCESS"):
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="repro-cache-")
    atexit.register(shutil.rmtree, os.environ["TORCHINDUCTOR_CACHE_DIR"], True)
    _cold = subprocess.run([sys.executable, os.path.abspath(__file__)], capture_output=True, text=True,
                           env=dict(os.environ, FUZZCOMP_COLD_PROCESS="1"))
    _said = (_cold.stdout.strip().splitlines() or [f"no output, exit {_cold.returncode}"])[-1]
    print("first (cold) process:", _said.replace("BUG: ", "").replace("OK: ", ""))
'''
_CACHE_POST = '''
import torch._functorch.config  # noqa: E402
for _config, _name in ((torch._inductor.config, "fx_graph_cache"), (torch._functorch.config, "enable_autograd_cache")):
    if hasattr(_config, _name):  # also where torch was imported before this file set the env
        setattr(_config, _name, True)
_TWIN = os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], "fuzzcomp-cold-values.pt")


def _same_bits(a, b):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return bitwise_same(a.detach().cpu(), b.detach().cpu())
    return a == b or (a != a and b != b)


def _cold_twin(k, eager, again, comp):
    """The first process saves its compiled values per call; the second compares its own with
    them bit for bit (where eager gives the same bits twice)."""
    if comp.error or eager.error or again.error:
        return None
    values = [v.detach().cpu() if isinstance(v, torch.Tensor) else v for v in comp.values]
    saved = torch.load(_TWIN) if os.path.exists(_TWIN) else {}
    if os.environ.get("FUZZCOMP_COLD_PROCESS"):
        saved[k] = values
        torch.save(saved, _TWIN)
        return None
    cold = saved.get(k)
    if cold is None or not all(_same_bits(a, b) for a, b in zip(eager.values, again.values)):
        return None
    for label, a, b in zip(comp.labels, cold, values):
        if not _same_bits(a, b):
            return (f"call {k}, {label}: the second process, served from the cache, differs from the "
                    "first process's cold compile")
    return None'''
#: where a warm-cache repro's check compares each call with the cold process's values
_TWIN_AT = "        ref, comp = run(fn, entry, upcast=True), run(compiled, entry)\n"


def _main(case: Case) -> str:
    if getattr(case.compile, "cache", "") != "warm":
        return _MAIN
    assert _TWIN_AT in _MAIN
    return _MAIN.replace(_TWIN_AT, _TWIN_AT + "        twin = _cold_twin(k, eager, again, comp)\n"
                                              "        if twin:\n            return twin\n")


def _cache_lines(case: Case) -> tuple[str, str]:
    """A warm-cache case's lines before and after ``import torch`` ("" for other cases)."""
    if getattr(case.compile, "cache", "") != "warm":
        return "", ""
    return _CACHE_PRE, _CACHE_POST


def render_long(case: Case, key: BucketKey, detail: str) -> str:
    case = next(drop_unused_symbols(case), case)  # list only the sizes the inputs use
    v = versions()
    grads, max_events, floors = _oracle_settings(case)
    p = case.program
    imp, compile_lit = _compile_literal(case)
    inputs = "".join(f"\n    {spec!r}," for spec in input_specs(case))
    state = "".join(f"\n    {spec!r}," for spec in state_specs(case))
    calls = ",\n    ".join(repr(call_entry(case, c)) for c in case.calls)
    cache_pre, cache_post = _cache_lines(case)
    header = f'''#!/usr/bin/env python3
"""fuzzcomp repro: {key.symptom} at stage {key.stage}.

{detail[:400]}

fuzzcomp {v["fuzzcomp"]} (generator {case.generator_version}) | torch {v["torch"]} (git {v["torch_git"][:12]})
Python {v["python"]} | {v["platform"]}
seed: {case.seed} | bucket: {key.slug()} ({key.signature})

Run `python THIS_FILE.py`: exit 1 while the bug shows, 0 once it is fixed.
Judged like PyTorch's fuzzer reports: fp64 reference, fallback_random, RNG reset
per call, eager run twice to screen its own nondeterminism.
"""
import sys
{cache_pre}
import torch
import torch._inductor.config
{imp}
torch._inductor.config.fallback_random = True{cache_post}
torch.set_num_threads(1)  # as the campaign's workers ran: parallel reductions sum in another order
{config_lines(case)}
'''
    body = f'''

# (name, shape: ints or symbolic sizes, dtype, memory layout[, kind info])
INPUTS = [{inputs}
]
# module parameters/buffers and tensor globals, loaded with seeded values before each call
STATE = [{state}
]
SYMBOLS = {p.symbols!r}
# one entry per call, in order: (a size for each symbol, value seed[, call state:
# scalar arguments, scalar globals, grad mode, requires_grad, dynamic marks])
CALLS = [
    {calls},
]
DEVICE = {case.compile.device!r}
# float inputs that require grad: backward of sum(out * fixed weights) is checked too
REQUIRES_GRAD = {grads!r}
# compile events the schedule may cost (Dynamo's documented guards, modelled conservatively)
MAX_COMPILE_EVENTS = {max_events!r}
FLOOR_EPS = {floors["floor_eps"]!r}  # the coarsest float type the program casts to (fp64 rule floor)
FLOOR_EPS_OF = {floors.get("floor_eps_by_label") or dict()!r}  # outputs whose value never passed through that type
REDUCE_N = {floors["reduce_n"]!r}  # the most terms one sum can add (fp64 rule floor: sqrt(n) steps)
COARSE_EPS = {floors["coarse_eps"]!r}  # floor when the fp64 run fails: the coarsest float type in the program
COMPILE = {compile_lit}
PERTURB_EPS, PERTURB_DRAWS = {PERTURB_EPS!r}, {PERTURB_DRAWS!r}

# ---- fuzzcomp runtime: seeded inputs with layouts, one call -> outputs + inputs after ----
import collections  # noqa: E402
import contextlib  # noqa: E402
import math  # noqa: E402
import traceback  # noqa: E402

{_strip_docstring_and_imports(runtime)}
# ---- the fp64 rule (PyTorch's fuzzer rule) ----
{_strip_docstring_and_imports(fp64rule)}
{_main(case)}'''
    return header + emit(p) + body + "\n" + _case_line(case) + "\n"
