"""Warm-cache cases: compiled with Inductor's FX-graph and AOTAutograd caches on, as users run,
then judged again in a second process that is served from that cache.

Contract: ``WarmCache(threads, forward)`` belongs to one worker process. For a case whose
``compile.cache`` is ``"warm"`` (``applies``), ``checked(check, case, options)``:

1. runs ``check`` in this process with both caches on and a cache folder of the case's own (the
   cold compile, which fills it): its verdicts are the case's usual ones, attributed as usual;
2. runs ``check`` again in a helper process (``warm_helper``) on the same folder: torch is
   imported there once and kept for the worker's life, Dynamo is reset and Inductor's in-memory
   caches are cleared before each case, and the folder holds only what this case's cold compile
   wrote, so the helper compiles the case as a fresh second process would;
3. returns the cold observation (its ``stats["cache"]`` says what the warm run hit) and the cold
   verdicts plus the warm run's own: a verdict only the warm run raises, or a warm compiled value
   whose bits differ from the cold compile's (where eager repeats itself bit for bit, the value is
   no float the program may sum in atomic order, and a fresh compile in the warm process, the
   control, gives the cold bits), gets stage ``cache``, so it buckets apart from the compiler's
   other bugs.

The case folder links every entry of the worker's shared Inductor folder except the FX-graph and
AOTAutograd caches: compiled kernels (keyed by their source) and the CPU-capability probes stay
shared (an empty folder costs a minute of probe compiles on a loaded box), the graph caches start
empty. A helper killed by a crash signal (SIGSEGV, SIGABRT, ...) during the warm run is a
``segfault`` finding at stage ``cache``; one that dies otherwise or cannot answer makes none: the
case keeps its cold verdicts and ``stats["cache"]["helper"]`` says why. Caches apply to Inductor only, so a case whose
backend is another named backend runs cold alone (``module:function`` backends may call Inductor:
they get the warm run).
"""
from __future__ import annotations

import contextlib
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace

from fuzzcomp.base.environ import environ_var
from fuzzcomp.generators.ir import op_names

#: per-graph caches a warm folder starts without (everything else of the shared folder is linked)
GRAPH_CACHES = ("fxgraph", "aotautograd")
#: env variables that would force the caches on or off whatever the config says
FORCE_ENV = ("TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_AUTOGRAD_CACHE")
CACHE_STAGE = "cache"
#: exit codes of a helper a crash killed (SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE): a finding;
#: any other death (SIGKILL from an OOM killer, say) is reported in stats only
CRASH_CODES = (-11, -6, -7, -4, -8)


def applies(case) -> bool:
    """The case asks for the warm run and its backend compiles through Inductor."""
    spec = case.compile
    return getattr(spec, "cache", "") == "warm" and (spec.backend == "inductor" or ":" in spec.backend)


def cache_switches():
    """[(config module, name)] of the caches' switches this torch has (names checked by getattr)."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    return [(m, n) for m, n in ((inductor_config, "fx_graph_cache"), (functorch_config, "enable_autograd_cache"))
            if hasattr(m, n)]


def set_caches(on: bool) -> None:
    """Turn both caches on or off for this process (the worker's default is off)."""
    for module, name in cache_switches():
        setattr(module, name, on)


@contextlib.contextmanager
def caches_on(folder: str):
    """Both caches on and ``TORCHINDUCTOR_CACHE_DIR`` = ``folder`` while inside."""
    with environ_var("TORCHINDUCTOR_CACHE_DIR", folder), contextlib.ExitStack() as stack:
        for module, name in cache_switches():
            stack.enter_context(module.patch({name: True}))
        yield


def clear_in_memory() -> None:
    """Forget every compiled thing this process holds in memory (what a fresh process lacks)."""
    import torch._dynamo
    torch._dynamo.reset()
    from torch._inductor import utils
    clear = getattr(utils, "clear_caches", None) or getattr(utils, "clear_inductor_caches", None)
    if clear is not None:
        clear()


def case_folder(shared: str | None) -> str:
    """A fresh cache folder linking the shared folder's entries except the graph caches."""
    folder = tempfile.mkdtemp(prefix="fuzzcomp-warm-")
    if shared and os.path.isdir(shared):
        for name in os.listdir(shared):
            if name not in GRAPH_CACHES:
                with contextlib.suppress(OSError):
                    os.symlink(os.path.join(shared, name), os.path.join(folder, name))
    return folder


def cache_counts() -> dict:
    """FX-graph and AOTAutograd cache hits and misses counted since the last Dynamo counter reset."""
    from torch._dynamo.utils import counters
    out = {}
    for group, prefix in (("inductor", "fxgraph_cache_"), ("aot_autograd", "autograd_cache_")):
        for k, v in counters.get(group, {}).items():
            if k.startswith(prefix):
                out[k] = int(v)
    return out


def _symptom_of(label: str) -> str:
    if label.startswith("grad"):
        return "gradient"
    return "mutation" if label.endswith("after call") else "numeric"


def _same(a, b) -> bool:
    import torch
    from fuzzcomp.oracles.fp64rule import bitwise_same
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return bitwise_same(a.detach().cpu(), b.detach().cpu())
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b) or (a != a and b != b)
    except Exception:  # values that refuse comparison: not ours to judge
        return True


