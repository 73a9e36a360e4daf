"""What a campaign sets up for its workers: the shared Inductor cache folder and the GPU count."""
from __future__ import annotations

import os
import tempfile

import torch


def gpu_count() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def inductor_cache_dir() -> tuple[str, bool]:
    """The campaign's TORCHINDUCTOR_CACHE_DIR and whether to delete it at the end.

    Default: a fresh temporary folder per campaign, shared by its workers and
    deleted at its end. Only compiled kernels (keyed by their C++ source) and
    Inductor's one-off CPU-capability probes land there: the FX-graph and
    AOTAutograd caches are off in workers. A fresh folder costs each campaign
    the probes' first compile once (measured: 121-145 s for the first case on
    a loaded 2-core box, 11-14 s for the next); in exchange no entry damaged by
    an earlier crash (a truncated .so gave a false "file too short" compile
    crash when reused) can outlive its campaign. $FUZZCOMP_INDUCTOR_CACHE names
    a folder to keep and reuse instead, at that risk.
    """
    keep = os.environ.get("FUZZCOMP_INDUCTOR_CACHE")
    if keep:
        os.makedirs(keep, exist_ok=True)
        return keep, False
    return tempfile.mkdtemp(prefix="fuzzcomp-inductor-"), True
