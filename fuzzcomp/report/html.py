"""Campaign folder -> one self-contained HTML page (``report.html``) with inline SVG plots.

Contract: ``write_html(store, summary)`` reads the event log (``events.jsonl``)
and the summary dict from ``report.summarise`` and writes ``OUT/report.html``:
headline figures, the findings table (bucket, symptom, stage, first seen,
count, links to the minimised repro and the Markdown report) and five plots:
new buckets over time, cases per minute over time, op coverage, feature
coverage and time by phase. No JavaScript, no external files, no plotting
library: the SVG is written here. Rebuilt from disk alone, so
``fuzzcomp report DIR`` gives the same page as the campaign's end.
"""
from __future__ import annotations

import html
import json
import time
from collections import Counter

from fuzzcomp.findings.store import Store, write_atomic
from fuzzcomp.report.headline import TITLES, counts_line, groups, split_text
from fuzzcomp.report.summary import STATUS_TEXT, repro_status

W, H = 640, 220          # plot size in px
PAD_L, PAD_B, PAD_T, PAD_R = 56, 34, 12, 16
BLUE, RED, GREY = "#3465a4", "#cc3333", "#888"


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    for k in range(-3, 12):
        for m in (1, 2, 2.5, 5):
            if m * 10.0 ** k >= v:
                return m * 10.0 ** k
    return v


def _axes(xmax: float, ymax: float, xlabel: str, ylabel: str) -> list[str]:
    x0, y0, x1, y1 = PAD_L, H - PAD_B, W - PAD_R, PAD_T
    out = [f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#333"/>',
           f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#333"/>']
    for i in range(5):
        fy = ymax * i / 4
        y = y0 - (y0 - y1) * i / 4
        out.append(f'<line x1="{x0 - 4}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{fy:g}</text>')
        fx = xmax * i / 4
        x = x0 + (x1 - x0) * i / 4
        out.append(f'<text x="{x:.1f}" y="{y0 + 15}" text-anchor="middle" font-size="11">{fx:.3g}</text>')
    out.append(f'<text x="{(x0 + x1) / 2}" y="{H - 4}" text-anchor="middle" font-size="12">{_e(xlabel)}</text>')
    out.append(f'<text x="12" y="{(y0 + y1) / 2}" text-anchor="middle" font-size="12" '
               f'transform="rotate(-90 12 {(y0 + y1) / 2})">{_e(ylabel)}</text>')
    return out


def _svg(body: list[str], title: str, height: int = H) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" '
            f'viewBox="0 0 {W} {height}" role="img" aria-label="{_e(title)}" font-family="sans-serif">'
            + "".join(body) + "</svg>")


def step_chart(series: list[tuple[str, str, list[tuple[float, float]]]], xmax: float, xlabel: str,
               ylabel: str, title: str) -> str:
    """Cumulative step lines: series = [(name, colour, [(x, y), ...])]."""
    ymax = _nice_max(max((y for _, _, pts in series for _, y in pts), default=0))
    xmax = xmax if xmax > 0 else 1.0
    sx = (W - PAD_L - PAD_R) / xmax
    sy = (H - PAD_T - PAD_B) / ymax
    body = _axes(xmax, ymax, xlabel, ylabel)
    for k, (name, colour, pts) in enumerate(series):
        d, last_y = [f"M{PAD_L},{H - PAD_B}"], 0.0
        for x, y in pts:
            px = PAD_L + x * sx
            d.append(f"L{px:.1f},{H - PAD_B - last_y * sy:.1f} L{px:.1f},{H - PAD_B - y * sy:.1f}")
            last_y = y
        d.append(f"L{W - PAD_R},{H - PAD_B - last_y * sy:.1f}")
        body.append(f'<path d="{" ".join(d)}" fill="none" stroke="{colour}" stroke-width="2"/>')
        body.append(f'<text x="{PAD_L + 8}" y="{PAD_T + 14 + 14 * k}" font-size="12" fill="{colour}">'
                    f'{_e(name)} ({last_y:g})</text>')
    return _svg(body, title)


def bar_chart(values: list[float], bin_min: float, xlabel: str, ylabel: str, title: str) -> str:
    """Vertical bars, one per time bin of ``bin_min`` minutes."""
    n = max(1, len(values))
    ymax = _nice_max(max(values, default=0))
    bw = (W - PAD_L - PAD_R) / n
    body = _axes(n * bin_min, ymax, xlabel, ylabel)
    for i, v in enumerate(values):
        h = (H - PAD_T - PAD_B) * v / ymax
        body.append(f'<rect x="{PAD_L + i * bw + 1:.1f}" y="{H - PAD_B - h:.1f}" width="{max(1.0, bw - 2):.1f}" '
                    f'height="{h:.1f}" fill="{BLUE}"><title>{v:.1f}</title></rect>')
    return _svg(body, title)


