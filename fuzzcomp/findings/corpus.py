"""The regression corpus and the known-issues file, as data.

Contract: a corpus file is a repro whose second line is one metadata line::

    # fuzzcomp-corpus: status=open torch>=2.13.0 bucket=SLUG dedup=KEY symptom=S device=cpu issue=URL

``parse_meta`` reads it (``None`` when absent), ``format_meta`` writes it.
``load_known`` lists the open corpus files as ``KnownEntry`` rows (bucket,
dedup key, torch range, issue); the known-bug registry
(``fuzzcomp.findings.known``) counts them among the bugs already known.
``promote`` copies a finding's minimised, re-verified repro into the corpus
with its metadata; it refuses custom backends (planted faults are not torch
bugs), unminimised or unconfirmed findings, and duplicates.
corpus/conftest.py (self-contained on purpose: the corpus runs with only
pytest and torch) parses the same line.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import torch

from fuzzcomp.findings.store import StoreError, case_from_json, load_finding, write_atomic
from fuzzcomp.findings.triage import dedup_key

META_PREFIX = "# fuzzcomp-corpus:"
_TORCH_SPEC = re.compile(r"^torch([<>=!~].*)$")


class CorpusError(ValueError):
    pass


def default_corpus_dir() -> Path:
    """``$FUZZCOMP_CORPUS``, else the corpus/ folder of the fuzzcomp checkout."""
    env = os.environ.get("FUZZCOMP_CORPUS")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "corpus"


def parse_meta(text: str) -> dict | None:
    for line in text.splitlines()[:5]:
        if line.startswith(META_PREFIX):
            meta: dict = {}
            for token in line[len(META_PREFIX):].split():
                m = _TORCH_SPEC.match(token)
                if m:
                    meta["torch"] = m.group(1)
                elif "=" in token:
                    k, _, v = token.partition("=")
                    meta[k] = v
            return meta
    return None


def format_meta(meta: dict) -> str:
    parts = [f"status={meta.get('status', 'open')}", f"torch{meta.get('torch', '>=0')}"]
    parts += [f"{k}={v}" for k, v in meta.items() if k not in ("status", "torch") and v]
    return META_PREFIX + " " + " ".join(parts)


def release(version: str) -> tuple[int, ...]:
    nums = re.match(r"\d+(\.\d+)*", version.strip())
    if not nums:
        raise CorpusError(f"not a version: {version!r}")
    return tuple(int(x) for x in nums.group(0).split("."))


_OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def torch_affected(spec: str | None, version: str) -> bool:
    """``version`` (e.g. "2.13.0+cpu") satisfies every clause of ``spec`` (e.g. ">=2.11,<2.14")."""
    if not spec:
        return True
    have = release(version)
    for clause in spec.split(","):
        m = re.match(r"\s*(<=|>=|==|!=|<|>)\s*(\S+)\s*$", clause)
        if not m:
            raise CorpusError(f"bad torch version clause {clause!r} (use e.g. >=2.11,<2.14)")
        want = release(m.group(2))
        width = max(len(have), len(want))
        pad = lambda t: t + (0,) * (width - len(t))  # noqa: E731
        if not _OPS[m.group(1)](pad(have), pad(want)):
            return False
    return True


@dataclass(frozen=True)
class KnownEntry:
    bucket: str
    dedup: str | None
    torch: str | None
    issue: str | None
    source: str           # the corpus file


def load_known(corpus_dir: Path) -> list[KnownEntry]:
    entries: list[KnownEntry] = []
    if not corpus_dir.is_dir():
        return entries
    for path in sorted(corpus_dir.glob("*.py")):
        if path.name == "conftest.py":
            continue
        meta = parse_meta(path.read_text(errors="replace"))
        if meta and meta.get("bucket") and meta.get("status", "open") == "open":
            entries.append(KnownEntry(meta["bucket"], meta.get("dedup"), meta.get("torch"),
                                      meta.get("issue"), path.name))
    return entries


def corpus_name(meta: dict) -> str:
    digest = hashlib.sha1(meta["dedup"].encode()).hexdigest()[:6]
    device = "_cuda" if meta.get("device") == "cuda" else ""  # GPU-only entries are named so
    return f"{meta['bucket'].replace('-', '_')}_{digest}{device}.py"


def _read_json(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def promote(finding_dir: Path, corpus_dir: Path, *, issue: str | None, torch_spec: str | None,
            status: str, run_repro, trust_status: bool = False) -> Path:
    """Copy the finding's repro into the corpus; ``run_repro(path) -> (exit, line)`` re-checks it.

    ``trust_status``: instead of re-running (a CUDA repro on a machine without a GPU), rely on the
    fresh-process check the campaign made where it found the bug (status.json: confirmed, BUG line);
    the affected torch version is then the one it was found with.
    """
    finding_dir = Path(finding_dir)
    try:
        data = load_finding(finding_dir / "finding.json")
    except StoreError as e:
        raise CorpusError(str(e)) from None
    case, key = data["case_obj"], data["bucket_obj"]
    if ":" in case.compile.backend:
        raise CorpusError(f"backend {case.compile.backend!r} is a custom backend: the corpus holds "
                          "real torch bugs only (planted-fault repros belong in tests/)")
    repro, mini = finding_dir / "repro.py", finding_dir / "minimized.json"
    if not (repro.exists() and mini.exists()):
        raise CorpusError(f"{finding_dir} has no minimised repro yet: run `fuzzcomp minimize "
                          f"{finding_dir}` first")
    small = case_from_json(json.loads(mini.read_text())["case"])
    base = torch.__version__.split("+")[0]
    if trust_status:  # checked where it was found (a GPU box); this machine cannot run it
        st = _read_json(finding_dir / "status.json")
        if status != "open" or not st.get("confirmed") or not str(st.get("repro_says", "")).startswith("BUG:"):
            raise CorpusError(f"{finding_dir}: --trust-status needs an open bug whose status.json says "
                              "confirmed, with its BUG line (a fresh-process check where it was found)")
        found_with = _read_json(finding_dir.parent.parent / "campaign.json").get("versions", {}).get("torch")
        if not found_with:
            raise CorpusError(f"{finding_dir}: no campaign.json with the torch version it was found with")
        base = str(found_with).split("+")[0]
    else:
        code, line = run_repro(repro)
        want = 1 if status == "open" else 0
        if code != want or (want == 1 and not str(line).startswith("BUG:")):  # a broken file exits 1 too
            raise CorpusError(f"{repro} exits {code} ({line}), not {want}: "
                              + ("the bug does not reproduce here" if want == 1 else "the bug still shows"))
    meta = {"status": status, "torch": torch_spec or f">={base}", "bucket": key.slug(),
            "dedup": dedup_key(key, small.program), "symptom": key.symptom,
            "device": case.compile.device, "issue": issue or "none"}
    for other in load_known(corpus_dir):
        if other.source.endswith(".py") and other.dedup == meta["dedup"]:
            raise CorpusError(f"already in the corpus as {other.source} (same dedup key)")
    target = corpus_dir / corpus_name(meta)
    lines = repro.read_text().splitlines(keepends=True)
    head = lines[:1] if lines and lines[0].startswith("#!") else []
    text = "".join(head + [format_meta(meta) + "\n"] + lines[len(head):])
    write_atomic(target, text)
    return target
