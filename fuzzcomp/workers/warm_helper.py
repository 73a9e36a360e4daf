"""The warm-cache helper process: ``python -m fuzzcomp.workers.warm_helper FD THREADS``.

Contract: started by ``warm_cache.WarmCache`` inside a worker, it talks over the connection on
file descriptor FD in pickled messages (``send_bytes``): it answers ``("ready",)`` once torch is
imported, then for each ``(case, options, folder)`` sends ``("phase", name)`` markers and one
answer, ``("done", verdicts, compiled outcomes per call, cache counts)`` or ``("error", why)``;
``None`` or a closed connection ends it. Both caches are on (as users have them) with
``TORCHINDUCTOR_CACHE_DIR`` = the case's folder; Dynamo and Inductor's in-memory caches are
cleared before each case, so only the folder carries the cold compile over. It dies with its
worker (``PR_SET_PDEATHSIG`` on Linux): a worker killed for a timeout takes its helper along.
"""
from __future__ import annotations

import os
import pickle
import signal
import sys


def _die_with_parent() -> None:
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main(fd: int, threads: int) -> None:
    from multiprocessing.connection import Connection
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = Connection(fd)
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    torch.set_num_threads(threads)
    from fuzzcomp.judge.check import check
    from fuzzcomp.run.execute import configure_torch, set_phase_listener
    from fuzzcomp.workers.warm_cache import cache_counts, caches_on, clear_in_memory
    configure_torch()
    set_phase_listener(lambda name: conn.send_bytes(pickle.dumps(("phase", name))))
    conn.send_bytes(pickle.dumps(("ready",)))
    while True:
        try:
            msg = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if msg is None:
            return
        case, options, folder = msg
        try:
            with caches_on(folder):
                clear_in_memory()
                obs, verdicts = check(case, options)
                counts = cache_counts()
            answer = ("done", list(verdicts), [r.compiled for r in obs.calls], counts)
            data = pickle.dumps(answer)
        except BaseException as e:  # our own failure, reported, never a finding
            data = pickle.dumps(("error", f"{type(e).__name__}: {e}"))
        conn.send_bytes(data)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    os._exit(0)