def _gap(a, b) -> str:
    import torch
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape \
            and a.dtype.is_floating_point and b.dtype == a.dtype:
        return f"max |cold - warm| = {(a.detach().cpu().double() - b.detach().cpu().double()).abs().nan_to_num(float('inf')).max().item():.3g}"
    return f"cold {str(a)[:60]} vs warm {str(b)[:60]}"


#: ops whose kernels accumulate with atomic adds (scatter-type stores with repeated indices), in an
#: order that changes from run to run and process to process: a cold and a warm compile of them
#: may differ in the last bits of a float with neither wrong (H200 1511: scatter_add_ with
#: repeated indices, cold and warm 1 ulp apart in 3 processes of 3). Integer sums stay exact.
ATOMIC_OPS = ("*scatter_add*", "*index_add*", "*index_put*", "*.put_*", "*scatter_reduce*", "*index_reduce*",
              "*histc*", "*bincount*", "*embedding*")
#: ... and ops whose backward scatters a gradient that way
ATOMIC_GRAD_OPS = ATOMIC_OPS + ("*gather*", "*index_select*", "*__getitem__*", "*take*", "*masked_select*",
                                "*interpolate*", "*upsample*", "*pool*", "*unfold*")


def atomic_order(label: str, value, ops) -> bool:
    """A float value the program may compute with atomic accumulation (its gradient, for a grad
    label): its bits are not a cache's to keep. The fp64 rule still judges the warm run."""
    import fnmatch

    import torch
    if not (isinstance(value, torch.Tensor) and value.dtype.is_floating_point):
        return False
    globs = ATOMIC_GRAD_OPS if label.startswith("grad") else ATOMIC_OPS
    return any(fnmatch.fnmatchcase(op, g) for op in ops for g in globs)


def twin_verdicts(cold_records, warm_outcomes, ops=()):
    """The first compiled value where the warm run's bits leave the cold compile's, on calls
    where both ran and eager gave the same bits twice (a nondeterministic program proves nothing),
    leaving out float values ``ops`` (the program's op names) may sum in atomic order."""
    from fuzzcomp.oracles import Verdict
    for k, (rec, warm) in enumerate(zip(cold_records, warm_outcomes)):
        cold, eager, again = rec.compiled, rec.eager, rec.eager_again
        if any(o is None or o.error is not None for o in (cold, warm, eager, again)):
            continue
        if cold.labels != warm.labels or not _same(list(eager.values), list(again.values)):
            continue
        for label, a, b in zip(cold.labels, cold.values, warm.values):
            if not _same(a, b) and not atomic_order(label, a, ops):
                return [Verdict(_symptom_of(label), CACHE_STAGE, "cache-twin",
                                f"call {k}, {label}: the warm-cache compile (second process) differs "
                                f"from the cold compile: {_gap(a, b)}", call=k, label=label,
                                signature=f"cache-twin {_symptom_of(label)}")]
    return []


def died_verdict(code: int):
    """The warm process died of a signal a crash sends, where the cold compile ran to the end."""
    from fuzzcomp.oracles import Verdict
    name = {-11: "SIGSEGV", -6: "SIGABRT", -7: "SIGBUS", -4: "SIGILL", -8: "SIGFPE"}.get(code, str(code))
    return Verdict("segfault", CACHE_STAGE, "cache-warm",
                   f"the second process, served from the warm cache, died of {name}; the cold compile ran",
                   signature=f"cache warm process {name}")


def warm_only(cold_verdicts, warm_verdicts):
    """The warm run's verdicts the cold run lacks, restaged to ``cache``."""
    seen = {(v.symptom, v.call, v.label) for v in cold_verdicts}
    return [replace(v, stage=CACHE_STAGE, detail=f"{v.detail} [warm cache, second process]")
            for v in warm_verdicts if (v.symptom, v.call, v.label) not in seen]


