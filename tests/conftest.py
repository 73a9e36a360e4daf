"""Shared test helpers: run the CLI in-process or as a subprocess."""
from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.fixture
def cli():
    """Run ``fuzzcomp ARGS`` in a fresh interpreter; returns CompletedProcess."""
    def run(*args, timeout=600, **kw):
        return subprocess.run([sys.executable, "-m", "fuzzcomp", *map(str, args)],
                              capture_output=True, text=True, timeout=timeout, **kw)
    return run
