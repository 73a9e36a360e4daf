"""From a recorded finding to a minimised, verified repro and bug report.

Contract: ``probe_predicate(worker, key, timeout)`` builds the reducer's
"is it still the same bug?" test on an isolated worker; ``finish_finding``
minimises one stored finding (optional), writes ``minimized.json``,
``repro.py`` and ``report.md`` beside it, then runs the repro in a fresh
process to confirm the bug reproduces outside the campaign. It returns a small
dict that the campaign logs and the summary shows. Triage against what is
already known (``fuzzcomp.findings.known``): a finding the registry claims
carries its entry as ``known`` in status.json. A known bug costs nothing after
its first sight: one claimed by a settled identity (its bucket seen before, a rule on a
raised exception's message, or a pinned rule no other entry contests: ``known.settled``) is
neither minimised nor re-checked; any other claim on a silent symptom gets a label check once
per campaign: first by knock-out (``knockout_check``: the program without each need of the rule,
one probe each, on the backend of the bucket's stage (``probe_form``); the bug gone every time,
and kept without some need of each rival entry, it is the entry's bug; still there, it is new
and minimised and confirmed like any new bug), and where the knock-out cannot tell, by a
minimisation of at most
``KNOWN_CHECK_S`` whose program's ops re-ask the registry. Still known, it is not re-checked.
"""
from __future__ import annotations

import re
import shlex

import itertools
import os
from concurrent.futures import ThreadPoolExecutor
import time
from pathlib import Path

from fuzzcomp.generators import Case
from fuzzcomp.oracles import primary

from fuzzcomp.render.bugreport import render_report
from fuzzcomp.base.messages import CHECK, DONE, EAGER_ONLY, Job, LOCALISE
from fuzzcomp.reduce.knockout import knock_out_all, knockouts, needs_of, sliced
from fuzzcomp.reduce.minimise import minimise
from fuzzcomp.campaign.hang_probe import hang_stage, probe_limits
from fuzzcomp.attribute.ladder import stage_backend
from fuzzcomp.workers.isolation_verdicts import blames_compiler, crash_verdict, needs_eager_rerun
from fuzzcomp.render.repro import render_repro
from fuzzcomp.render.shortrepro import HANG_S, is_short
from fuzzcomp.findings.store import case_to_json, Store, StoreError, write_atomic, write_json
from fuzzcomp.base.repro_runner import last_line, run_repro_file
from fuzzcomp.findings.known import Match, case_identity, claim, default_registry, label, settled
from fuzzcomp.findings.triage import bucket_of, BucketKey, dedup_key
from fuzzcomp.workers.worker import Worker

_ids = itertools.count(1_000_000)


def _limit(timeout_s: float, deadline: float | None) -> float:
    """A job's timeout, cut so that it ends by ``deadline`` (never below 5 s)."""
    if deadline is None:
        return timeout_s
    return max(5.0, min(timeout_s, deadline - time.monotonic()))


def probe_keys(worker: Worker, case: Case, timeout_s: float, phase_limits=(None, None),
               deadline: float | None = None, fix: str | None = None) -> tuple[bool, set[BucketKey], list]:
    """Run one case in isolation: (eager valid?, bucket keys seen, verdicts).

    ``phase_limits`` = (compile, run) seconds: the worker's per-phase timeouts (see worker.py).
    ``fix``: run it under that fix probe (``fuzzcomp.run.fix_probes``).
    """
    compile_s, run_s = phase_limits
    r = worker.run(Job(next(_ids), CHECK, case, _limit(timeout_s, deadline), compile_timeout_s=compile_s,
                       run_timeout_s=run_s, fix=fix))
    if fix is not None and r.status != DONE:  # a harness error under a fix (a torch without what it
        return False, set(), []                 # patches) says nothing: no eager re-run to blame it
    if r.status == DONE:
        return r.valid, {bucket_of(v) for v in r.verdicts}, r.verdicts
    if needs_eager_rerun(r):
        e = worker.run(Job(next(_ids), EAGER_ONLY, case, _limit(timeout_s, deadline), run_timeout_s=run_s))
        if blames_compiler(r, e):
            v = crash_verdict(r.status, r.message)
            return True, {bucket_of(v)}, [v]
    return False, set(), []


