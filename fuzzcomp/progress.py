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


class Progress:
    def __init__(self, budget_s: float | None, cases: int | None, quiet: bool = False):
        self.console = Console(stderr=True)
        self.budget_s, self.cases, self.quiet = budget_s, cases, quiet
        self.start = time.monotonic()
        self.counts: dict = {}
        self.by_symptom: dict = {}
        self.by_stage: dict = {}
        self.buckets = 0
        self.minimising: str | None = None
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
        n = c.get("cases", 0)
        rate = (n - self.base) / el * 60 if el > 0 else 0.0
        left = f"  left {max(0, self.budget_s - el) / 60:.1f} min" if self.budget_s else ""
        valid = c.get("valid", 0) / n if n else 0.0
        sym = ", ".join(f"{k} {v}" for k, v in sorted(self.by_symptom.items())) or "none"
        stage = ", ".join(f"{k} {v}" for k, v in sorted(self.by_stage.items()))
        mini = f"  minimising {self.minimising}" if self.minimising else ""
        oom = f"  oom {c['oom']}" if c.get("oom") else ""
        return (f"[{self.phase}] {el / 60:.1f} min{left}  cases {n}  {rate:.1f}/min  valid {valid:.0%}  "
                f"findings {c.get('findings', 0)} in {self.buckets} buckets (by symptom: {sym}"
                f"{'; by stage: ' + stage if stage else ''}){oom}{mini}")

    def _show(self) -> None:
        if self.quiet:
            return
        if self.live:
            self.live.update(Text(self._line()))
        elif time.monotonic() - self._last_plain > 30:
            self._last_plain = time.monotonic()
            print(self._line(), file=sys.stderr, flush=True)

    def __call__(self, event: str, **kw) -> None:
        if event == "case":
            self.counts = dict(kw["counts"])
        elif event == "finding":
            key = kw["key"]
            self.by_symptom[key.symptom] = self.by_symptom.get(key.symptom, 0) + 1
            self.by_stage[key.stage] = self.by_stage.get(key.stage, 0) + 1
            self.buckets += bool(kw["new"])
            if kw["new"] and not self.quiet:
                self.console.print(f"new bucket {key.slug()}: {key.symptom}/{key.stage}  {key.signature}"
                                   f"  (finding {kw['fid']})")
        elif event == "minimising":
            self.minimising = kw["fid"]
        elif event == "minimized":
            self.minimising = None
            info = kw["info"]
            if not self.quiet:
                said = info.get("repro_says", "") or info.get("error", "")
                self.console.print(f"minimised {info['id']}: {info.get('probes', 0)} probes, "
                                   f"{info.get('minimize_s', 0)} s; repro exit {info.get('repro_exit')}"
                                   f"  {said[:100]}")
        elif event == "resume":
            self.base = kw["done"]
            if not self.quiet:
                self.console.print(f"resuming: {kw['done']} cases done, {kw['rerun']} to re-run, "
                                   f"{kw['findings']} findings kept")
        elif event == "warning":
            self.console.print(f"warning: {kw['message']}")
        elif event == "stopping":
            self.phase = "stopping"
            if not self.quiet:
                self.console.print(f"stopping ({kw['reason']}): saving findings and writing the summary")
        self._show()
