"""The backend ladder: which compiler stage a finding belongs to.

Contract: ``rungs_for(case)`` lists the backends to try below the case's own,
cheapest first, and the stage the case's own backend stands for:
eager (capture) -> aot_eager (autograd) -> aot_eager_decomp_partition
(decomposition) -> inductor; under a CUDA-graph mode on a GPU one more rung,
inductor without CUDA graphs (stage inductor), so the full mode's stage is
``cudagraphs``. A custom backend past aot_eager is stage ``backend``.
``stage_backend(stage)`` names the rung backend of a stage below inductor.
``attribute(case, obs, verdicts, options)`` runs the ladder for the primary
verdict in the worker, before the finding is bucketed, so the BucketKey holds
the ladder's answer for every symptom: the first rung that shows the symptom
names the stage, and when none below the case's own backend does, that
backend's stage does. Value findings (numeric, gradient, mutation) also get
their culprit op (``culprit.culprit_of``) as the verdict's ``signature``.
``obs.stats["ladder"]`` records what each rung showed.

``localise`` (the LOCALISE job) and ``bisect_inductor`` run the same ladder on
request and narrow an inductor finding with CompilerBisector where torch has it.
"""
from __future__ import annotations

from dataclasses import replace

from fuzzcomp.generators import Case
from fuzzcomp.oracles import Observation, Verdict, primary

from fuzzcomp.base.symptoms import RAISES, VALUE
from fuzzcomp.attribute.culprit import culprit_of
from fuzzcomp.run.execute import DEFAULT_OPTIONS, _first_line

CHEAP = (("eager", None, "capture"), ("aot_eager", None, "autograd"),
         ("aot_eager_decomp_partition", None, "decomposition"))
LADDER = tuple((b, s) for b, _, s in CHEAP) + (("inductor", "inductor"),)
_STAGE_BACKEND = {s: b for b, _, s in CHEAP}
CUDAGRAPH_MODES = {"reduce-overhead": None, "max-autotune": "max-autotune-no-cudagraphs"}


def stage_backend(stage: str | None) -> str | None:
    """The backend of the rung that names ``stage`` below inductor (capture: eager, autograd:
    aot_eager, decomposition: aot_eager_decomp_partition); None for inductor and later stages."""
    return _STAGE_BACKEND.get(stage)


def rungs_for(case: Case) -> tuple[list[tuple], str]:
    """([(backend, mode, stage)] to try in order, the stage of the case's own backend)."""
    spec = case.compile
    if spec.backend == "inductor":
        if spec.mode in CUDAGRAPH_MODES and spec.device != "cpu":  # CUDA graphs exist on GPUs only
            return list(CHEAP) + [("inductor", CUDAGRAPH_MODES[spec.mode], "inductor")], "cudagraphs"
        return list(CHEAP), "inductor"
    names = [b for b, _, _ in CHEAP]
    if spec.backend in names:
        i = names.index(spec.backend)
        return list(CHEAP[:i]), CHEAP[i][2]
    return list(CHEAP[:2]), "backend"


def same_symptom(a: Verdict, b: Verdict) -> bool:
    """The stage-independent identity used by the ladder: symptom, and signature for crashes."""
    if a.symptom != b.symptom:
        return False
    if a.symptom in RAISES:
        return a.signature == b.signature
    return True


def same_divergence(a: Verdict, b: Verdict) -> bool:
    """``same_symptom``, and for a value symptom the same value (output, input or gradient label):
    the campaign's ladder places the finding's primary divergence, not another output's (CPU 1512
    8edf381d: output[3]'s uint8->bool dtype at inductor took output[4]'s autograd stage, and
    the bucket told a maintainer the dtype change was an AOTAutograd bug)."""
    return same_symptom(a, b) and (a.symptom not in VALUE or a.label == b.label)


def _rung_options(options, target: Verdict):
    # a recompile needs the replay; nothing else does (the first pass holds every value)
    return replace(options, ladder=False, culprit=False, replay=options.replay and target.symptom == "recompile")


