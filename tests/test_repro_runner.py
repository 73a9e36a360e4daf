"""One repro runner: the standalone copy in corpus/conftest.py agrees with fuzzcomp's own.

``corpus/conftest.py`` is copied into other folders and needs only pytest and the standard
library, so it keeps its own ``run_repro`` and ``parse_meta``. These tests hold them to
``fuzzcomp.base.repro_runner`` and ``fuzzcomp.findings.corpus.parse_meta``.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from fuzzcomp.base.repro_runner import last_line, run_repro_file
from fuzzcomp.findings import corpus

CONFTEST = Path(__file__).resolve().parent.parent / "corpus" / "conftest.py"


@pytest.fixture(scope="module")
def standalone():
    spec = importlib.util.spec_from_file_location("corpus_conftest_copy", CONFTEST)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SCRIPTS = {
    "fixed": 'print("compiled and eager agree")\n',
    "shows": 'print("some output")\nprint("BUG: call 0, output[0]: differs")\nraise SystemExit(1)\n',
    "two-bugs": 'print("BUG: first")\nprint("BUG: second")\nprint("after")\nraise SystemExit(1)\n',
    "broken": 'import no_such_module_anywhere\n',
    "exit-2": 'import sys\nprint("bad input", file=sys.stderr)\nraise SystemExit(2)\n',
    "silent": 'raise SystemExit(1)\n',
    "hangs": 'import time\ntime.sleep(30)\n',
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_conftest_runner_agrees_with_fuzzcomps(name, tmp_path, standalone):
    path = tmp_path / f"{name.replace('-', '_')}.py"
    path.write_text(SCRIPTS[name])
    timeout = 3.0
    code, line = standalone.run_repro(path, timeout)
    run = run_repro_file(path, timeout)
    assert code == run.code
    assert line == (run.why if run.code is None else last_line(run, 400))
    # and both read it the same way: bug shows, fixed, or the file itself is broken
    shows = code == 1 and line.startswith("BUG:")
    assert shows == (run.code == 1 and bool(run.bug_lines))


@pytest.mark.parametrize("text", [
    "# fuzzcomp-corpus: status=open torch>=2.5 bucket=numeric-inductor-ab12 symptom=numeric issue=none\nimport torch\n",
    "#!/usr/bin/env python3\n# fuzzcomp-corpus: status=fixed torch>=2.4,<2.6 bucket=b dedup=b:add+mul device=cuda "
    "issue=https://github.com/pytorch/pytorch/issues/1\n",
    "import torch\n",
    "# fuzzcomp-corpus:\n",
])
def test_conftest_metadata_parser_agrees_with_fuzzcomps(text, standalone):
    assert standalone.parse_meta(text) == corpus.parse_meta(text)


def test_the_stored_corpus_parses_the_same_both_ways(standalone):
    for path in sorted(CONFTEST.parent.glob("*.py")):
        text = path.read_text()
        assert standalone.parse_meta(text) == corpus.parse_meta(text), path.name
