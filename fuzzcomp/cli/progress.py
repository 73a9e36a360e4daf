"""Live campaign progress on the terminal.

Contract: ``Progress`` is the campaign's progress callback. On a terminal it
keeps one live status line (rich: elapsed and remaining time, cases/min, valid
rate, findings by symptom and stage, the finding being minimised) and prints
each new bucket as it appears;
elsewhere (CI, pipes) it prints a plain status line at most every 30 s. It
only displays; it never decides anything.
"""
from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.live import Live
from rich.text import Text


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut at a word boundary with an ellipsis when longer than ``width``."""
    text = " ".join(str(text).split())
    if len(text) <= width:
        return text
    cut = text[:width - 1]
    if " " in cut[width // 2:]:
        cut = cut[:cut.rindex(" ")]
    return cut.rstrip() + "…"


class Progress:
    def __init__(self, budget_s: float | None, cases: int | None, quiet: bool = False):
        self.console = Console(stderr=True)
        if not self.console.is_terminal:  # a file or a pipe: long lines stay whole, never wrapped at 80
            self.console = Console(stderr=True, width=10_000, soft_wrap=True)
        self.budget_s, self.cases, self.quiet = budget_s, cases, quiet
        self.start = time.monotonic()
        self.counts: dict = {}
        self.by_symptom: dict = {}
        self.by_stage: dict = {}
        self.buckets = 0
        self.minimising: list[str] = []
        self.base = 0   # cases done before this session (resume): not part of this session's rate
        self.phase = "generating"
        self._last_plain = 0.0
        self.live = Live(Text(""), console=self.console, refresh_per_second=2, transient=True) \
            if self.console.is_terminal and not quiet else None

    def __enter__(self):
        if self.live:
            self.live.__enter__()
        return self

    def __exit__(self, *exc):
        if self.live:
            self.live.__exit__(*exc)

    def _line(self) -> str:
        el = time.monotonic() - self.start
        c = self.counts
        n = max(c.get("cases", 0), self.base)  # before a resumed session's first case: what was done
        rate = (n - self.base) / el * 60 if el > 0 else 0.0  # this session's cases only: never negative
        left = f"  left {max(0, self.budget_s - el) / 60:.1f} min" if self.budget_s else ""
        valid = f"{c['valid'] / n:.0%}" if n and "valid" in c else "-"  # "-": a resumed session's, not yet known
        sym = ", ".join(f"{k} {v}" for k, v in sorted(self.by_symptom.items())) or "none"
        stage = ", ".join(f"{k} {v}" for k, v in sorted(self.by_stage.items()))
        mini = f"  minimising {', '.join(self.minimising)}" if self.minimising else ""
        oom = f"  oom {c['oom']}" if c.get("oom") else ""
        return (f"[{self.phase}] {el / 60:.1f} min{left}  cases {n}  {rate:.1f}/min  valid {valid}  "
                f"findings {c.get('findings', 0)} in {self.buckets} buckets (by symptom: {sym}"
                f"{'; by stage: ' + stage if stage else ''}){oom}{mini}")

    def _say(self, text: str) -> None:
        # no markup: signatures and BUG lines hold brackets that rich would eat
        self.console.print(text, markup=False, highlight=False)

    def _show(self) -> None:
        if self.quiet:
            return
        if self.live:
            self.live.update(Text(self._line()))
        elif time.monotonic() - self._last_plain > 30:
            self._last_plain = time.monotonic()
            print(self._line(), file=sys.stderr, flush=True)

    def __call__(self, event: str, **kw) -> None:
        if event == "starting":
            self.phase = "starting"
            if not self.quiet:
                n = kw["jobs"]
                self._say(f"starting {n} worker{'s' if n != 1 else ''}... (each imports torch; the first "
                          "cases follow in a few seconds)")
        elif event == "phase":
            if self.phase not in ("stopping",):
                self.phase = kw["phase"]
            self.minimising = list(kw.get("minimising") or [])
            if self.live is None:  # the plain line is printed on its own clock, not per loop turn
                return
        elif event == "case":
            self.counts = dict(kw["counts"])
            if self.phase == "starting":
                self.phase = "generating"
        elif event == "finding":
            if kw.get("counts"):  # the finding is counted before its case is: never "0 in 1 buckets"
                self.counts = dict(kw["counts"])
            key = kw["key"]
            self.by_symptom[key.symptom] = self.by_symptom.get(key.symptom, 0) + 1
            self.by_stage[key.stage] = self.by_stage.get(key.stage, 0) + 1
            self.buckets += bool(kw["new"])
            if kw["new"] and not self.quiet:
                known = f"  [known bug: {kw['known']}]" if kw.get("known") else "  [NEW]"
                self._say(f"new bucket {key.slug()}: {key.symptom}/{key.stage}  {key.signature}"
                          f"  (finding {kw['fid']}){known}")
        elif event == "minimising":
            if kw["fid"] not in self.minimising:
                self.minimising.append(kw["fid"])
        elif event == "minimized":
            info = kw["info"]
            if info["id"] in self.minimising:
                self.minimising.remove(info["id"])
            if not self.quiet:
                said = info.get("repro_says", "") or info.get("error", "")
                runs = f" (failed in {info['confirm_runs']} fresh runs{', flaky' if info.get('flaky') else ''})" \
                    if info.get("confirm_runs") else ""
                if info.get("known_skipped"):
                    self._say(f"{info['id']}: {shorten(info['known_skipped'], 200)}")
                    return
                self._say(f"minimised {info['id']}: {info.get('probes', 0)} probes, "
                                   f"{info.get('minimize_s', 0)} s; repro exit {info.get('repro_exit')}"
                                   f"{runs}  {shorten(said, 160)}")
        elif event == "resume":
            self.base = kw["done"]
            self.counts.setdefault("findings", kw["findings"])
            if not self.quiet:
                self._say(f"resuming: {kw['done']} cases done, {kw['rerun']} to re-run, "
                                   f"{kw['findings']} findings kept")
        elif event == "warning":
            self._say(f"warning: {kw['message']}")
        elif event == "stopping":
            self.phase = "stopping"
            if not self.quiet:
                self._say(f"stopping ({kw['reason']}): saving findings and writing the summary")
        self._show()