def ladder_stage(case: Case, target: Verdict, options, check, matches=same_symptom) -> tuple[str, dict]:
    """(stage, {backend[/mode]: symptoms seen}) for ``target`` found on ``case``'s own backend;
    ``check(case, options) -> (observation, verdicts)`` is the probe each rung runs."""
    rungs, final = rungs_for(case)
    seen: dict = {}
    sub = _rung_options(options, target)
    for backend, mode, stage in rungs:
        name = backend if mode is None and backend != case.compile.backend else f"{backend}/{mode or 'default'}"
        try:
            _, verdicts = check(case.with_compile(backend=backend, mode=mode), sub)
        except Exception as e:  # a rung our harness cannot run says nothing about the stage
            seen[name] = [f"harness error: {type(e).__name__}"]
            continue
        seen[name] = sorted({v.symptom for v in verdicts})
        if any(matches(v, target) for v in verdicts):
            return stage, seen
    return final, seen


def attribute(case: Case, obs: Observation, verdicts: list[Verdict], options, check) -> list[Verdict]:
    """The verdicts with the ladder's stage (and value findings with their culprit op); ``check``
    is the probe the ladder re-runs the case with (handed in, as the minimiser is handed its
    predicate, so attribution never imports the step that calls it)."""
    target = primary(verdicts)
    _, final = rungs_for(case)
    stage = None
    if options.ladder:
        stage, seen = ladder_stage(case, target, options, check, matches=same_divergence)
        obs.stats["ladder"] = {"stage": stage, "rungs": seen}
    out = []
    for v in verdicts:
        deep = v is target
        if stage is not None and same_divergence(v, target):
            v = replace(v, stage=stage)
        elif options.ladder and v.stage in ("unknown", "runtime"):
            v = replace(v, stage=final)  # not localised on its own: the backend that showed it
        if options.culprit and v.symptom in VALUE and not v.signature:
            v = replace(v, signature=culprit_of(case, obs, v, options, deep=deep))
        out.append(v)
    return out


def localise(case: Case, target: Verdict, check, options=None, ladder=LADDER, matches=same_symptom,
             bisect: bool = False) -> dict:
    """Re-run ``case`` on the backend ladder; the first rung showing ``target``'s symptom names
    the stage. Returns ``{"stage", "rung", "rungs": {backend: [symptoms]}}`` and, with
    ``bisect`` and an inductor-stage finding, ``"bisect"`` from CompilerBisector when available.
    """
    options = replace(options or DEFAULT_OPTIONS, ladder=False, culprit=False)
    rungs: dict = {}
    found = None
    for backend, stage in ladder:
        obs, verdicts = check(case.with_compile(backend=backend), options)
        rungs[backend] = sorted({v.symptom for v in verdicts})
        if any(matches(v, target) for v in verdicts):
            found = (backend, stage)
            break
    out = {"stage": found[1] if found else "unknown", "rung": found[0] if found else None,
           "rungs": rungs}
    if bisect and found and found[1] == "inductor":
        out["bisect"] = bisect_inductor(case, target, check, options, matches)
    return out


def bisect_inductor(case: Case, target: Verdict, check, options=None, matches=same_symptom) -> str:
    """Narrow an inductor finding to a subsystem with CompilerBisector, where torch has it."""
    options = replace(options or DEFAULT_OPTIONS, ladder=False, culprit=False)
    try:  # lazily: torch versions without the bisector still run every other rung
        from torch._inductor.compiler_bisector import CompilerBisector
    except ImportError:
        return "unavailable: torch has no torch._inductor.compiler_bisector"
    ind = case.with_compile(backend="inductor")

    def still_ok() -> bool:
        _, verdicts = check(ind, options)
        return not any(matches(v, target) for v in verdicts)

    try:
        res = CompilerBisector.do_bisect(still_ok)
    except Exception as e:  # the bisector's own failure must not lose the finding
        return f"bisector failed: {type(e).__name__}: {_first_line(e)}"
    if res is None:
        return "no culprit found"
    info = getattr(res, "debug_info", None)
    return (f"backend={res.backend} subsystem={res.subsystem} bisect_number={res.bisect_number}"
            + (f" debug_info={info}" if info else ""))
