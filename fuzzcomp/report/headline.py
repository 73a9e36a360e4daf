"""What a campaign found, in the order a user acts on it: new bugs, known bugs, notes.

Contract: ``annotate(store, buckets, cases, events)`` adds to each bucket of a summary its
``known`` label (False, or the registry entry with its link and next step, asked of the registry
now, so ``fuzzcomp link`` shows in the next ``fuzzcomp report``), its ``severity`` (the symptom
table's rank: 1 silent wrong values or gradients, 2 crashes, 3 aliasing and error parity, 4
recompiles and other performance notes), ``notes`` a maintainer reads before the verdict (a sign
of zero, compiled more permissive than eager) and ``minimise_s`` (worker seconds spent minimising
it). It returns the minimisation seconds by group. ``groups(summary)`` splits the buckets:

- ``new``: no registry entry claims it and its repro is not known to fail only sometimes or not
  at all in a fresh process; ordered by severity, confirmed first;
- ``known``: claimed by a registry entry (its issue, "fixed in torch X: upgrade", or "not
  reported upstream yet");
- ``notes``: new but flaky or not reproduced in a fresh process: worth a look, not a report.

``text_lines``, ``markdown`` render those groups for the terminal and summary.md.
"""
from __future__ import annotations

import json
import math

from fuzzcomp.base.symptoms import rank
from fuzzcomp.findings.known import claim, label, settled
from fuzzcomp.findings.store import case_from_json

GROUPS = ("new", "known", "notes")
TITLES = {"new": "New bugs (not in the known-bug registry): file these",
          "known": "Known bugs (in the registry: corpus/known_bugs.json)",
          "notes": "Notes (new, but not reproduced in every fresh process)"}


def _notes(b: dict) -> list[str]:
    out = []
    if "zero sign" in str(b.get("signature", "")):
        out.append("a sign of zero: maintainers often treat -0.0 vs +0.0 as low priority")
    if b.get("symptom") == "error-parity":
        out.append("compiled is more permissive than eager (eager raises, compiled returns): lower severity")
    if b.get("symptom") == "recompile":
        out.append("a recompile costs time, not correctness: a performance note")
    return out


