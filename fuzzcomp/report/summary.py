"""Campaign folder -> summary (Markdown + JSON), rebuilt from disk alone.

Contract: ``summarise(store)`` reads only the event log, the findings and
their status files, so ``fuzzcomp report DIR`` gives the same answer as the
campaign's own end-of-run summary, also after a crash. ``write_summary``
writes ``summary.json`` and ``summary.md``; ``render_text`` is what the CLI
prints. Nothing is under-reported silently: event lines that are not JSON,
finding files that cannot be read, and findings the log names that are
missing from disk are counted and named in the summary (``damage``), and
``damage_lines`` says so in one line each.
"""
from __future__ import annotations

import shlex

import json
import time
from collections import Counter, defaultdict

from fuzzcomp.findings.store import Store, StoreError, write_atomic, write_json
from fuzzcomp.report import headline
from fuzzcomp.report.coverage import signal_coverage


#: torch compile + execute, inside a worker ("compiled" = compile + compiled run, from logs made
#: before the two were timed apart)
EXECUTE_PHASES = ("eager", "compile", "compiled run", "compiled", "perturbed")


def summarise(store: Store) -> dict:
    meta = store.meta()
    cases = valid = harness = oom = dropped = 0
    phase = Counter()
    stop_reason = None
    active = 0.0               # seconds the campaign ran, summed over sessions (resume gaps left out)
    session_t0 = last_t = None
    seen_index: set = set()
    job_s = in_jobs = 0.0      # worker wall time of the cases, and the part of it inside torch
    eager_kernels = Counter()  # eager kernels caught reading outside their input (cases screened)
    captured = graphs = 0      # ops Dynamo captured into graphs, and the graphs, over all cases
    for ev in store.events():
        t = ev.get("t")
        kind = ev.get("event")
        if isinstance(t, (int, float)):
            if kind in ("start", "resume"):
                if session_t0 is not None and last_t is not None:
                    active += last_t - session_t0
                session_t0 = t
            elif session_t0 is None:
                session_t0 = t
            last_t = t
        if kind == "minimized" and ev.get("error"):  # the harness failed to minimise a finding
            harness += 1
        if kind == "case":
            if ev.get("index") in seen_index:
                continue
            seen_index.add(ev.get("index"))
            cases += 1
            valid += bool(ev.get("valid"))
            harness += ev.get("status") == "harness-error"
            oom += ev.get("status") == "oom"
            for k in ev.get("eager_kernel_bugs") or ():
                eager_kernels[str(k)] += 1
            captured += int(ev.get("captured_ops") or 0)
            graphs += int(ev.get("graphs") or 0)
            timings = {k: float(v) for k, v in (ev.get("timings") or {}).items()}
            for k, v in timings.items():
                if k != "job":
                    phase[k] += v
            if "job" in timings:
                job_s += timings["job"]
                in_jobs += sum(timings.get(k, 0.0) for k in EXECUTE_PHASES)
                phase["worker other (judge, IPC)"] += max(0.0, timings["job"] - sum(
                    timings.get(k, 0.0) for k in EXECUTE_PHASES))
        elif kind in ("minimized", "minimize-abandoned"):
            phase["minimise"] += float(ev.get("worker_s", ev.get("minimize_s", 0)) or 0)
        elif kind == "workers":
            phase["worker start-up"] += float(ev.get("startup_s", 0) or 0)
        elif kind == "dropped":
            dropped += 1
        elif kind == "stop":
            stop_reason = ev.get("reason")
    if session_t0 is not None and last_t is not None:
        active += last_t - session_t0
    buckets: dict = defaultdict(lambda: {"findings": [], "confirmed": None})
    case_of, keys = {}, {}
    damage = _damage(store)
    for fid in store.finding_ids():
        try:
            f = store.finding(fid)
        except StoreError as e:
            damage["unreadable_findings"].append(
                {"id": fid, "why": str(e).split(" is not a valid fuzzcomp finding: ")[-1][:120]})
            continue
        key = f["bucket_obj"]
        case_of[fid], keys[fid] = f["case_obj"], key
        b = buckets[key.slug()]
        b.update(symptom=key.symptom, stage=key.stage, signature=key.signature)
        b["findings"].append(fid)
        b["first_seen"] = min(x for x in (b.get("first_seen"), f.get("found_at")) if x is not None) \
            if f.get("found_at") or b.get("first_seen") else None
        st = store.status(fid)
        if st is None or st.get("pending"):  # never minimised, or cut before its check
            b.setdefault("unminimised", []).append(fid)
        if st is not None and not st.get("pending"):
            if b.get("repro") is None or (st.get("confirmed") and not b.get("confirmed")):
                # a known bug settled without a worker has its registry entry, no repro of its own
                has = store.path(fid, "repro.py").exists()
                b["repro"] = f"findings/{fid}/repro.py" if has else None
                b["report"] = f"findings/{fid}/report.md" if has else None
                b["confirmed"] = st.get("confirmed")
                b["dedup"] = st.get("dedup")
                b["detail"] = st.get("repro_says")
                b["flaky"] = bool(st.get("flaky"))
                b["confirm_runs"] = st.get("confirm_runs")
                if st.get("stage_ladder"):
                    b["ladder_stage"] = st["stage_ladder"].get("stage")
    for b in buckets.values():
        b["status"] = repro_status(b)
    by_group = headline.annotate(store, buckets, case_of, keys, store.events(),
                                 (meta.get("versions") or {}).get("torch"))
    wall = active
    jobs = int(meta.get("config", {}).get("jobs", 1) or 1)
    worker_s = jobs * wall - phase.get("minimise", 0.0)
    in_torch = sum(phase.get(k, 0.0) for k in EXECUTE_PHASES)
    overhead = round(1 - in_torch / worker_s, 3) if worker_s > 0 and cases else None
    return {"oom": oom, "dropped": dropped, "overhead_share": overhead, "jobs": jobs,
            "job_overhead_share": round(1 - in_jobs / job_s, 3) if job_s > 0 else None,
            "out": str(store.root), "config": meta.get("config", {}), "versions": meta.get("versions", {}),
            "cases": cases, "valid": valid, "valid_rate": (valid / cases) if cases else 0.0,
            "harness_errors": harness, "wall_s": round(wall, 1),
            "cases_per_min": round(cases / wall * 60, 2) if wall > 0 else 0.0,
            "phase_s": {k: round(v, 1) for k, v in sorted(phase.items())},
            "findings": sum(len(b["findings"]) for b in buckets.values()),
            # the headline: only buckets whose repro failed in every fresh process count
            "confirmed_buckets": sum(b["status"] == "confirmed" for b in buckets.values()),
            "unconfirmed_buckets": sorted(k for k, b in buckets.items() if b["status"] != "confirmed"),
            "buckets": dict(sorted(buckets.items())), "stop_reason": stop_reason,
            "minimise_s_by_group": by_group,
            **{f"{g}_buckets": [slug for slug, _ in items] for g, items in
               headline.groups({"buckets": buckets}).items()},
            "eager_kernel_bugs": dict(eager_kernels.most_common()),
            "captured_ops": captured, "graphs": graphs,
            "captured_ops_per_case": round(captured / cases, 2) if cases else 0.0,
            "signals": _signals(store), "novelty": _novelty(store), "damage": damage}


