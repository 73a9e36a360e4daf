"""Rendering is pinned: a fixed set of stored findings re-renders byte-identical repros and reports.

Each ``tests/data/rerender/*.json`` holds one minimised finding (its case, bucket and detail, as a
campaign stores them). For each, the short repro, the long repro and the bug report rendered with
today's code must equal the stored ``.short.py``, ``.long.py`` and ``.report.md`` byte for byte.
Nothing is compiled: the report's eager oracle settings run the program in eager only. The
versions and environment block are pinned so the files do not depend on the machine.

After a change that is meant to alter the text, regenerate with
``FUZZCOMP_REGOLD=1 python -m pytest tests/test_rerender_golden.py`` and review the diff.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from fuzzcomp.render.bugreport import render_report
from fuzzcomp.render.repro import render_long, render_repro
from fuzzcomp.findings.store import case_from_json
from fuzzcomp.findings.triage import BucketKey

DATA = Path(__file__).parent / "data" / "rerender"
FINDINGS = sorted(DATA.glob("*.json"))
PINNED = {"fuzzcomp": "0.0-golden", "torch": "2.x-golden", "torch_git": "0123456789abcdef",
          "python": "3.x", "platform": "golden-platform", "cuda": None, "gpu": None}
INFOS = {"report.md": {"confirmed": True},
         "unconfirmed.report.md": {"confirmed": False, "repro_says": "exit 0: no BUG line"}}


@pytest.fixture
def pinned(monkeypatch):
    for fn in (render_report, render_long):
        mod = sys.modules[fn.__module__]
        if hasattr(mod, "versions"):
            monkeypatch.setattr(mod, "versions", lambda: dict(PINNED))
        if hasattr(mod, "collect_env"):
            monkeypatch.setattr(mod, "collect_env", lambda: "PyTorch version: golden")


def _render(path: Path) -> dict[str, str]:
    d = json.loads(path.read_text())
    case, key, detail = case_from_json(d["case"]), BucketKey.from_json(d["bucket"]), d["detail"]
    short = render_repro(case, key, detail)
    out = {"short.py": short, "short-full.py": render_repro(case, key, detail, form="short-full"),
           "long.py": render_long(case, key, detail)}
    for name, info in INFOS.items():
        out[name] = render_report(case, key, detail, short, "observed: golden", info=dict(info))
    return out


def test_the_set_covers_several_symptoms():
    symptoms = {json.loads(p.read_text())["bucket"]["symptom"] for p in FINDINGS}
    assert len(FINDINGS) >= 5 and len(symptoms) >= 4, symptoms


@pytest.mark.parametrize("path", FINDINGS, ids=[p.stem for p in FINDINGS])
def test_rerender_is_byte_identical(path, pinned):
    for suffix, text in _render(path).items():
        want = path.with_suffix(f".{suffix}")
        if os.environ.get("FUZZCOMP_REGOLD"):
            want.write_text(text)
        assert want.read_text() == text, f"{want.name} differs from today's render"