def hbar_chart(items: list[tuple[str, float]], title: str, unit: str = "", label_w: int = 230) -> str:
    """Horizontal bars with their labels and values (sorted as given)."""
    row = 16
    height = max(40, row * len(items) + 12)
    vmax = max((v for _, v in items), default=0) or 1
    span = W - label_w - 80
    body = []
    for i, (label, v) in enumerate(items):
        y = 6 + i * row
        w = span * v / vmax
        body.append(f'<text x="{label_w - 6}" y="{y + 11}" text-anchor="end" font-size="11">{_e(label)}</text>')
        body.append(f'<rect x="{label_w}" y="{y + 2}" width="{max(w, 0.5):.1f}" height="{row - 4}" fill="{BLUE}"/>')
        body.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 11}" font-size="11">{v:g}{_e(unit)}</text>')
    if not items:
        body.append('<text x="10" y="24" font-size="12" fill="#888">no data yet</text>')
    return _svg(body, title, height)


def timeline(store: Store) -> dict:
    """What the plots need, from the event log alone."""
    t0 = None
    cases, buckets, findings = [], [], []
    ops, feats = Counter(), Counter()
    for ev in store.events():
        t = ev.get("t")
        if not isinstance(t, (int, float)):
            continue
        t0 = t if t0 is None else min(t0, t)
        kind = ev.get("event")
        if kind == "case":
            cases.append(t)
            ops.update(ev.get("ops") or [])
            feats.update(ev.get("features") or [])
        elif kind == "finding":
            findings.append(t)
            if ev.get("new_bucket"):
                buckets.append(t)
    t0 = t0 or 0.0
    rel = lambda ts: sorted((x - t0) / 60 for x in ts)  # noqa: E731
    return {"t0": t0, "cases": rel(cases), "buckets": rel(buckets), "findings": rel(findings),
            "ops": ops, "features": feats}


def _cumulative(ts: list[float]) -> list[tuple[float, float]]:
    return [(x, i + 1) for i, x in enumerate(ts)]


def _novelty_table(n: dict) -> str:
    """What --novelty on drew less, by how much, and which known bug (or confirmed bucket) says so."""
    if n.get("mode") != "on":
        return ""
    rows = "".join(f"<tr><td>{_e(r['what'])}</td><td>x{r['factor']:g}</td><td>{_e('; '.join(r['why']))}</td></tr>"
                   for r in n.get("lowered", []))
    return (f'<h2 style="margin-top:16px">Generation steered away from known bugs: {len(n.get("lowered", []))} '
            f'lowered</h2><table><tr><th>what</th><th>weight</th><th>why</th></tr>{rows}</table>')