def _novelty(store: Store) -> dict | None:
    """What --novelty on lowered and why (the campaign's novelty.json), or None when it was off."""
    try:
        return json.loads((store.root / "novelty.json").read_text())
    except (OSError, ValueError):
        return None


def novelty_line(s: dict) -> str | None:
    n = s.get("novelty") or {}
    if n.get("mode") != "on":
        return None
    learned = [slug for slug, _ in n.get("campaign_learned", [])]
    return (f"novelty on: {len(n.get('triggers', {}))} known triggers lowered ({len(n.get('lowered', []))} ops, "
            f"capabilities and structures drawn less); learned from this campaign: "
            f"{', '.join(learned) if learned else 'none yet'}")



def _signals(store: Store) -> dict:
    cov = signal_coverage(store.events())
    series = cov["series"]
    if len(series) > 1000:  # thin the plot's points, keep the last
        cov["series"] = series[::len(series) // 1000] + series[-1:]
    return cov


def _damage(store: Store) -> dict:
    """Lines of events.jsonl that are not JSON objects, and findings logged but absent from disk."""
    bad: list[int] = []
    logged: list[str] = []
    events = 0
    path = store.root / "events.jsonl"
    if path.exists():
        with open(path, "rb") as f:
            for n, raw in enumerate(f, 1):
                try:
                    ev = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    ev = None
                events += isinstance(ev, dict)
                if not isinstance(ev, dict):
                    if raw.strip():
                        bad.append(n)
                elif ev.get("event") == "finding" and ev.get("id"):
                    logged.append(str(ev["id"]))
    on_disk = set(p.name for p in store.findings_dir.iterdir()) if store.findings_dir.is_dir() else set()
    return {"bad_event_lines": bad, "unreadable_findings": [],
            "missing_findings": sorted(set(logged) - on_disk),
            "no_event_log": not path.exists() and bool(on_disk),
            "empty_event_log": path.exists() and not events and not bad}  # a campaign logs "start" first


def damage_lines(s: dict) -> list[str]:
    """One line per kind of damage found in the campaign folder (empty when it is whole)."""
    d = s.get("damage") or {}
    out = []
    bad = d.get("bad_event_lines") or []
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (" ..." if len(bad) > 10 else "")
        out.append(f"{len(bad)} lines of events.jsonl are not valid JSON (line {shown}): the case counts "
                   "may be too low")
    unread = d.get("unreadable_findings") or []
    if unread:
        out.append(f"{len(unread)} findings cannot be read and are not counted: "
                   + ", ".join(f"{u['id']} ({u['why']})" for u in unread[:5]) + (" ..." if len(unread) > 5 else ""))
    missing = d.get("missing_findings") or []
    if missing:
        out.append(f"{len(missing)} findings in the event log have no folder on disk: "
                   + ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else ""))
    if d.get("no_event_log"):
        out.append("events.jsonl is missing: there are findings but no case counts")
    if d.get("empty_event_log"):
        out.append("events.jsonl is empty (a campaign logs its start at once): the case counts are lost")
    return out


