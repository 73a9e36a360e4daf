"""One finding -> a Markdown bug report in the shape of upstream ``topic: fuzzer`` issues.

Contract: ``render_report(case, key, detail, repro_text, observed=None, log_path=None, info=None)``
returns Markdown a user files as written: the title as its first line
(``[Fuzzer][Eager/Compile Divergence] ...``), "🐛 Describe the bug" (what goes wrong, the
input table with ``requires_grad`` and a sentence saying backward runs when it does, the
short repro inline, the stage and the backend ladder, the recheck on another torch when
``findings/<id>/recheck.json`` exists), "Error logs" (the repro's whole output from its
fresh-process run, traceback included, read from ``log_path``), "Versions" (the output of
``python -m torch.utils.collect_env``, run once per process with a time bound; the in-process
``environment()`` summary where it cannot run) and the label line. ``info`` is the finding's
status (``stage_ladder``, ``repro_form``).
"""
from __future__ import annotations

import functools
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path
from importlib import metadata

from fuzzcomp.generators import emit
from fuzzcomp.generators.ir import Case

from .repro import _oracle_settings, title, versions
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


COLLECT_ENV_TIMEOUT_S = 120


@functools.lru_cache(maxsize=1)
def collect_env() -> str:
    """``python -m torch.utils.collect_env``'s output (once per process: a campaign's reports share
    it), else the in-process summary with the reason it could not run."""
    why = ""
    try:
        p = subprocess.run([sys.executable, "-m", "torch.utils.collect_env"], capture_output=True,
                           text=True, timeout=COLLECT_ENV_TIMEOUT_S)
        if p.returncode == 0 and p.stdout.strip():
            return p.stdout.strip()
        why = f"exit {p.returncode}: {(p.stderr.strip().splitlines() or [''])[-1]}"
    except (OSError, subprocess.TimeoutExpired) as e:
        why = f"{type(e).__name__}: {e}"
    summary = "\n".join(f"{k}: {val}" for k, val in environment().items())
    return f"(python -m torch.utils.collect_env did not run here: {why})\n{summary}"


def _inputs_table(case: Case, grads: list) -> str:
    rows = ["| input | shape | dtype | layout | requires_grad |", "|---|---|---|---|---|"]
    sizes = dict(zip(case.program.symbols, case.calls[0].sizes)) if case.calls else {}
    for i in case.program.inputs:
        shape = tuple(sizes.get(d, d) if isinstance(d, str) else d for d in i.type.shape)
        layout = f"view of `{i.alias_of}` ({i.view})" if i.kind == "alias" else i.layout
        shown = "-" if i.kind == "alias" else f"`{list(shape)}`"  # a view takes its base's shape
        rows.append(f"| `{i.name}` | {shown} | {i.type.dtype} | {layout} | {i.name in grads} |")
    return "\n".join(rows)


def _ladder(info: dict, key: BucketKey) -> str:
    lad = info.get("stage_ladder")
    if not lad:
        return f"Stage: **{key.stage}** (no backend ladder was run for this finding)."
    rungs = lad.get("rungs") or {}
    steps = ", ".join(f"`{b}`: {r}" for b, r in rungs.items()) if isinstance(rungs, dict) else str(rungs)
    return (f"Stage: **{lad.get('stage')}**: the first rung of the backend ladder "
            f"(eager → aot_eager → aot_eager_decomp_partition → inductor) that shows it"
            + (f" is `{lad.get('rung')}`" if lad.get("rung") else "") + (f" ({steps})." if steps else "."))


def _recheck(finding_dir: Path | None) -> str:
    if finding_dir is None or not (finding_dir / "recheck.json").exists():
        return ""
    try:
        r = json.loads((finding_dir / "recheck.json").read_text())
        said = {"fixed": "the bug is **fixed** there", "shows": "the bug **shows** there too",
                "broken": "the repro could not run there"}.get(r.get("result"), str(r.get("result")))
        return f"Rechecked on torch {r.get('torch')} (Python {r.get('python')}): {said}."
    except (OSError, ValueError, AttributeError):
        return ""


def _log(log_path, observed) -> str:
    try:
        text = Path(log_path).read_text(errors="replace").strip() if log_path else ""
    except OSError:
        text = ""
    text = text or (observed or "")
    if len(text) > 20000:  # a log of every compiled kernel: keep the head and the end, where the error is
        text = text[:4000] + "\n...\n" + text[-15000:]
    return text


def render_report(case: Case, key: BucketKey, detail: str, repro_text: str,
                  observed: str | None = None, log_path=None, info: dict | None = None) -> str:
    info = info or {}
    spec = case.compile
    try:
        grads = _oracle_settings(case)[0]
    except Exception:  # the report must never be lost to a failing eager run
        grads = []
    opts = f"backend={spec.backend!r}" + (f", dynamic={spec.dynamic}" if spec.dynamic is not None else "") + \
        (", fullgraph=True" if spec.fullgraph else "") + (f", mode={spec.mode!r}" if spec.mode else "")
    n_calls = len(case.calls)
    calls = "once" if n_calls == 1 else f"{n_calls} times (sizes change between calls)"
    runs_back = key.symptom in ("gradient", "runtime-crash", "compile-crash")
    backward = (f"Inputs {', '.join(f'`{g}`' for g in grads)} require grad, and the fuzzer runs backward "
                "after every call (of the sum of each output times fixed weights), so the compiled backward "
                "is judged too" + ("; the repro below runs it as well." if runs_back else
                                   "; the repro below needs only the forward.")) \
        if grads else "No input requires grad; only the forward runs."
    short = "INPUTS = [" not in repro_text
    repro = f"```python\n{repro_text.rstrip()}\n```" if short else (
        "The short form did not reproduce on its own, so this is the long form (the campaign's own "
        "judge, pasted):\n\n<details>\n<summary>repro.py</summary>\n\n"
        f"```python\n{repro_text.rstrip()}\n```\n\n</details>")
    if info.get("confirmed") is False and not info.get("flaky"):
        repro = ("**Not reproduced on its own.** In fresh processes this file printed "
                 f"`{info.get('repro_says', '')}`" + (", and so did the long form (the campaign's own judge)"
                                                       if info.get("long_said") else "") +
                 ". The campaign saw the bug inside a worker that had run other cases before it, so state "
                 "left by those may matter; file it only once it reproduces.\n\n" + repro)
    finding_dir = Path(log_path).parent if log_path else None
    recheck = _recheck(finding_dir)
    v = versions()
    return f"""{title(case, key, detail)}

### 🐛 Describe the bug

`torch.compile({opts})` {_WHAT.get(key.symptom, "disagrees with eager")} on the program below on
{spec.device}, while eager is fine; the function is called {calls}. {backward}

{_inputs_table(case, grads)}

Run `python repro.py`: it needs only torch, prints one `BUG:` line and exits 1 while the bug
shows, exits 0 once it is fixed.

{repro}

**Expected:** {_EXPECTED.get(key.symptom, "Compiled and eager agree.")}
**Actual:** {detail}

{_ladder(info, key)}
{recheck}

Found by the fuzzcomp differential fuzzer {v["fuzzcomp"]} (seed {case.seed}, generator
{case.generator_version}) and minimised automatically; bucket `{key.slug()}` ({key.signature}).

### Error logs

```
{_log(log_path, observed)}
```

### Versions

```
{collect_env()}
```

Labels: `topic: fuzzer`, `oncall: pt2`
"""