class WarmCache:
    """The warm-run machinery of one worker process; the helper starts on the first warm case."""

    def __init__(self, threads: int = 1, forward=None, start_timeout_s: float = 600.0):
        self.threads, self.forward = threads, forward
        self.start_timeout_s = start_timeout_s
        self.proc = self.conn = None

    # ---- the helper process ---------------------------------------------------------
    def _start(self) -> None:
        import multiprocessing as mp
        mine, theirs = mp.Pipe()
        env = {k: v for k, v in os.environ.items() if k not in FORCE_ENV}
        self.proc = subprocess.Popen([sys.executable, "-m", "fuzzcomp.workers.warm_helper",
                                      str(theirs.fileno()), str(self.threads)],
                                     pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL)
        theirs.close()
        self.conn = mine
        if not self.conn.poll(self.start_timeout_s) or pickle.loads(self.conn.recv_bytes()) != ("ready",):
            raise RuntimeError("the warm-cache helper did not start")

    def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.send_bytes(pickle.dumps(None))
            self.conn.close()
        if self.proc is not None:
            try:
                self.proc.wait(2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = self.conn = None

    def _ask(self, payload):
        """Send one case to the helper; relay its phase markers; return its answer."""
        if self.proc is None or self.proc.poll() is not None:
            self.close()
            self._start()
        self.conn.send_bytes(pickle.dumps(payload))
        while True:
            try:
                msg = pickle.loads(self.conn.recv_bytes())
            except (EOFError, OSError):
                try:
                    code = self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    code = None
                self.close()
                return ("died", f"the warm-cache helper died with exit code {code}", code)
            if msg[0] == "phase":
                if self.forward is not None:
                    self.forward(msg)
                continue
            return msg

    def _warm_run(self, case, options, folder):
        """The helper's answer for the case compiled on ``folder`` (no ladder, no culprit search);
        ("error", why) when the helper cannot start: the cold verdicts stand."""
        try:
            return self._ask((case, replace(options, ladder=False, culprit=False), folder))
        except Exception as e:
            return ("error", f"{type(e).__name__}: {e}")

    def _controlled(self, twin, obs, case, options, shared, info):
        """The twin verdict stands only when a second cold compile in the warm process (an empty
        cache folder) gives the cold compile's bits: then the cache, not the process, moved them.
        A control that gives the warm bits, or others, or no answer drops it (H200 1511: a
        TransformerEncoderLayer's cold and warm outputs 6e-7 apart, a process-level difference)."""
        v = twin[0]
        folder = case_folder(shared)
        try:
            answer = self._warm_run(case, options, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        cold = obs.calls[v.call].compiled
        ctrl = answer[2][v.call] if answer[0] == "done" and len(answer[2]) > v.call else None
        if ctrl is None or ctrl.error is not None or ctrl.labels != cold.labels:
            info["twin_control"] = f"no answer ({str(answer[1])[:120] if answer[0] != 'done' else 'no value'})"
            return []
        i = cold.labels.index(v.label)
        kept = _same(cold.values[i], ctrl.values[i])
        info["twin_control"] = "a fresh compile in the warm process gives the cold compile's bits" if kept else \
            "a fresh compile in the warm process leaves the cold compile's bits too: not the cache's doing"
        return twin if kept else []

    # ---- one case -------------------------------------------------------------------
    def checked(self, check, case, options):
        shared = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
        folder = case_folder(shared)
        try:
            with caches_on(folder):
                obs, verdicts = check(case, options)
                cold_counts = cache_counts()
            info = {"mode": "warm", "cold": cold_counts}
            if obs.eager_valid:
                t0 = time.perf_counter()
                answer = self._warm_run(case, options, folder)
                obs.timings["warm"] = time.perf_counter() - t0
                if answer[0] == "done":
                    _, warm_verdicts, warm_outcomes, warm_counts = answer
                    info["warm"] = warm_counts
                    extra = warm_only(verdicts, warm_verdicts)
                    if not extra:
                        twin = twin_verdicts(obs.calls, warm_outcomes, op_names(case.program))
                        extra = self._controlled(twin, obs, case, options, shared, info) if twin else []
                    verdicts = list(verdicts) + extra
                    info["helper"] = "ok"
                else:
                    info["helper"] = answer[1][:300]
                    if answer[0] == "died" and answer[2] in CRASH_CODES:  # killed by the warm compile or run
                        verdicts = list(verdicts) + [died_verdict(answer[2])]
            obs.stats["cache"] = info
            return obs, verdicts
        finally:
            shutil.rmtree(folder, ignore_errors=True)
