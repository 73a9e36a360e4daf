"""A campaign summary as JUnit XML and SARIF 2.1.0, for CI dashboards.

Contract: ``write_junit(summary, path)`` writes one ``<testcase>`` per bucket,
grouped as the headline groups them (classname ``fuzzcomp.new.SYMPTOM``,
``fuzzcomp.known.SYMPTOM``, ``fuzzcomp.notes.SYMPTOM``): a new bug is a
``<failure>`` carrying symptom, stage, signature, repro path and its BUG line; a
known bug is ``<skipped>`` with its registry entry, link and next step (it is
tracked upstream: it should not turn a CI job red again); a note is a failure
too, its message saying it is not reproduced in every fresh process. One
passing ``campaign`` case keeps a clean campaign a green suite, never an empty
one; damage in the campaign folder is one more failing case. ``write_sarif(summary, path)`` writes one result per bucket
whose location is the repro file. Both read only the summary dict that
``report.summarise`` returns; files are written atomically.
"""
from __future__ import annotations

import json
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from fuzzcomp.report.headline import groups, split_text
from fuzzcomp.report.summary import damage_lines
from fuzzcomp.findings.store import write_atomic


def write_junit(s: dict, path: Path) -> None:
    totals = f"cases {s.get('cases')}, valid {s.get('valid')}, findings {s.get('findings')}"
    cases = [f'  <testcase classname="fuzzcomp" name="campaign" time="{s.get("wall_s", 0)}">'
             f'<system-out>{escape(totals)}</system-out></testcase>']
    failures = 0
    skipped = 0
    for group, items in groups(s).items():
        for slug, b in items:
            repro = f"{s['out']}/{b['repro']}" if b.get("repro") else "not minimised yet"
            body = (f"{b['symptom']}/{b['stage']} x{len(b['findings'])} confirmed={b.get('confirmed')}\n"
                    f"signature: {b.get('signature', '')}\nrepro: {repro}\n{b.get('detail') or ''}"
                    + (f"\n{split}" if (split := split_text(b)) else ""))
            head = f'  <testcase classname="fuzzcomp.{group}.{escape(b["symptom"])}" name={quoteattr(slug)}>'
            known = b.get("known")
            if known:
                skipped += 1
                why = f"known bug {known['id']}: {known.get('advice', '')}"
                cases.append(f'{head}<skipped message={quoteattr(why[:300])}>{escape(body)}</skipped></testcase>')
                continue
            failures += 1
            msg = b.get("signature", "")[:200] if group == "new" else \
                f"not reproduced in every fresh process: {b.get('signature', '')}"[:200]
            cases.append(f'{head}<failure message={quoteattr(msg)} type={quoteattr(b["symptom"])}>'
                         f'{escape(body)}</failure></testcase>')
    for line in damage_lines(s):
        failures += 1
        cases.append(f'  <testcase classname="fuzzcomp" name="campaign-folder-damage">'
                     f'<error message={quoteattr(line[:200])}>{escape(line)}</error></testcase>')
    xml = ('<?xml version="1.0" encoding="utf-8"?>\n'
           f'<testsuite name="fuzzcomp" tests="{len(cases)}" failures="{failures}" errors="0" '
           f'skipped="{skipped}">\n'
           + "\n".join(cases) + "\n</testsuite>\n")
    write_atomic(Path(path), xml)


def write_sarif(s: dict, path: Path) -> None:
    results, rules = [], {}
    for slug, b in s.get("buckets", {}).items():
        rules[b["symptom"]] = {"id": b["symptom"], "shortDescription": {"text": f"torch.compile {b['symptom']}"}}
        loc = b.get("repro") or f"findings/{b['findings'][0]}/finding.json"
        results.append({
            "ruleId": b["symptom"], "level": "error" if b.get("confirmed") else "warning",
            "message": {"text": f"{b['symptom']}/{b['stage']}: {b.get('signature', '')} "
                                f"(x{len(b['findings'])}) {b.get('detail') or ''}".strip()},
            "partialFingerprints": {"fuzzcompBucket": slug},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": f"{s['out']}/{loc}"}}}]})
    doc = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
           "runs": [{"tool": {"driver": {"name": "fuzzcomp", "rules": list(rules.values())}},
                     "results": results}]}
    write_atomic(Path(path), json.dumps(doc, indent=1) + "\n")
