"""``fuzzcomp doctor``: is this machine ready for a campaign? One line per check.

Contract: ``run_doctor(backend, device)`` prints ``ok``/``warn``/``FAIL`` lines
for torch, triton, the C++ toolchain Inductor's CPU backend calls, the GPU,
Ray and the backend (resolvable, shaped like a backend, and able to compile
and run a two-op function) and returns 0 when no required check failed, else
``exitcodes.HARNESS`` (3). Optional pieces (triton on CPU, Ray) only warn.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

from fuzzcomp import __version__
from fuzzcomp.base import exitcodes
from fuzzcomp.base.backends import BackendError, resolve_backend


def _line(status: str, name: str, text: str) -> None:
    print(f"{status:4}  {name:10} {text}")


def _compiler() -> tuple[str, str, bool]:
    cxx = os.environ.get("CXX") or next((c for c in ("g++", "c++", "clang++") if shutil.which(c)), None)
    if not cxx:
        return "FAIL", "no C++ compiler (g++/clang++) on PATH: Inductor on CPU cannot build kernels", True
    with tempfile.TemporaryDirectory(prefix="fuzzcomp-doctor-") as tmp:
        src = os.path.join(tmp, "t.cpp")
        with open(src, "w") as f:
            f.write("#include <cmath>\nextern \"C\" double f(double x) { return std::sqrt(x); }\n")
        try:
            p = subprocess.run([cxx, "-shared", "-fPIC", "-O1", src, "-o", os.path.join(tmp, "t.so")],
                               capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            return "FAIL", f"{cxx} cannot run: {e}", True
    if p.returncode:
        err = (p.stderr.strip().splitlines() or ["?"])[-1]
        return "FAIL", f"{cxx} cannot build a shared library: {err}", True
    return "ok", f"{shutil.which(cxx) or cxx} builds shared libraries", False


def backend_smoke(spec: str, device: str) -> tuple[str, str, bool]:
    """Compile and run sin(x)+1 twice with the backend ``spec``.

    FAIL (a usage error for ``run``) only when the backend is not a compiler: it does not resolve,
    or returns something other than a callable. A backend that is a compiler but raises, while
    compiling or in its compiled code, only warns: crashes are what a campaign is for, and a
    planted fault that fails every program is a legitimate (one-bucket) campaign."""
    try:
        backend = resolve_backend(spec)
    except BackendError as e:
        return "FAIL", str(e), True
    import torch
    returned: list = []

    def watched(gm, example_inputs):
        out = backend(gm, example_inputs)
        returned.append(out)
        if not callable(out):
            raise BackendError(f"returned {type(out).__name__}, not a callable")
        return out

    try:
        torch._dynamo.reset()

        def f(x):
            return torch.sin(x) + 1

        x = torch.arange(4.0, device=device)
        compiled = torch.compile(f, backend=backend if isinstance(backend, str) else watched)
        compiled(x)
        got = compiled(x)  # a campaign calls each compiled function several times
        if not torch.allclose(got.cpu(), f(x).cpu()):
            return "warn", f"backend {spec!r} compiles, but sin(x)+1 differs from eager (a planted fault?)", False
    except Exception as e:  # any failure here is the answer doctor is for
        msg = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
        if returned and not callable(returned[-1]):
            return ("FAIL", f"backend {spec!r} is not a compiler: given (GraphModule, example_inputs) it "
                            f"returned {type(returned[-1]).__name__}, not a callable", True)
        if not returned and isinstance(e, TypeError) and not _takes_two(backend):
            return "FAIL", f"backend {spec!r} is not a compiler: it cannot be called as f(gm, example_inputs)", True
        return ("warn", f"backend {spec!r} fails on sin(x)+1 on {device} ({type(e).__name__}: {msg}): "
                        f"expect most cases to be findings of this one bug", False)
    finally:
        torch._dynamo.reset()
    return "ok", f"backend {spec!r} compiled and ran sin(x)+1 on {device}", False


def _takes_two(fn) -> bool:
    import inspect
    try:
        inspect.signature(fn).bind(object(), [])
    except TypeError:
        return False
    except ValueError:  # a builtin without a signature: cannot tell
        return True
    return True


def run_doctor(backend: str = "inductor", device: str = "cpu") -> int:
    failed = False
    _line("ok", "fuzzcomp", f"{__version__}  python {sys.version.split()[0]}  {sys.executable}")
    try:
        import torch
    except Exception as e:
        _line("FAIL", "torch", f"cannot import torch: {type(e).__name__}: {e}")
        return exitcodes.HARNESS
    ver = torch.__version__
    major_minor = tuple(int(x) for x in ver.split("+")[0].split(".")[:2])
    old = major_minor < (2, 11)
    _line("FAIL" if old else "ok", "torch", f"{ver}" + ("  (fuzzcomp needs torch >= 2.11)" if old else ""))
    failed |= old
    cuda = torch.cuda.is_available()
    try:
        import triton
        _line("ok", "triton", triton.__version__)
    except Exception:
        need = device == "cuda"
        _line("FAIL" if need else "warn", "triton",
              "not installed" + (": Inductor on CUDA needs it (pip install triton)" if need else
                                 " (only needed for --device cuda)"))
        failed |= need
    status, text, bad = _compiler()
    _line(status, "c++", text)
    failed |= bad and device == "cpu"
    if cuda:
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        _line("ok", "gpu", f"{torch.cuda.device_count()} CUDA device(s): {names}")
    else:
        _line("FAIL" if device == "cuda" else "warn", "gpu",
              f"no usable CUDA device (torch {ver}, built for CUDA {torch.version.cuda})")
        failed |= device == "cuda"
    try:
        import ray
        _line("ok", "ray", f"{ray.__version__} (fuzzcomp run --ray)")
    except Exception:
        _line("warn", "ray", "not installed (only for --ray: pip install 'fuzzcomp[ray]')")
    if _has_bisector():
        _line("ok", "bisect", "torch._inductor.compiler_bisector.CompilerBisector (fuzzcomp bisect)")
    else:
        _line("warn", "bisect", "this torch has no CompilerBisector: `fuzzcomp bisect` is unavailable")
    if device == "cuda" and not cuda:
        _line("FAIL", "backend", "not checked: --device cuda needs a CUDA device")
    else:
        status, text, bad = backend_smoke(backend, device)
        _line(status, "backend", text)
        failed |= bad
    print("doctor: " + ("something a campaign needs is broken (FAIL above)" if failed else
                        "ready for `fuzzcomp run`"))
    return exitcodes.HARNESS if failed else exitcodes.CLEAN


def _has_bisector() -> bool:
    try:
        from torch._inductor.compiler_bisector import CompilerBisector  # noqa: F401
        return True
    except Exception:
        return False