def localise_stage(worker: Worker, case: Case, target, timeout_s: float,
                   deadline: float | None = None) -> dict | None:
    """Re-run a minimised finding on eager, aot_eager, aot_eager_decomp_partition, inductor (in
    the worker); the first rung that shows the symptom names the stage. None if it cannot tell."""
    r = worker.run(Job(next(_ids), LOCALISE, case, _limit(timeout_s * 4, deadline), target=target))
    if r.status != DONE or not isinstance(r.stats, dict) or "stage" not in r.stats:
        return None
    return {"stage": r.stats["stage"], "rung": r.stats.get("rung"), "rungs": r.stats.get("rungs", {})}


def probe_predicate(worker: Worker, key: BucketKey, timeout_s: float, phase_limits=(None, None),
                    deadline: float | None = None):
    """Still the same bug: eager valid, and ``key`` is the primary (most severe) verdict's bucket.

    Requiring the primary one, not just any verdict, keeps a candidate from trading the bug for
    a worse one (a mutation finding whose reduced program also returns a wrong output would
    print the output's line first in its repro).
    """
    def is_interesting(case: Case) -> bool:
        valid, _, verdicts = probe_keys(worker, case, timeout_s, phase_limits, deadline)
        return valid and bool(verdicts) and bucket_of(primary(verdicts)) == key
    return is_interesting


def reproduced(code: int | None, last: str, expect: str | None = None) -> bool:
    """The repro ran and printed its BUG line: exit 1 alone is not enough (a broken file exits 1).
    ``expect``: the exception type a crash's BUG line must name (``crash_type``): a repro that
    raises another error shows another bug, not this bucket's."""
    return code == 1 and str(last).startswith("BUG:") and (
        expect is None or re.search(rf"\b{re.escape(expect)}\b", str(last)) is not None)


def crash_type(key: BucketKey) -> str | None:
    """The outer exception type of a crash bucket (its signature's head), None for other symptoms.
    A minimised program can raise something else first, e.g. Dynamo refusing a ``mark_dynamic``
    the program specialises (the campaign's judge ignores that refusal by design)."""
    if key.symptom not in ("compile-crash", "runtime-crash"):
        return None
    head = key.signature.split(":", 1)[0].strip()
    return head if head.isidentifier() else None


def run_repro(path, timeout_s: float = 600.0, should_stop=None, log: bool = True) -> tuple[int | None, str]:
    """Run a repro file in a fresh interpreter: (exit code or None on timeout, its BUG or last line).
    ``log``: keep its output beside it (``repro.log``)."""
    run = run_repro_file(path, timeout_s, should_stop=should_stop,
                         log_to=Path(path).with_suffix(".log") if log else None)
    return run.code, (run.why if run.code is None else last_line(run))


