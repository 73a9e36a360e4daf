"""Shared test helpers: run the CLI in-process or as a subprocess."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest
from hypothesis import settings

# Hypothesis keeps a database of failing examples in ./.hypothesis/ by default
# and replays them first on the next run, so a test could fail on the one
# machine that saw a failure before and pass on a fresh clone. Off: a failure
# prints its example (and a @reproduce_failure line), which reruns anywhere.
# Its other on-disk cache (literal constants of the code under test, keyed by
# the source's hash) goes to the temp dir instead of the repository.
_uid = os.getuid() if hasattr(os, "getuid") else 0
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY",
                      os.path.join(tempfile.gettempdir(), f"fuzzcomp-tests-hypothesis-{_uid}"))
settings.register_profile("fuzzcomp-tests", database=None)
settings.load_profile("fuzzcomp-tests")


@pytest.fixture
def cli():
    """Run ``fuzzcomp ARGS`` in a fresh interpreter; returns CompletedProcess."""
    def run(*args, timeout=600, **kw):
        return subprocess.run([sys.executable, "-m", "fuzzcomp", *map(str, args)],
                              capture_output=True, text=True, timeout=timeout, **kw)
    return run