#: A bucket's repro status, as the summary, the Markdown and the HTML report show it.
STATUS_TEXT = {"confirmed": "confirmed", "flaky": "FLAKY: fails only in some fresh processes",
               "not-reproduced": "NOT reproduced in a fresh process", "not-verified": "not verified",
               "no-repro": "no minimised repro yet"}


def repro_status(b: dict) -> str:
    if b.get("repro") is None:
        return "no-repro"
    if b.get("confirmed") is True:
        return "confirmed"
    if b.get("flaky"):
        return "flaky"
    return "not-reproduced" if b.get("confirmed") is False else "not-verified"


def render_text(s: dict) -> str:
    lines = [f"fuzzcomp campaign {s['out']}",
             f"  cases {s['cases']}  valid {s['valid']} ({s['valid_rate']:.1%})  "
             f"harness errors {s['harness_errors']}  wall {s['wall_s']:.0f} s  "
             f"{s['cases_per_min']:.1f} cases/min",
             f"  compiled: {s.get('graphs', 0)} graphs, {s.get('captured_ops', 0)} ops captured by Dynamo "
             f"({s.get('captured_ops_per_case', 0)} per case)",
             "  time by phase (s): " + ", ".join(f"{k} {v}" for k, v in s["phase_s"].items()),
             f"  worker time outside torch compile+execute: "
             f"{'-' if s.get('overhead_share') is None else format(s['overhead_share'], '.1%')}"
             f" (within cases: {'-' if s.get('job_overhead_share') is None else format(s['job_overhead_share'], '.1%')})"
             f"  oom {s.get('oom', 0)}  dropped {s.get('dropped', 0)}",
             f"  compiler signals: {s.get('signals', {}).get('distinct', 0)} distinct, "
             f"{s.get('signals', {}).get('once', 0)} seen once"
             + (f"  (cases by origin: {s['signals']['arms']})" if s.get('signals', {}).get('arms') else ""),
             f"  bugs: {s.get('confirmed_buckets', 0)} buckets with a confirmed repro "
             f"({s['findings']} findings in {len(s['buckets'])} buckets; "
             f"{len(s.get('unconfirmed_buckets', []))} flagged without one)"]
    for kernel, n in (s.get("eager_kernel_bugs") or {}).items():
        lines.append(f"  screened (eager's own kernel, not the compiler): {kernel}  x{n} cases")
    if steering := novelty_line(s):
        lines.append("  " + steering)
    lines.append("  " + headline.counts_line(s))
    lines += headline.text_lines(s, STATUS_TEXT)
    waiting = [b["findings"][0] for b in s["buckets"].values() if b.get("repro") is None]
    if waiting:
        lines.append(f"  {len(waiting)} buckets have no minimised repro yet; for each, e.g.:")
        lines.append("      fuzzcomp minimize " + shlex.quote(f"{s['out']}/findings/{waiting[0]}"))
    if s.get("stop_reason"):
        lines.append(f"  stopped: {s['stop_reason']}")
    for line in damage_lines(s):
        lines.append(f"  DAMAGED: {line}")
    return "\n".join(lines)


