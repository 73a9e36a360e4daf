"""One finding -> a Markdown bug report in the shape of PyTorch's pt2 template.

Contract: ``render_report(case, key, detail, repro_text, observed=None)``
returns Markdown a user can paste into a GitHub issue as-is, following the
sections of PyTorch's "torch.compile / pt2" bug template: a title line, "🐛
Describe the bug" (what goes wrong, the minimal program, the self-checking
repro), "Error logs" (expected versus actual, the repro's own output line) and
"Versions" (the essentials ``python -m torch.utils.collect_env`` reports,
gathered in-process without running slow commands). ``environment()`` is that
versions block as a dict.
"""
from __future__ import annotations

import os
import platform
import re
import sys
from importlib import metadata

from fuzzcomp.generators import emit
from fuzzcomp.generators.ir import Case

from .repro import versions
from .triage import BucketKey

_EXPECTED = {
    "numeric": "`torch.compile` returns values that agree with eager within the fp64-reference rule "
               "(PyTorch's fuzzer rule, as in `torch._dynamo.utils.same(..., fp64_ref)`).",
    "mutation": "After each call the inputs hold the same values as after the eager call.",
    "gradient": "Gradients agree with eager's within the fp64-reference rule.",
    "aliasing": "Outputs alias the same inputs as in eager.",
    "recompile": "No call that was already seen compiles again.",
    "compile-crash": "The compiled function runs, as eager does.",
    "runtime-crash": "The compiled function runs, as eager does.",
    "error-parity": "The compiled function raises the same error that eager raises.",
    "segfault": "The process survives compilation and the call, as it does in eager.",
    "hang": "Compilation and the call finish, as the eager call does.",
}

_WHAT = {
    "numeric": "returns wrong values", "mutation": "leaves an input with wrong values",
    "gradient": "computes wrong gradients", "aliasing": "changes output/input aliasing",
    "recompile": "recompiles a call it has already seen", "compile-crash": "fails to compile",
    "runtime-crash": "raises at run time", "error-parity": "returns where eager raises",
    "segfault": "crashes the process", "hang": "hangs",
}


def _dist(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment() -> dict:
    """collect_env's essentials, from in-process queries only (no nvidia-smi, no compilers run)."""
    import torch
    v = versions()
    cuda_ok = False
    try:
        cuda_ok = torch.cuda.is_available()
    except Exception:  # a broken driver must not break the report
        pass
    compiler = next((m.group(1) for line in torch.__config__.show().splitlines()
                     if (m := re.match(r"\s*-\s*((GCC|clang|MSVC)\s+[\d.]+)", line))), "unknown")
    return {
        "PyTorch version": f'{v["torch"]} (git {v["torch_git"]})',
        "Is debug build": str(torch.version.debug),
        "CUDA used to build PyTorch": torch.version.cuda or "None",
        "Is CUDA available": str(cuda_ok),
        "GPU": torch.cuda.get_device_name(0) if cuda_ok else "None",
        "OS": f"{platform.system()} {platform.release()} ({'-'.join(platform.libc_ver()) or 'unknown libc'})",
        "PyTorch build compiler": compiler,
        "Python version": f"{platform.python_version()} ({sys.maxsize.bit_length() + 1}-bit runtime)",
        "Python platform": v["platform"],
        "CPU": f"{_cpu_model()}, {os.cpu_count()} logical cores",
        "Versions of relevant libraries": ", ".join(f"{n}=={x}" for n in ("numpy", "triton", "sympy")
                                                   if (x := _dist(n))) or "none",
    }


def _inputs_table(case: Case) -> str:
    rows = ["| input | shape | dtype | layout |", "|---|---|---|---|"]
    sizes = dict(zip(case.program.symbols, case.calls[0].sizes)) if case.calls else {}
    for i in case.program.inputs:
        shape = tuple(sizes.get(d, d) if isinstance(d, str) else d for d in i.type.shape)
        rows.append(f"| `{i.name}` | `{list(shape)}` | {i.type.dtype}"
                    f" | {i.layout} |")
    return "\n".join(rows)


def render_report(case: Case, key: BucketKey, detail: str, repro_text: str,
                  observed: str | None = None) -> str:
    v = versions()
    spec = case.compile
    opts = f"backend={spec.backend!r}, dynamic={spec.dynamic}, fullgraph={spec.fullgraph}" + \
        (f", mode={spec.mode!r}" if spec.mode else "")
    n_calls = len(case.calls)
    calls = "once" if n_calls == 1 else f"{n_calls} times (sizes change between calls)"
    env = "\n".join(f"{k}: {val}" for k, val in environment().items())
    what = _WHAT.get(key.symptom, "disagrees with eager")
    return f"""<!-- title: torch.compile ({spec.backend}, {spec.device}) {what}: {key.symptom} at the {key.stage} stage -->
### 🐛 Describe the bug

`torch.compile({opts})` {what} on the small program below, while eager mode is fine
({key.symptom}; stage: {key.stage}; device: {spec.device}; the function is called {calls}).

```python
{emit(case.program).rstrip()}
```

{_inputs_table(case)}

Found by the fuzzcomp differential fuzzer (seed {case.seed}) and minimised automatically. The
self-contained script below needs only torch{"" if ":" not in spec.backend else " and the backend's module"};
it builds the inputs explicitly (seeded values, no pickles), compiles with the exact settings above
and judges like PyTorch's fuzzer reports: an fp64 reference, `fallback_random=True`, the RNG reset
per call, and eager run twice (and with inputs nudged by a few ulps) so that values on which eager is
itself nondeterministic or ill-conditioned are not blamed on the compiler. It prints one line and
exits 1 while the bug shows, 0 once it is fixed.

<details>
<summary>repro.py (run with <code>python repro.py</code>)</summary>

```python
{repro_text.rstrip()}
```

</details>

### Error logs

**Expected:** {_EXPECTED.get(key.symptom, "Compiled and eager agree.")}

**Actual:** {detail}

{f"Output of the repro on this machine:{chr(10)}{chr(10)}```{chr(10)}{observed}{chr(10)}```" if observed else ""}

### Versions

```
{env}
```

fuzzcomp {v["fuzzcomp"]}, generator {case.generator_version}, bucket `{key.slug()}` ({key.signature})
"""