def confirm_width(runs: int, cpus: int | None = None) -> int:
    """How many of a check's fresh processes run at once: one per 4 cores (a compile takes a
    core or more), never more than the runs. One on a 2-core machine; on 16 cores the 3 runs of
    a CUDA crash that took 41 s each end together instead of after 123 s."""
    cpus = os.cpu_count() if cpus is None else cpus
    return max(1, min(runs, (cpus or 1) // 4))


#: reduction seconds for a finding a registry rule claims on a silent symptom: the minimised
#: program's ops then re-ask the registry (a known bug costs a label check, not a full minimisation)
KNOWN_CHECK_S = 20.0


def finish_finding(store: Store, fid: str, worker: Worker | None, *, minimize: bool, budget_s: float,
                   timeout_s: float, verify: bool = True, should_stop=lambda: False,
                   phase_limits=(None, None), deadline: float | None = None, confirm_runs: int = 3) -> dict:
    """Minimise (within ``budget_s``), localise, write the repro and report, verify in a fresh process.

    ``deadline`` (monotonic) bounds the reduction and the stage ladder: every probe's timeout is cut
    to it, and the ladder is skipped once it has passed. The fresh-process check then runs with its
    own full timeout; only ``should_stop()`` (the campaign ending) skips or cuts it, and then
    ``status.json`` says "not checked" (confirmed None), never "not reproduced". The repro is
    always written. The check runs the repro in ``confirm_runs`` fresh processes (``confirm_repro``):
    confirmed only when it fails in every one, ``flaky`` when only in some.
    """
    def late() -> bool:
        return should_stop() or (deadline is not None and time.monotonic() >= deadline)

    data = store.finding(fid)
    case, key = data["case_obj"], data["bucket_obj"]
    detail = data["verdict_objs"][0].detail
    info: dict = {"id": fid, "bucket": key.slug()}
    known = claim(key, case)
    info["known"] = label(known)
    label_check, full_budget_s = False, budget_s
    if known is not None:
        if costs_nothing(store, fid, known):
            # its identity is certain (the registry holds it, with its issue or searches), or a
            # finding of it was minimised here already: `fuzzcomp minimize ID` makes a repro on demand
            minimize = verify = False
            info["known_skipped"] = info["repro_says"] = _skipped(known)
        else:  # a label check: enough reduction for the minimised ops to re-ask the registry
            budget_s, label_check = min(budget_s, KNOWN_CHECK_S), True
    if key.symptom == "hang":  # seconds per probe, not the campaign's whole compile limit
        phase_limits = probe_limits(phase_limits)
    t_label, refuted = None, False
    if minimize and worker is not None and label_check and not late():
        # first the knock-outs: one probe per need of the rule instead of a minimisation
        t_label = time.monotonic()
        verdict, n, proven = knockout_check(worker, case, key, known, timeout_s, phase_limits, deadline,
                                            outputs=failing_outputs(data["verdict_objs"], key))
        took = round(time.monotonic() - t_label, 1)
        info["label_check"] = {"how": "knock-out", "says": verdict or "cannot tell", "probes": n,
                               "seconds": took}
        if verdict == "known":  # every need of the rule is necessary: the entry's bug, no minimisation
            minimize = False
            fixed_by, k = _fix_disagrees(worker, case, key, proven, timeout_s, phase_limits, deadline)
            n, took = n + k, round(time.monotonic() - t_label, 1)
            info["label_check"].update(probes=n, seconds=took)
            info.update(minimize_s=took, probes=n)
            if fixed_by is not None:  # the ops are needed, but another entry's fix closes it
                info["label_check"]["fix_probe"] = fixed_by.bug.fix_probe
                proven = fixed_by
            if proven.bug.id != known.bug.id:  # what was left once the claim's need went: another entry
                info["known"] = label(proven)
                info["label_check"]["moved_from"] = known.bug.id
        elif verdict == "new":  # the bug outlives a need of the rule: not that entry's bug
            info["known"], label_check, budget_s, refuted = False, False, full_budget_s, True
    if minimize and worker is not None and known is None and ":" not in case.compile.backend and not late():
        # no rule claims it: is it a registered root cause in another form? (the entries' fixes)
        t_label = time.monotonic()
        by = t_label + budget_s if deadline is None else min(deadline, t_label + budget_s)  # within its budget
        fixed = fix_probe_check(worker, case, key, timeout_s, phase_limits, by)
        if fixed is not None:
            took = round(time.monotonic() - t_label, 1)
            entry = fixed["entry"]
            info["label_check"] = {"how": "fix probe", "says": "known" if entry else "new",
                                   "probes": fixed["probes"], "seconds": took, "closed_by": fixed["closed_by"]}
            if entry is not None:  # its entry's fix closes it: that entry's bug, no minimisation
                info["known"] = label(Match(entry, "fix probe"))
                minimize = False
                info.update(minimize_s=took, probes=fixed["probes"])
        else:
            t_label = None
    if minimize and worker is not None:
        t0 = time.monotonic() if t_label is None else t_label  # the label checks count as its reduction
        if deadline is not None:
            budget_s = max(1.0, min(budget_s, deadline - time.monotonic()))
        # each probe is cut to the budget's end too: checked only between probes, one slow compile
        # started late ran a 120 s budget to 216 s, past the campaign's end, and its bug went unchecked
        probes_by = t0 + budget_s if deadline is None else min(deadline, t0 + budget_s)
        small, stats = minimise(case, probe_predicate(worker, key, timeout_s, phase_limits, probes_by),
                                budget_s, should_stop=late)
        # the minimised program's ops decide, as they decide its bucket
        info["known"] = False if refuted else label(claim(key, small))
        # the minimised program's own verdict words its report; a label check that stays known
        # writes no report of its own (its entry is the report): one compile less per known bug
        still_known = label_check and bool(info["known"])
        verdicts = [] if late() or still_known else probe_keys(worker, small, timeout_s, phase_limits,
                                                                 deadline)[2]
        same = [v for v in verdicts if bucket_of(v) == key]
        if same:
            detail = same[0].detail
        write_json(store.path(fid, "minimized.json"), {"case": case_to_json(small), "detail": detail,
                                                      "stats": stats.to_json()})
        info.update(minimize_s=round(time.monotonic() - t0, 1), probes=stats.probes)
        case = small
        target = same[0] if same else data["verdict_objs"][0]
        if key.symptom == "hang" and not late():  # the ladder's rungs as separate probes
            ladder = hang_stage(lambda c, t, lim, d: probe_keys(worker, c, t, lim, d), case, timeout_s,
                                phase_limits, deadline)
            if ladder:
                info["stage_ladder"] = ladder
                detail = f"[stage by backend ladder: {ladder['stage']}] {detail}"
        elif case.compile.backend == "inductor" and key.stage in ("unknown", "runtime") and not late() \
                and not info["known"]:  # a known bug's stage is in its registry entry
            ladder = localise_stage(worker, case, target, timeout_s, deadline)
            if ladder:
                info["stage_ladder"] = ladder
                detail = f"[stage by backend ladder: {ladder['stage']}] {detail}"
    info["dedup"] = dedup_key(key, case.program)
    if "minimize_s" in info and info["known"]:  # still the known bug: its entry is the report, no re-check
        verify = False
        check = info.get("label_check", {})
        how = "on the minimised program" if check.get("says") != "known" else \
            "by knock-out (the bug needs each op its rule names)" if check.get("how") == "knock-out" else \
            "by its fix probe (the entry's fix closes it)"
        info["repro_says"] = f"known bug {info['known']['id']}: label checked {how}, not re-checked " \
                             f"({info['known']['advice']})"
    repro = store.path(fid, "repro.py")
    repro_text = render_repro(case, key, detail)
    # Order on disk: report and a provisional status first, the repro last, so an interruption at
    # any point never leaves a repro.py without its report.md and status.json ("pending": the
    # fresh-process check is still to come; resume minimises such a finding again).
    write_atomic(store.path(fid, "report.md"), render_report(case, key, detail, repro_text, None))
    write_json(store.path(fid, "status.json"), {**info, "confirmed": None, "pending": "fresh-process check"})
    write_atomic(repro, repro_text)
    unchecked = f"not checked in a fresh process: stopped before the check (run `python {shlex.quote(str(repro))}`)"
    if verify and should_stop():
        info["confirmed"] = None
        info["repro_says"] = unchecked
    elif verify:  # its own full timeout: cut only by the campaign stopping, never by the reduce deadline
        info["repro_form"] = "short" if is_short(repro_text) else "long"
        # a hang's short form waits HANG_S for its child's calls (and its start-up) before it says so
        confirm_s = max(timeout_s, 60) + (HANG_S + 60 if key.symptom == "hang" else 0)
        t_check = time.monotonic()
        info.update(confirm_repro(repro, confirm_runs, confirm_s, should_stop, expect=crash_type(key)))
        info["confirm_s"] = round(time.monotonic() - t_check, 1)
        if info["repro_form"] == "short" and info["confirmed"] is False and not info.get("flaky"):
            info.update(fall_back(repro, repro_text, dict(info), case, key, detail, confirm_runs,
                                  max(timeout_s, 60), should_stop))
        if info["confirmed"] is None:
            info["repro_says"] = unchecked
    write_atomic(store.path(fid, "report.md"),
                 render_report(case, key, detail, repro.read_text(), info.get("repro_says"),
                               log_path=repro.with_suffix(".log"), info=info))
    write_json(store.path(fid, "status.json"), info)
    return info


def _said(info: dict) -> str:
    return f"exit {info.get('repro_exit')}: {info.get('repro_says')}"


def fall_back(repro: Path, short: str, short_info: dict, case: Case, key: BucketKey, detail: str, runs: int,
              timeout_s: float, should_stop) -> dict:
    """The pruned short file never showed the bug in a fresh process: try the short file of the
    minimised program as it is (what the renderer pruned may be what the bug needs), then the
    long form (the campaign's own judge). The first that shows it is the repro; where none does,
    the pruned short file stays (the others buy nothing) and the status says what each printed.
    Returns the status fields to update."""
    said = {"short": _said(short_info)}
    for form in ("short-full", "long"):
        text = render_repro(case, key, detail, form=form)
        if form == "short-full" and (text == short or not is_short(text)):
            continue
        write_atomic(repro, text)
        got = confirm_repro(repro, runs, timeout_s, should_stop, expect=crash_type(key))
        if got["confirmed"] is not False or got.get("flaky"):  # it shows (or the check was cut short)
            return {**got, "repro_form": "short" if is_short(text) else "long", "unpruned": form == "short-full",
                    **{f"{k}_said": v for k, v in said.items()}}
        said["full" if form == "short-full" else "long"] = _said(got)
    write_atomic(repro, short)
    return {f"{k}_said": v for k, v in said.items() if k != "short"}


def confirm_repro(repro, runs: int, timeout_s: float, should_stop=lambda: False,
                  parallel: int | None = None, expect: str | None = None) -> dict:
    """Run the repro in ``runs`` fresh processes, ``parallel`` at a time (default
    ``confirm_width``). Confirmed only when every run exits 1 with its BUG line; some but not
    all: ``flaky``; none: not reproduced. Cut short by ``should_stop`` before all runs are made:
    unknown (``confirmed`` None). The first run keeps its output in ``repro.log``."""
    n = max(1, runs)
    aborted = [False]  # an interrupt in this thread stops the runs side by side too (they poll it)

    def stop() -> bool:
        return aborted[0] or should_stop()

    def one(k: int):
        if stop():
            return None
        code, last = run_repro(repro, timeout_s=timeout_s, should_stop=stop, log=k == 0)
        return None if code is None and stop() else (code, last)

    width = confirm_width(n) if parallel is None else max(1, min(n, parallel))
    results = []
    if width == 1:
        for k in range(n):
            r = one(k)
            if r is None:
                break
            results.append(r)
    else:
        with ThreadPoolExecutor(width) as pool:
            try:
                results = [r for r in pool.map(one, range(n)) if r is not None]
            except BaseException:
                aborted[0] = True
                raise
    hits = [r for r in results if reproduced(*r, expect=expect)]
    info: dict = {"confirm_runs": f"{len(hits)}/{len(results)}"}
    if expect and not hits and any(reproduced(*r) for r in results):
        info["other_error"] = f"the repro raised another error than the bucket's {expect}"
    if results:
        code, last = hits[0] if hits else results[0]
        info["repro_exit"], info["repro_says"] = code, last
    if len(results) < max(1, runs) and not (results and hits and len(hits) < len(results)):
        info["confirmed"] = None  # not every run was made
    elif len(hits) == len(results):
        info["confirmed"] = True
    else:
        info["confirmed"] = False
        info["flaky"] = bool(hits)
    return info


def probe_form(case: Case, key: BucketKey) -> Case:
    """The case a label check's probes run (knock-outs and fix probes): a bucket the campaign's
    ladder placed below inductor (capture, autograd, decomposition) is shown by that stage's rung
    backend, whose compile has no code generation (a fraction of CPU Inductor's C++ build), and
    the probe's own ladder places what it shows at the same stage, so the bucket key compares as
    before. A fix of a pass at or before that stage acts there as it does under Inductor (the
    decomposition rung has Inductor's decompositions and min-cut partitioner); a fix of a later
    pass closes it on neither. An inductor case's bucket at inductor or later, and every other
    backend's case, run as they are."""
    backend = stage_backend(key.stage)
    if backend is None or case.compile.backend != "inductor":
        return case
    return case.with_compile(backend=backend, mode=None)


def knockout_check(worker: Worker, case: Case, key: BucketKey, known, timeout_s: float,
                   phase_limits=(None, None), deadline: float | None = None,
                   hop: bool = True, outputs: tuple[int, ...] = ()) -> tuple[str | None, int, Match]:
    """A label check by necessity (``fuzzcomp.reduce.knockout``): the finding's program without
    each need of the claiming rule, one probe per need. ("known", n, match): every knock-out runs
    clean of the bucket, and ``match`` is the entry shown to be its bug; ("new", n, known): one
    still shows it, so the rule does not explain it; (None, n, known): cannot tell (no need to
    knock out, a knock-out eager rejects, one that fails otherwise, or a contested claim whose
    rival entry's needs are all necessary too), and the minimising label check decides.

    Where the bucket outlives a need and another entry claims what is left, that entry is
    checked the same way on the whole program (``hop``, once): its needs all necessary, the
    finding is that entry's bug (CPU 1512: an expm1 knocked out left amax's NaN gradient; a
    20-second minimisation used to say what one more probe says). Where the bucket outlives that
    entry's needs too, each bug alone shows it: the program without both entries' needs
    (``_both_gone``, one probe) losing it, the finding is the claim's, known either way.

    A rival that no probe of the whole program can rule out is ruled out where its ops do not
    feed the wrong values: ``outputs`` (the indices of the outputs the bucket's verdicts name)
    slice the program to what computes them (``_rival_sliced_away``, one probe; CPU 1518: a
    helper's unrelated clone made the noop-clone entry a rival, and a 21-second minimisation
    said what the slice says)."""
    rule = known.rule or known.bug.rule
    needs = needs_of(rule.ops_all, rule.ops_any) if rule is not None else []
    case = probe_form(case, key)  # every probe below, the rival's and the hop's too
    cands = knockouts(case, needs) if rule is not None else None
    if not cands:
        return None, 0, known
    n = 0
    for cand in cands:
        n += 1
        valid, keys, _ = probe_keys(worker, cand, timeout_s, phase_limits, deadline)
        if not valid:
            return None, n, known
        if key in keys:
            # the bucket outlives the need; but where another entry claims what is left, that
            # known bug can be what still shows (H200 seed 1504: copysign knocked out, neg's own
            # zero-sign bug kept the bucket, and a registered bug was filed as new)
            other = claim(key, cand)
            if other is not None and other.bug.id != known.bug.id:
                if not hop:  # checking the entry that claimed what was left: its need was not needed
                    return "new", n, known
                verdict, m, match = knockout_check(worker, case, key, Match(other.bug, "rule", rule=other.rule),
                                                   timeout_s, phase_limits, deadline, hop=False)
                if verdict == "known":
                    return "known", n + m, match
                if verdict == "new":
                    gone, k = _both_gone(worker, case, key, needs, other, timeout_s, phase_limits, deadline)
                    if gone:  # each known bug alone shows it, and nothing else is left
                        return "known", n + m + k, known
                    m += k
                return None, n + m, known
            return "new", n, known
    for rival_id in known.rivals:
        # a contested claim: a rival entry's needs must not all be necessary too (CPU 1506: a
        # remainder by -inf read a softshrink's output, and knocking out the softshrink lost the
        # bug as well, so the softshrink entry passed its knock-out and took the label)
        kept, m = _rival_dispensable(worker, case, key, rival_id, needs, [c.program for c in cands], timeout_s,
                                     phase_limits, deadline)
        n += m
        if not kept:
            kept, m = _rival_sliced_away(worker, case, key, known, rival_id, outputs, timeout_s, phase_limits,
                                         deadline)
            n += m
        if not kept:
            return None, n, known
    return "known", n, known


def failing_outputs(verdicts, key: BucketKey) -> tuple[int, ...]:
    """The indices of the outputs that ``key``'s verdicts name (``output[2]``, ``output[2][0]``,
    ``output['o2']``), in order; none for a single output or a verdict on inputs or gradients."""
    found = (re.match(r"output\[(?:'o)?(\d+)'?\]", v.label or "") for v in verdicts if bucket_of(v) == key)
    return tuple(dict.fromkeys(int(m.group(1)) for m in found if m))


def _rival_sliced_away(worker: Worker, case: Case, key: BucketKey, known, rival_id: str, outputs, timeout_s: float,
                       phase_limits, deadline) -> tuple[bool, int]:
    """(True, 1) when the program sliced to the outputs the bucket names still shows it, the
    claim's entry still claims the slice, and ``rival_id``'s rules no longer hold there: the
    rival's ops do not compute the wrong values. (False, probes) otherwise."""
    cut = sliced(case, outputs)
    if cut is None:
        return False, 0
    again = claim(key, cut)
    if again is None or again.bug.id != known.bug.id or rival_id in again.rivals:
        return False, 0
    valid, keys, _ = probe_keys(worker, probe_form(cut, key), timeout_s, phase_limits, deadline)
    return valid and key in keys, 1


def _fix_disagrees(worker: Worker, case: Case, key: BucketKey, proven, timeout_s: float, phase_limits,
                   deadline) -> tuple[Match | None, int]:
    """(the entry whose fix closes the finding instead, probes): a knock-out shows the claim's ops
    are needed, not which of two entries needing the same ops it is (CPU 1513: two
    nested_compile_region gradient bugs both need the region). Where the entry has a fix probe,
    its fix closing the program confirms it (None); not closing it, every entry's fix is asked
    (``fix_probe_check``), and another's closing it names that entry."""
    fix = proven.bug.fix_probe
    if fix is None or worker is None:
        return None, 0
    case = probe_form(case, key)
    valid, _keys, verdicts = probe_keys(worker, case, timeout_s, phase_limits, deadline, fix=fix)
    if valid and not verdicts:
        return None, 1
    found = fix_probe_check(worker, case, key, timeout_s, phase_limits, deadline, tried={fix: False})
    n = 1 + (found["probes"] if found else 0)
    entry = found["entry"] if found else None
    return (Match(entry, "fix probe") if entry is not None and entry.id != proven.bug.id else None), n


def _both_gone(worker: Worker, case: Case, key: BucketKey, needs, other, timeout_s: float, phase_limits,
               deadline) -> tuple[bool, int]:
    """The program without the needs of both entries' rules loses the bucket (one probe): each
    bug alone was enough to show it (CPU 1513: an input written in place, and an intermediate
    written by a value with grad, each made backward raise the same version-counter error)."""
    theirs = needs_of(other.rule.ops_all, other.rule.ops_any) if other.rule is not None else []
    cand = knock_out_all(case, list(dict.fromkeys(list(needs) + theirs)))
    if cand is None:
        return False, 0
    valid, keys, _ = probe_keys(worker, cand, timeout_s, phase_limits, deadline)
    return valid and key not in keys, 1


def _rival_dispensable(worker: Worker, case: Case, key: BucketKey, rival_id: str, needs, ours: list,
                       timeout_s: float, phase_limits, deadline) -> tuple[bool, int]:
    """(True, probes) when the program without some need of the rival entry's holding rule still
    shows the bucket: the rival's bug is not what shows; or when the rival's knock-outs are the
    claim's own programs (``ours``, the claim's knock-outs already probed), which nothing can
    tell apart (the claim stands, no probe). False: it cannot be told apart, and the minimising
    label check decides."""
    reg = default_registry()
    rival = reg.get(rival_id)
    ident = case_identity(key, case)
    rule = next((r for r in rival.rules if r.holds(ident)), None) if rival is not None else None
    theirs = needs_of(rule.ops_all, rule.ops_any) if rule is not None else []
    if not theirs or set(theirs) <= set(needs):
        return False, 0  # it names nothing the claim does not: no probe can tell them apart
    cands = knockouts(case, [need for need in theirs if need not in needs]) or []
    if cands and all(c.program in ours for c in cands):
        # its needs name the very statements the claim's do (an in-place add_ that is also the
        # input write): no probe, and no minimisation, can tell the two apart, since that
        # statement stays in any smaller program; the registry's order decides, as it would
        # after a minimisation (CPU 1514 ad54c0fe: 17 s spent to end where it began)
        return True, 0
    n = 0
    for cand in cands:
        n += 1
        valid, keys, _ = probe_keys(worker, cand, timeout_s, phase_limits, deadline)
        if valid and key in keys:
            return True, n
    return False, n


def fix_probe_check(worker: Worker, case: Case, key: BucketKey, timeout_s: float,
                    phase_limits=(None, None), deadline: float | None = None, registry=None,
                    tried: dict | None = None) -> dict | None:
    """Is an unclaimed finding a registered root cause in a form no rule names? Its program runs
    under the fix probe of each entry whose fix patches its stage (once per distinct fix): an entry whose
    fix leaves the program clean (valid, no verdict at all) closes it. Then one run without any
    fix must still show the bucket, so the fix, not chance, made the difference. Returns None when
    no entry has a probe, else {"entry": KnownBug or None, "closed_by": [ids], "probes": n}; where
    several entries' fixes close it (a probe that turns off a whole pass), the entry is the one
    whose rule fits best (``_likeliest``). ``tried``: {fix: closed it} for probes the caller ran
    already, not run again."""
    reg = registry or default_registry()
    cands = reg.fix_candidates(key.stage)
    if not cands:
        return None
    case = probe_form(case, key)  # a fix of a pass at or before the bucket's stage acts there too
    closed, n, tried = [], 0, dict(tried or {})  # tried: fix -> closed it, for probes already run
    for bug in cands:
        if deadline is not None and time.monotonic() >= deadline:
            break
        if bug.fix_probe not in tried:
            n += 1
            valid, _keys, verdicts = probe_keys(worker, case, timeout_s, phase_limits, deadline, fix=bug.fix_probe)
            tried[bug.fix_probe] = valid and not verdicts
        if tried[bug.fix_probe]:
            closed.append(bug)
    entry = None
    if closed and (deadline is None or time.monotonic() < deadline):
        n += 1
        _valid, keys, _ = probe_keys(worker, case, timeout_s, phase_limits, deadline)
        entry = _likeliest(closed, key, case) if key in keys else None
    return {"entry": entry, "closed_by": [b.id for b in closed], "probes": n}


def _likeliest(closed: list, key: BucketKey, case: Case):
    """Of several entries whose fixes close a finding (one probe shared by a pass's bugs), the one
    a rule of which holds, else whose rules' ops fit the program best, else the first. CPU 1514:
    turning off noop removal closed a gradient bug that three entries share that probe with,
    and the first in file order was not it."""
    if len(closed) == 1:
        return closed[0]
    ident = case_identity(key, case)

    def fit(bug) -> tuple:
        holds = any(r.holds(ident) for r in bug.rules)
        ops = max((len(r.ops_all) + bool(r.ops_any) for r in bug.rules if r.ops_hold(ident.ops)), default=-1)
        return holds, ops
    return max(closed, key=fit)  # max keeps the first of equals: file order breaks ties


def costs_nothing(store: Store, fid: str, known) -> bool:
    """A known finding (its registry match) needs no worker: its identity is settled, or a finding
    of its entry was label-checked here already. False: a silent rule match still to check."""
    return settled(known) or _known_entry_done(store, fid, known.bug.id)


def _skipped(known) -> str:
    return f"known bug {known.bug.id}: not minimised or re-checked again ({known.bug.advice()})"


def settle_known(store: Store, fid: str, slug: str, known) -> dict:
    """Record a known finding at once, with no worker, minimisation, repro or re-check: its
    registry entry is the report (its issue, its corpus repro); ``fuzzcomp minimize ID`` makes a
    local repro on demand. Returns the status written (``status.json``)."""
    says = _skipped(known)
    info = {"id": fid, "bucket": slug, "known": label(known), "known_skipped": says, "repro_says": says,
            "confirmed": None, "settled": True}
    write_json(store.path(fid, "status.json"), info)
    return info


def _known_entry_done(store: Store, fid: str, bug_id: str) -> bool:
    """True when another finding of this known bug, in the same bucket, is already label-checked
    or minimised here. Per bucket, not per entry: a rule claims findings of several buckets, and a
    check of one says nothing of another (CPU 1513: a nested-region gradient bucket inherited
    its entry's check from a sibling bucket, and was another entry's bug)."""
    slug = (store.status(fid) or {}).get("bucket") or _slug(store, fid)
    for other in store.finding_ids():
        st = store.status(other) if other != fid else None
        if st and isinstance(st.get("known"), dict) and st["known"].get("id") == bug_id and "minimize_s" in st \
                and st.get("bucket") == slug:
            return True
    return False


def _slug(store: Store, fid: str) -> str | None:
    try:
        return store.finding(fid)["bucket_obj"].slug()
    except StoreError:
        return None