def render_markdown(s: dict) -> str:
    rows = ["| bucket | symptom | stage | first seen (UTC) | count | repro status | repro | report |",
            "|---|---|---|---|---|---|---|---|"]
    for slug, b in s["buckets"].items():
        first = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(b["first_seen"])) if b.get("first_seen") else "-"
        rows.append(f"| `{slug}` | {b['symptom']} | {b['stage']} | {first} | {len(b['findings'])} | "
                    f"{b.get('status') or repro_status(b)} | {('[repro](' + b['repro'] + ')') if b.get('repro') else '-'} | "
                    f"{('[report](' + b['report'] + ')') if b.get('report') else '-'} |")
    phases = "\n".join(f"| {k} | {v} |" for k, v in s["phase_s"].items())
    return f"""# fuzzcomp campaign summary

- cases: {s['cases']}, valid: {s['valid']} ({s['valid_rate']:.1%}), harness errors: {s['harness_errors']}
- wall time: {s['wall_s']} s, {s['cases_per_min']} cases/min, {s.get('jobs', 1)} workers
- worker time outside torch compile+execute: {'-' if s.get('overhead_share') is None else format(s['overhead_share'], '.1%')} of all generating worker time (start-up and idle included); {'-' if s.get('job_overhead_share') is None else format(s['job_overhead_share'], '.1%')} within cases (judge, IPC)
- out of memory: {s.get('oom', 0)}, dropped at stop (re-run on resume): {s.get('dropped', 0)}
- stopped: {s.get('stop_reason') or 'not stopped (running, or the campaign process died)'}
- HTML report: [report.html](report.html), event log: [events.jsonl](events.jsonl)
- compiler signals: {s.get('signals', {}).get('distinct', 0)} distinct, {s.get('signals', {}).get('once', 0)} seen once
- generation steering: {novelty_line(s) or 'off (`--novelty on` draws less of what known bugs need)'}
- bugs (buckets whose repro failed in every fresh process): {s.get('confirmed_buckets', 0)}; flagged without a confirmed repro (flaky, not reproduced, not verified or not minimised, left out of that count): {len(s.get('unconfirmed_buckets', []))}
- findings: {s['findings']} in {len(s['buckets'])} buckets
- mismatches screened because eager's own kernel read outside its input (eager bugs, not compiler bugs): {', '.join(f'`{k}` x{n}' for k, n in (s.get('eager_kernel_bugs') or {}).items()) or 'none'}
- damage: {'; '.join(damage_lines(s)) or 'none'}
- config: `{json.dumps(s['config'], sort_keys=True)}`
- versions: `{json.dumps(s['versions'], sort_keys=True)}`

## Findings: {headline.counts_line(s)}

{headline.markdown(s)}
## All buckets

{chr(10).join(rows)}

## Time by phase (seconds, summed over workers)

| phase | seconds |
|---|---|
{phases}
"""


def write_summary(store: Store, s: dict | None = None) -> dict:
    s = summarise(store) if s is None else s
    write_json(store.root / "summary.json", s)
    write_atomic(store.root / "summary.md", render_markdown(s))
    return s


def damage_counts(s: dict) -> str:
    d = s.get("damage") or {}
    parts = [(len(d.get("unreadable_findings") or ()), "unreadable findings"),
             (len(d.get("missing_findings") or ()), "logged findings missing on disk"),
             (len(d.get("bad_event_lines") or ()), "bad event lines"),
             (int(bool(d.get("no_event_log"))), "missing event log"),
             (int(bool(d.get("empty_event_log"))), "empty event log")]
    return ", ".join(f"{n} {what}" for n, what in parts if n)
