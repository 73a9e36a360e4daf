"""The regression corpus: collection in isolation, strict xfail, promote, known-bug triage.

The pytest run here uses a throwaway corpus (a copy of corpus/conftest.py plus
tiny scripts that behave like repros) so every outcome is exercised without
compiling anything: open bug showing -> xfailed; open bug passing -> a failure
saying it looks fixed (an XPASS, not a failure, for a verified=no repro); fixed -> passes; fixed but showing -> a regression
failure; CUDA-only -> skipped with the reason; a crashing repro -> failure.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzcomp.findings.corpus import CorpusError, format_meta, load_known, parse_meta, promote, torch_affected
from fuzzcomp.findings.known import Identity, default_registry, forget_cache
from fuzzcomp.generators import generate
from fuzzcomp.findings.store import Store
from fuzzcomp.findings.triage import BucketKey, dedup_key

REPO = Path(__file__).resolve().parent.parent
BUG = 'print("BUG: call 0, output[0]: planted")\nraise SystemExit(1)\n'
OK = 'print("OK: compiled matches eager on every call")\n'
CRASH = 'import nonexistent_module_for_the_test\n'


def _corpus(tmp_path, files):
    d = tmp_path / "corpus"
    d.mkdir()
    shutil.copy(REPO / "corpus" / "conftest.py", d / "conftest.py")
    for name, (meta, body) in files.items():
        (d / name).write_text("#!/usr/bin/env python3\n" + meta + "\n" + body)
    return d


def _run_pytest(d, *extra):
    p = subprocess.run([sys.executable, "-m", "pytest", str(d), "-rA", "-p", "no:cacheprovider",
                        "-o", "addopts=", *extra], capture_output=True, text=True, cwd=d, timeout=600)
    return p.returncode, p.stdout + p.stderr


def test_corpus_outcomes_under_xdist(tmp_path):
    d = _corpus(tmp_path, {
        "open_bug.py": ("# fuzzcomp-corpus: status=open torch>=2.0 symptom=numeric", BUG),
        "open_fixed_upstream.py": ("# fuzzcomp-corpus: status=open torch>=2.0 symptom=numeric", OK),
        "fixed_bug.py": ("# fuzzcomp-corpus: status=fixed torch<2.0 symptom=numeric", OK),
        "regressed.py": ("# fuzzcomp-corpus: status=fixed torch<2.0 symptom=numeric", BUG),
        "gpu_only.py": ("# fuzzcomp-corpus: status=open torch>=2.0 device=cuda", BUG),
        "crashing.py": ("# fuzzcomp-corpus: status=open torch>=2.0 symptom=numeric", CRASH),
        "unverified_missed.py": ("# fuzzcomp-corpus: status=open torch>=2.0 symptom=numeric verified=no", OK),
        "unverified_shows.py": ("# fuzzcomp-corpus: status=open torch>=2.0 symptom=numeric verified=no", BUG),
    })
    code, out = _run_pytest(d, "-n", "2")
    assert code == 1, out
    assert "XFAIL" in out and "open_bug" in out
    assert "FAILED" in out and "looks fixed upstream" in out and "open_fixed_upstream" in out
    assert "PASSED" in out and "fixed_bug" in out
    assert "regressed" in out and "a regression" in out
    assert "crashing" in out and "the repro itself failed" in out
    # verified=no: a hand-written repro never yet seen failing; passing is an XPASS, not a failure
    assert "XPASS" in out and "unverified_missed" in out and "unverified repro" in out
    assert "XFAIL" in out and "unverified_shows" in out
    assert not any("FAILED" in ln and "unverified" in ln for ln in out.splitlines()), out
    assert "passed" in out and "corpus-self-test" in out
    import torch
    if not torch.cuda.is_available():
        assert "SKIPPED" in out and "CUDA-only repro" in out


def test_empty_corpus_is_not_exit_5(tmp_path):
    code, out = _run_pytest(_corpus(tmp_path, {}))
    assert code == 0 and "1 passed" in out, out


def test_meta_roundtrip_and_version_ranges():
    meta = {"status": "open", "torch": ">=2.11,<2.14", "bucket": "numeric-inductor-1234abcd",
            "dedup": "numeric-inductor-1234abcd:torch.add+torch.sin", "issue": "https://x/y/1"}
    line = format_meta(meta)
    assert parse_meta("#!/usr/bin/env python3\n" + line + "\n") == meta
    assert torch_affected(">=2.11,<2.14", "2.13.0+cpu") and not torch_affected("<2.13", "2.13.0+cpu")
    with pytest.raises(CorpusError):
        torch_affected("~2.13", "2.13.0")


def _finding(tmp_path, backend):
    store = Store(tmp_path / "camp")
    store.create({})
    case = generate(5).with_compile(backend=backend)
    key = BucketKey("numeric", "inductor", "output values")
    fid = store.record_finding(case, [], key, "test")
    folder = store.findings_dir / fid
    (folder / "repro.py").write_text("#!/usr/bin/env python3\n" + BUG)
    (folder / "minimized.json").write_text(json.dumps({"case": json.loads(
        (folder / "finding.json").read_text())["case"]}))
    return folder, case, key


def test_promote_writes_metadata_and_refuses_duplicates(tmp_path):
    folder, case, key = _finding(tmp_path, "inductor")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    fake_run = lambda path: (1, "BUG: call 0, output[0]: planted")  # noqa: E731
    target = promote(folder, corpus, issue="https://github.com/pytorch/pytorch/issues/1", torch_spec=None,
                     status="open", run_repro=fake_run)
    text = target.read_text()
    assert text.startswith("#!/usr/bin/env python3\n# fuzzcomp-corpus: status=open torch>=")
    meta = parse_meta(text)
    assert meta["bucket"] == key.slug() and meta["dedup"] == dedup_key(key, case.program)
    assert not target.name.startswith("test_")
    with pytest.raises(CorpusError, match="already in the corpus"):
        promote(folder, corpus, issue=None, torch_spec=None, status="open", run_repro=fake_run)
    # triage: the bucket is now known (the registry counts open corpus files), on the torch range only
    ident = Identity(key.slug(), key.symptom, key.stage, key.signature)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FUZZCOMP_CORPUS", str(corpus))
        forget_cache()
        assert default_registry("2.13.0").match(ident).bug.issue == "https://github.com/pytorch/pytorch/issues/1"
        assert default_registry("1.0").match(ident).regression  # outside its torch range: news
    forget_cache()


def test_promote_refuses_planted_and_unreproduced(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    folder, _, _ = _finding(tmp_path / "a", "fuzzcomp.planted:perturb_add")
    with pytest.raises(CorpusError, match="custom backend"):
        promote(folder, corpus, issue=None, torch_spec=None, status="open", run_repro=lambda p: (1, "BUG"))
    folder, _, _ = _finding(tmp_path / "b", "inductor")
    with pytest.raises(CorpusError, match="does not reproduce"):
        promote(folder, corpus, issue=None, torch_spec=None, status="open", run_repro=lambda p: (0, "OK"))


def test_repo_corpus_metadata_is_valid():
    assert load_known(REPO / "corpus")


def test_promote_keeps_the_short_form_and_its_case_line(tmp_path):
    """A finding whose repro is the short form lands in the corpus as that short file, with the
    metadata line first and the case line (for ``fuzzcomp replay``) last."""
    from fuzzcomp.render.repro import render_repro
    from fuzzcomp.render.shortrepro import case_from_text, is_short
    import dataclasses

    from fuzzcomp.generators.ir import Assign, Call, Input, Program, Ref, TensorType
    folder, case, key = _finding(tmp_path, "inductor")
    f32 = TensorType(("s0",), "float32")
    small = dataclasses.replace(case, program=Program((Input("x0", f32),), (Assign(
        "v0", "torch.add", "torch.add({0}, {0})", (Ref("x0"),), f32),), ("v0",), ("s0",)), calls=(Call((3,), 0),))
    (folder / "repro.py").write_text(render_repro(small, key, "output[0]: rmse vs fp64 ..."))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    target = promote(folder, corpus, issue=None, torch_spec=">=2.11", status="open",
                     run_repro=lambda path: (1, "BUG: compiled output differs"))
    text = target.read_text()
    assert text.startswith("# fuzzcomp-corpus: status=open torch>=2.11 ") and is_short(text)
    assert case_from_text(text) is not None and parse_meta(text)["symptom"] == "numeric"


def test_a_long_corpus_file_rerenders_short(tmp_path):
    """The corpus's old long files (program, INPUTS, CALLS, COMPILE) become the short form with
    the same metadata line; what cannot be said short is reported, not guessed."""
    from fuzzcomp.findings.corpus import format_meta
    from fuzzcomp.render.corpus_rerender import rerender
    from fuzzcomp.render.repro import render_repro
    from fuzzcomp.render.shortrepro import is_short
    case = generate(5)
    key = BucketKey("compile-crash", "inductor", "x")
    meta = {"status": "open", "torch": ">=2.13.0", "bucket": key.slug(), "dedup": "d", "symptom": key.symptom,
            "device": "cpu", "issue": "none"}
    long = render_repro(case, key, "compiled raised X: y", form="long")
    head, rest = long.split("\n", 1)
    text = head + "\n" + format_meta(meta) + "\n" + rest
    short = rerender(text)
    if short is None:  # a module program: state the short form cannot build
        assert "MODEL" in long
        return
    assert short.startswith(format_meta(meta) + "\n") and is_short(short)
    assert len(short.splitlines()) < len(long.splitlines()) / 4
    compile(short, "short.py", "exec")