def render_html(store: Store, s: dict) -> str:
    tl = timeline(store)
    span_min = max(s.get("wall_s", 0) / 60, max(tl["cases"] + tl["findings"] + [0]), 1e-3)
    bins = min(40, max(6, int(span_min)))
    bin_min = span_min / bins
    per_bin = [0.0] * bins
    for x in tl["cases"]:
        per_bin[min(bins - 1, int(x / bin_min))] += 1
    rate = [v / bin_min for v in per_bin]
    plots = [
        ("New buckets over time", step_chart([("findings", BLUE, _cumulative(tl["findings"])),
                                              ("new buckets", RED, _cumulative(tl["buckets"]))],
                                             span_min, "minutes", "count", "new buckets over time")),
        ("Cases per minute", bar_chart(rate, bin_min, "minutes", "cases / min", "cases per minute")),
        ("Compiler-signal coverage", _signal_chart(s, span_min)),
        ("Time by phase (seconds, all workers)",
         hbar_chart([(k, v) for k, v in sorted(s.get("phase_s", {}).items(), key=lambda kv: -kv[1])],
                    "time by phase", " s", label_w=160)),
        (f"Op coverage ({len(tl['ops'])} ops, statements over all cases)",
         hbar_chart(tl["ops"].most_common(60), "op coverage")),
        ("Feature coverage (cases with the feature)",
         hbar_chart(sorted(tl["features"].items()), "feature coverage")),
    ]
    tables = []
    for name, items in groups(s).items():
        rows = []
        for slug, b in items:
            first = b.get("first_seen")
            first_txt = (f"{(first - tl['t0']) / 60:.1f} min<br><small>"
                         f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(first))} UTC</small>") if first else "-"
            link = lambda k, label: f'<a href="{_e(b[k])}">{label}</a>' if b.get(k) else "-"  # noqa: E731
            conf = STATUS_TEXT[b.get("status") or repro_status(b)]
            k = b.get("known")
            nxt = (f'{_e(k["id"])}: ' + (f'<a href="{_e(k["issue"])}">{_e(k["issue"])}</a> ' if k.get("issue") else "")
                   + _e(k.get("advice", ""))) if k else _e("; ".join(b.get("notes") or []) or "file it upstream")
            nxt += f"<br><small>{_e(split)}</small>" if (split := split_text(b)) else ""
            rows.append(f"<tr><td><code>{_e(slug)}</code><br><small>{_e(b.get('signature', ''))}</small></td>"
                        f"<td>{_e(b.get('symptom'))}</td><td>{_e(_stage(b))}</td><td>{first_txt}</td>"
                        f"<td>{len(b['findings'])}</td><td>{conf}</td><td>{nxt}</td>"
                        f"<td>{link('repro', 'repro.py')}</td><td>{link('report', 'report.md')}</td></tr>")
        body = ("<table><tr><th>bucket</th><th>symptom</th><th>stage</th><th>first seen</th><th>count</th>"
                "<th>status</th><th>known / next step</th><th>minimised repro</th><th>report</th></tr>"
                + "".join(rows) + "</table>") if rows else "<p>none</p>"
        tables.append(f'<h2 style="margin-top:16px">{_e(TITLES[name])}: {len(items)}</h2>{body}')
    table = "".join(tables) if s.get("buckets") else "<p>No findings.</p>"
    cfg = s.get("config", {})
    head = [("cases", s.get("cases")), ("valid", f"{s.get('valid')} ({s.get('valid_rate', 0):.1%})"),
            ("cases/min", s.get("cases_per_min")), ("wall", f"{s.get('wall_s', 0) / 60:.1f} min"),
            ("findings", s.get("findings")), ("buckets", len(s.get("buckets", {}))),
            ("buckets with a confirmed repro", s.get("confirmed_buckets", 0)),
            ("outside compile+execute", f"{s['overhead_share']:.1%}" if s.get("overhead_share") is not None
             else "-"),
            ("outside torch within cases", f"{s['job_overhead_share']:.1%}"
             if s.get("job_overhead_share") is not None else "-"),
            ("oom / dropped / harness errors",
             f"{s.get('oom', 0)} / {s.get('dropped', 0)} / {s.get('harness_errors', 0)}"),
            ("backend", cfg.get("backend")), ("jobs", cfg.get("jobs")), ("seed", cfg.get("seed")),
            ("stopped", s.get("stop_reason") or "running or crashed")]
    figures = "".join(f"<div class=fig><b>{_e(k)}</b><span>{_e(v)}</span></div>" for k, v in head)
    sections = "".join(f"<section><h2>{_e(t)}</h2>{svg}</section>" for t, svg in plots)
    steer = _novelty_table(s.get("novelty") or {})
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fuzzcomp campaign {_e(s.get('out'))}</title>
<style>
body{{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}}
h1{{font-size:22px}} h2{{font-size:16px;margin:4px 0}}
.figs{{display:flex;flex-wrap:wrap;gap:8px}}
.fig{{border:1px solid #ddd;border-radius:4px;padding:6px 10px;display:flex;flex-direction:column}}
.fig span{{font-size:18px}}
.plots{{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}}
section{{border:1px solid #ddd;border-radius:4px;padding:8px}}
table{{border-collapse:collapse;margin:12px 0}} td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;
vertical-align:top}} th{{background:#f3f3f3}}
</style></head><body>
<h1>fuzzcomp campaign <code>{_e(s.get('out'))}</code></h1>
<div class=figs>{figures}</div>
<p><b>{_e(counts_line(s))}</b></p>
{table}
{steer}
<div class=plots>{sections}</div>
<p><small>versions: {_e(json.dumps(s.get('versions', {}), sort_keys=True))}<br>
config: {_e(json.dumps(cfg, sort_keys=True))}<br>
event log: <a href="events.jsonl">events.jsonl</a> · summary: <a href="summary.md">summary.md</a></small></p>
</body></html>
"""


def _signal_chart(s: dict, span_min: float) -> str:
    series = (s.get("signals") or {}).get("series") or []
    return step_chart([("distinct signals", BLUE, [(x, d) for x, d, _ in series]),
                       ("seen once", RED, [(x, o) for x, _, o in series])],
                      span_min, "minutes", "signals", "compiler-signal coverage")


def write_html(store: Store, summary: dict) -> None:
    write_atomic(store.root / "report.html", render_html(store, summary))


def _stage(bucket: dict) -> str:
    """The bucket's stage, with the stage ladder's answer when the minimised repro got one."""
    ladder = bucket.get("ladder_stage")
    return f"{bucket.get('stage')} (ladder: {ladder})" if ladder else str(bucket.get("stage"))
