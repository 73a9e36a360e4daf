"""``fuzzcomp bisect``: narrow an Inductor finding to a backend stage, a subsystem and a pass.

Contract: ``run_bisect(args)`` takes a finding (id or folder: its repro.py) or
a repro ``.py`` and drives ``torch._inductor.compiler_bisector.CompilerBisector``
(detected at run time; torch 2.11+). Each probe is the repro in a fresh
process, under a small wrapper that sets the backend the bisector is testing
(the repro itself names ``inductor``); a probe is "good" when the repro exits
0. The bisector's own state travels to the probes through its files in one
temporary Inductor cache folder and the ``TORCH_BISECT_*`` variables, the way
its ``run`` command does. Exit 1 with the answer printed when it narrows the
bug, 0 when the repro does not fail to begin with, 3 when this torch has no
bisector or the repro cannot run here (syntax error, missing module, CUDA).
When it cannot narrow the bug it also exits 1 (the bug still shows) with one
line starting ``bisect: not narrowed``: every stage passed alone, no subsystem
of the failing stage fixes it (each subsystem is swept once: torch's
``do_bisect`` restarts the sweep from the next subsystem after a full pass,
which repeats it once per subsystem, so a second ``test_disable`` probe of a
subsystem ends the search), or ``--max-probes`` ran out.
"""
from __future__ import annotations

import contextlib
import shlex

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from fuzzcomp.base import exitcodes
from fuzzcomp.base.environ import environ_var
from fuzzcomp.base.errors import HarnessError, UsageError
from fuzzcomp.cli.finding_lookup import check_repro_file, find_finding, run_repro_file
from fuzzcomp.findings.store import load_finding, StoreError

# Runs the repro with torch.compile's backend forced to the one being bisected; mode/options only
# mean something to inductor, and other backends refuse them.
_WRAPPER = '''import os, runpy, sys, torch
_backend = os.environ.get("TORCH_COMPILE_BACKEND")
if _backend:
    _orig = torch.compile
    def _compile(*a, **k):
        k["backend"] = _backend
        if _backend != "inductor":
            k.pop("mode", None); k.pop("options", None)
        return _orig(*a, **k)
    torch.compile = _compile
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


class _Stop(Exception):
    """Ends the bisector's loop from inside a probe: the reason becomes the "not narrowed" line."""


def _bisector():
    try:
        from torch._inductor.compiler_bisector import CompilerBisector
    except Exception:
        return None
    return CompilerBisector if hasattr(CompilerBisector, "do_bisect") else None


def _repro_of(args) -> Path:
    if args.finding.endswith(".py"):
        path = Path(args.finding)
        if not path.is_file():
            raise UsageError(f"no such file: {args.finding}")
        return path
    folder = find_finding(args.finding, args.campaign)
    try:
        backend = load_finding(folder / "finding.json")["case_obj"].compile.backend
    except StoreError as e:
        raise UsageError(str(e)) from None
    if backend != "inductor":
        raise UsageError(f"{folder} was found with backend {backend!r}: the bisector only splits Inductor")
    repro = folder / "repro.py"
    if not repro.is_file():
        raise UsageError(f"{folder} has no repro.py yet: run `fuzzcomp minimize {shlex.quote(str(folder))}` first")
    return repro


def run_bisect(args) -> int:
    repro = _repro_of(args)
    early = check_repro_file(repro)
    if early:
        raise (HarnessError if early[0] == exitcodes.HARNESS else UsageError)(early[1])
    bisector = _bisector()
    if bisector is None:
        import torch
        raise HarnessError(f"torch {torch.__version__} has no torch._inductor.compiler_bisector.CompilerBisector "
                           "(torch 2.11+ has it)")
    first, line = run_repro_file(repro, timeout_s=args.timeout)
    if first == exitcodes.CLEAN:
        print(f"the repro passes here ({line}): nothing to bisect")
        return exitcodes.CLEAN
    if first != exitcodes.BUG:
        raise HarnessError(line)
    print(f"bisecting: {line}")
    with tempfile.TemporaryDirectory(prefix="fuzzcomp-bisect-") as tmp, contextlib.ExitStack() as scoped:
        wrapper = Path(tmp) / "bisect_probe.py"
        wrapper.write_text(_WRAPPER)
        cache = Path(tmp) / "inductor-cache"
        scoped.enter_context(environ_var("TORCHINDUCTOR_CACHE_DIR", str(cache)))
        probes = [0]
        swept: set = set()

        def good() -> bool:
            env = dict(os.environ)
            # the probe reads the bisector's state from <its inductor cache>/bisect: share the folder
            env["TORCHINDUCTOR_CACHE_DIR"] = getattr(bisector, "in_process_cache", None) or str(cache)
            backend, subsystem = bisector.get_backend(), bisector.get_subsystem()
            if backend:
                env["TORCH_COMPILE_BACKEND"] = env["TORCH_BISECT_BACKEND"] = backend
            if subsystem:
                env["TORCH_BISECT_SUBSYSTEM"] = subsystem
                if bisector.get_run_state(backend, subsystem) == "test_disable":
                    env["TORCH_BISECT_MAX"] = "-1"
                    if (backend, subsystem) in swept:
                        raise _Stop(f"the bug is in backend {backend}, but disabling no single subsystem "
                                    f"fixes it (each of its {len(swept)} subsystems was tried once)")
                    swept.add((backend, subsystem))
            if probes[0] >= args.max_probes:
                raise _Stop(f"--max-probes {args.max_probes} spent (last at backend={backend} "
                            f"subsystem={subsystem}); raise it to search further")
            probes[0] += 1
            try:
                p = subprocess.run([sys.executable, str(wrapper), str(repro.resolve())], env=env,
                                   capture_output=True, text=True, timeout=args.timeout, cwd=str(repro.parent))
            except subprocess.TimeoutExpired:
                return False
            print(f"  probe {probes[0]}: backend={backend} subsystem={subsystem} -> "
                  f"{'good' if p.returncode == 0 else 'bad'}", flush=True)
            return p.returncode == 0

        try:
            if hasattr(bisector, "in_process_cache"):
                bisector.in_process_cache = str(cache)
            result = bisector.do_bisect(good)
        except _Stop as e:
            print(f"bisect: not narrowed after {probes[0]} probes: {e}")
            return exitcodes.BUG
    if result is None:
        print(f"bisect: not narrowed after {probes[0]} probes: every backend stage passed alone, the "
              "bisector could not place it (the failure may need the whole pipeline)")
        return exitcodes.BUG
    fields = {k: getattr(result, k, None) for k in ("backend", "subsystem", "bisect_number", "debug_info")}
    print("bisect: " + "  ".join(f"{k}={v}" for k, v in fields.items() if v is not None)
          + f"  ({probes[0]} probes)")
    return exitcodes.BUG