def _case_of(store, fid: str, fallback):
    path = store.path(fid, "minimized.json")
    if path.exists():
        try:
            return case_from_json(json.loads(path.read_text())["case"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    return fallback


def _worker_label(st: dict):
    """The label a run of the finding settled (its status): a knock-out that refuted its rule
    (False) or proved another entry's (that entry), or an entry's fix probe that closed it (that
    entry); None: ask the registry."""
    check = st.get("label_check")
    if not isinstance(check, dict):
        return None
    if check.get("how") == "knock-out" and check.get("says") == "new":
        return False
    if check.get("how") == "knock-out" and check.get("moved_from") and isinstance(st.get("known"), dict):
        return st["known"]
    if check.get("how") == "fix probe" and check.get("says") == "known" and isinstance(st.get("known"), dict):
        return st["known"]
    return None


def annotate(store, buckets: dict, cases: dict, keys: dict, events, torch_version: str | None) -> dict:
    """See the module doc. ``cases``/``keys``: finding id -> its case and BucketKey;
    ``torch_version``: the campaign's (a report rebuilt under another torch keeps its labels)."""
    spent: dict[str, float] = {}
    for ev in events:
        if ev.get("event") in ("minimized", "minimize-abandoned") and ev.get("id"):
            spent[ev["id"]] = spent.get(ev["id"], 0.0) + float(ev.get("worker_s", ev.get("minimize_s", 0)) or 0)
    by_group = {"new": 0.0, "known": 0.0}
    for slug, b in buckets.items():
        rep = str(b.get("repro") or "").split("/")
        fid = rep[1] if len(rep) > 2 else b["findings"][0]
        if fid not in cases:
            fid = b["findings"][0]
        statuses = [store.status(f) or {} for f in b["findings"]]
        b["known"], m, settled_here = _finding_label(store, fid, cases, keys,
                                                     statuses[b["findings"].index(fid)], torch_version)
        if b["known"] and settled_here is None and m is not None and not settled(m) \
                and not any("label_check" in st or "minimize_s" in st for st in statuses):
            # a rule's claim on a silent finding whose label check never ran (the campaign ended
            # first): say so, a user may check it with `fuzzcomp minimize ID`
            b["known"] = dict(b["known"], unchecked=True)
        split = _split(store, b, fid, b["known"], cases, keys, statuses, torch_version)
        if split:
            b["known_split"] = split
        b["severity"] = rank(b["symptom"])
        b["notes"] = _notes(b)
        b["minimise_s"] = round(sum(spent.get(f, 0.0) for f in b["findings"]), 1)
        by_group["known" if b["known"] else "new"] += b["minimise_s"]
    return {k: round(v, 1) for k, v in by_group.items()}


def _finding_label(store, fid: str, cases: dict, keys: dict, status: dict, torch_version):
    """(label, registry match, the label a run of it settled or None): the registry is asked of
    the finding's own program (minimised where it was); a label its run settled (a knock-out's
    refutation, a fix probe) stands, except against a listed bucket (`fuzzcomp link`)."""
    m = claim(keys[fid], _case_of(store, fid, cases[fid]), torch_version)
    settled_here = _worker_label(status)
    return (label(m) if settled_here is None or (m is not None and m.how == "bucket") else settled_here), m, \
        settled_here


def _split(store, b: dict, fid: str, known, cases: dict, keys: dict, statuses: list, torch_version) -> list:
    """The labels of a bucket's findings, each asked of its own program (minimised where it was),
    when they differ from the bucket's: [{"id": entry id or None (no entry claims it), "findings":
    [ids]}], the bucket's own label first. One crash message can carry two root causes, or two
    forms of one: a user sees which findings are which, and a finding no entry claims inside a
    known bucket (a new bug behind a known message) is not hidden. [] when all agree."""
    own = known["id"] if known else None
    by: dict = {own: []}
    for f, st in zip(b["findings"], statuses):
        if f == fid:
            lab = own
        elif f not in cases or f not in keys:  # a finding whose file could not be read: not asked
            continue
        else:
            lab = _finding_label(store, f, cases, keys, st, torch_version)[0]
            lab = lab["id"] if lab else None
        by.setdefault(lab, []).append(f)
    if len(by) == 1:
        return []
    return [{"id": k, "findings": v} for k, v in by.items()]


def split_text(b: dict) -> str:
    """'findings: 6 entry-a, 2 entry-b, 1 claimed by no entry (fuzzcomp show ID)', or ''."""
    parts = []
    for part in b.get("known_split") or ():
        n = len(part["findings"])
        parts.append(f"{n} {part['id']}" if part["id"] else
                     f"{n} claimed by no entry (fuzzcomp show {part['findings'][0]})")
    return "findings: " + ", ".join(parts) if parts else ""


def group_of(b: dict) -> str:
    if b.get("known"):
        return "known"
    return "notes" if b.get("status") in ("flaky", "not-reproduced") else "new"


def groups(s: dict) -> dict[str, list[tuple[str, dict]]]:
    out: dict[str, list] = {g: [] for g in GROUPS}
    for slug, b in s.get("buckets", {}).items():
        out[group_of(b)].append((slug, b))
    out["new"].sort(key=lambda sb: (sb[1].get("severity", 4), sb[1].get("status") != "confirmed",
                                    -len(sb[1]["findings"]), sb[0]))
    out["known"].sort(key=lambda sb: (sb[1].get("severity", 4), sb[0]))
    return out


def by_entry(items: list[tuple[str, dict]]) -> list[tuple[dict, list[tuple[str, dict]]]]:
    """Known buckets under their registry entry, in the order the entries first appear: a
    maintainer counts bugs, and one root cause can show under several buckets (a message variant,
    another stage, a downstream symptom)."""
    out: dict[str, tuple[dict, list]] = {}
    for slug, b in items:
        out.setdefault(b["known"]["id"], (b["known"], []))[1].append((slug, b))
    return list(out.values())


def counts_line(s: dict) -> str:
    g = groups(s)
    confirmed = sum(b.get("status") == "confirmed" for _, b in g["new"])
    ms = s.get("minimise_s_by_group") or {}
    total = sum(ms.values())
    # one decimal, rounded down: a share of 89.6% printed as "90%" read as the 90% target met
    share = f"; minimisation time on new bugs {math.floor(1000 * ms.get('new', 0) / total) / 10:g}%" \
        if total else ""
    bugs = len(by_entry(g["known"]))
    known = f"{bugs} known" + (f" (in {len(g['known'])} buckets)" if bugs != len(g["known"]) else "")
    return (f"{len(g['new'])} new ({confirmed} confirmed in every fresh process), {known}, "
            f"{len(g['notes'])} notes{share}")


def _known_text(k: dict) -> str:
    return f"known: {k['id']} - {k.get('advice', '')}"


def _known_lines(s: dict, items: list) -> list[str]:
    lines = []
    for k, members in by_entry(items):
        n = sum(len(b["findings"]) for _, b in members)
        lines.append(f"  - {_known_text(k)}")
        unchecked = " (a rule's claim, label not checked: the campaign ended first)" \
            if any(b["known"].get("unchecked") for _, b in members) else ""
        lines.append(f"      x{n} in {len(members)} bucket{'s' * (len(members) > 1)}  [not re-checked]{unchecked}")
        for slug, b in members:
            lines.append(f"      {slug}  {b['symptom']}/{b['stage']}  {b.get('signature', '')}"[:160])
            if split := split_text(b):
                lines.append(f"        {split}")
        repro = next((b["repro"] for _, b in members if b.get("repro")), None)
        if repro:
            lines.append(f"      repro: {s['out']}/{repro}")
    return lines


def text_lines(s: dict, status_text: dict) -> list[str]:
    lines = []
    for name, items in groups(s).items():
        if not items:
            continue
        if name == "known":
            lines.append(f"  {TITLES[name]}: {len(by_entry(items))} bugs in {len(items)} buckets")
            lines += _known_lines(s, items)
            continue
        lines.append(f"  {TITLES[name]}: {len(items)}")
        for slug, b in items:
            mark = status_text.get(b.get("status"), b.get("status"))
            if b.get("known") and b.get("status") != "confirmed":
                mark = "known: not re-checked"
            ladder = f" (ladder: {b['ladder_stage']})" if b.get("ladder_stage") else ""
            lines.append(f"  - {slug}  {b['symptom']}/{b['stage']}{ladder}  x{len(b['findings'])}  [{mark}]")
            lines.append(f"      {b.get('signature', '')}")
            if b.get("known"):
                lines.append(f"      {_known_text(b['known'])}")
            if split := split_text(b):
                lines.append(f"      {split}")
            for note in b.get("notes") or ():
                lines.append(f"      note: {note}")
            if b.get("repro"):
                lines.append(f"      repro: {s['out']}/{b['repro']}")
            if b.get("detail") and not b.get("known"):
                lines.append(f"      {b['detail'][:160]}")
    return lines


def markdown(s: dict) -> str:
    parts = []
    for name, items in groups(s).items():
        rows = [f"### {TITLES[name]}: {len(items)}", ""]
        if not items:
            parts.append("\n".join(rows + ["none", ""]))
            continue
        if name == "known":
            parts.append(_known_markdown(items))
            continue
        rows += ["| bucket | symptom | stage | count | repro status | known / next step | repro | report |",
                 "|---|---|---|---|---|---|---|---|"]
        for slug, b in items:
            k = b.get("known")
            nxt = _known_text(k) if k else "; ".join(b.get("notes") or []) or "file it upstream (report ready)"
            nxt += f"; {split}" if (split := split_text(b)) else ""
            rows.append(f"| `{slug}` | {b['symptom']} | {b['stage']} | {len(b['findings'])} | {b.get('status')} | "
                        f"{nxt.replace('|', '/')} | {('[repro](' + b['repro'] + ')') if b.get('repro') else '-'} | "
                        f"{('[report](' + b['report'] + ')') if b.get('report') else '-'} |")
        parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)


def _known_markdown(items: list) -> str:
    entries = by_entry(items)
    rows = [f"### {TITLES['known']}: {len(entries)} bugs in {len(items)} buckets", "",
            "| known bug | next step | buckets (symptom/stage) | count | repro |", "|---|---|---|---|---|"]
    for k, members in entries:
        buckets = ", ".join(f"`{slug}` ({b['symptom']}/{b['stage']}"
                            + (f"; {split}" if (split := split_text(b)) else "") + ")" for slug, b in members)
        repro = next((b["repro"] for _, b in members if b.get("repro")), None)
        rows.append(f"| {k['id']} | {k.get('advice', '').replace('|', '/')} | {buckets} | "
                    f"{sum(len(b['findings']) for _, b in members)} | {('[repro](' + repro + ')') if repro else '-'} |")
    return "\n".join(rows) + "\n"
