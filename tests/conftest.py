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


@pytest.fixture(autouse=True)
def _torch_globals_restored():
    """Torch's process-wide settings come back after every test. Generated programs change them
    on purpose (grad mode, deterministic algorithms, the default dtype), and under xdist a test
    that leaves one changed breaks whichever test its worker runs next: a float64 default dtype
    turned test_feedback's float32 kernels into double ones in one CI run."""
    import torch
    saved = (torch.is_grad_enabled(), torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_default_dtype())
    yield
    torch.set_grad_enabled(saved[0])
    torch.use_deterministic_algorithms(saved[1], warn_only=saved[2])
    torch.set_default_dtype(saved[3])


def _torch_default_cache() -> str | None:
    try:
        from torch._inductor.runtime.cache_dir_utils import default_cache_dir
    except ImportError:  # a torch that keeps it elsewhere: such a test fails and names the variable
        return None
    return default_cache_dir()


_WATCHED_ENV = ("FUZZCOMP_", "TORCHINDUCTOR_", "TORCH_TRACE", "TORCH_LOGS", "CUDA_VISIBLE_DEVICES")


@pytest.fixture(autouse=True)
def _environment_restored():
    """A test that leaves a fuzzcomp or torch variable changed in ``os.environ`` fails, and the
    variable comes back for the tests after it. Under xdist a leak breaks whichever test the worker
    runs next: ``fuzzcomp link --corpus`` run in-process once left $FUZZCOMP_CORPUS on a temporary
    corpus, and 17 registry tests after it on that worker read an empty registry."""
    def watched():
        return {k: v for k, v in os.environ.items() if k.startswith(_WATCHED_ENV)}
    saved = watched()
    yield
    now = watched()
    if "TORCHINDUCTOR_CACHE_DIR" not in saved and now.get("TORCHINDUCTOR_CACHE_DIR") == _torch_default_cache():
        del now["TORCHINDUCTOR_CACHE_DIR"]  # torch's own: the first cache lookup of a process sets it
    if now != saved:
        for k in now.keys() - saved.keys():
            del os.environ[k]
        os.environ.update(saved)
        changed = sorted(k for k in now.keys() | saved.keys() if now.get(k) != saved.get(k))
        pytest.fail(f"the test left os.environ changed: {', '.join(changed)}", pytrace=False)
