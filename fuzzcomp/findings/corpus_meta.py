"""Corpus entries after promotion: find a finding's entry, update its issue, say how to run a folder.

Contract: ``existing_entry(finding_dir, corpus_dir)`` is the corpus file that
already holds this finding (same dedup key), or None. ``set_issue(path, url)``
rewrites only that file's ``# fuzzcomp-corpus:`` line, keeping every other
field and byte. ``corpus_run_hint(corpus_dir)`` is a command that really
collects the folder's repros: the collection hook lives in the corpus's
``conftest.py``, so a folder without one gets a copy of the checkout's first
(a folder of bare repro files collects nothing under plain pytest).
"""
from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

from fuzzcomp.findings.corpus import CorpusError, format_meta, META_PREFIX, parse_meta
from fuzzcomp.findings.store import case_from_json, load_finding, StoreError, write_atomic
from fuzzcomp.findings.triage import dedup_key


def existing_entry(finding_dir: Path, corpus_dir: Path) -> Path | None:
    mini = Path(finding_dir) / "minimized.json"
    if not mini.exists():
        return None
    try:
        key = load_finding(Path(finding_dir) / "finding.json")["bucket_obj"]
        small = case_from_json(json.loads(mini.read_text())["case"])
    except (StoreError, ValueError, KeyError) as e:
        raise CorpusError(f"{finding_dir} cannot be read: {e}") from None
    want = dedup_key(key, small.program)
    for path in sorted(Path(corpus_dir).glob("*.py")):
        if path.name == "conftest.py":
            continue
        meta = parse_meta(path.read_text(errors="replace"))
        if meta and meta.get("dedup") == want:
            return path
    return None


def set_issue(path: Path, url: str) -> None:
    lines = Path(path).read_text().splitlines(keepends=True)
    for i, line in enumerate(lines[:5]):
        if line.startswith(META_PREFIX):
            meta = parse_meta(line)
            meta["issue"] = url
            lines[i] = format_meta(meta) + "\n"
            write_atomic(Path(path), "".join(lines))
            return
    raise CorpusError(f"{path} has no '{META_PREFIX}' line")


def corpus_run_hint(corpus_dir: Path) -> str:
    corpus_dir = Path(corpus_dir)
    plugin = Path(__file__).resolve().parents[2] / "corpus" / "conftest.py"
    if not (corpus_dir / "conftest.py").exists() and plugin.exists():
        shutil.copyfile(plugin, corpus_dir / "conftest.py")
        print(f"copied the corpus plugin to {corpus_dir / 'conftest.py'} (it collects the repro files)")
    try:
        import xdist  # noqa: F401
        par = "-n auto "
    except ImportError:
        par = ""
    return f"{shlex.quote(sys.executable)} -m pytest {par}{shlex.quote(str(corpus_dir))}"  # the interpreter that has fuzzcomp's torch
