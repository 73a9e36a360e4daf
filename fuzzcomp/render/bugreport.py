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
status (``stage_ladder``, ``repro_form``, ``confirmed``/``confirm_runs``/``flaky``, ``known``).
The title says the bug in one line (what differs or what was raised, from which op, under
which setting); the body's phrase is chosen per symptom (a global-state bug is not an input
mutation, ``symptoms.phrase_for``); the repro's status is stated once, from ``info``; a
"Next step" line under the title says: file it (with a search link), add to the known issue,
or upgrade to the torch that fixed it (``info["known"]``, a dict from the known-bugs registry).
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

from fuzzcomp.generators.ir import Case

from urllib.parse import quote_plus

from fuzzcomp.render.repro import _oracle_settings, clip, headline, versions
from fuzzcomp.base import symptoms
from fuzzcomp.findings.triage import BucketKey, culprit_named

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
    if str(observed or "").startswith("not checked"):  # the status line says it; not a log
        observed = None
    text = text or (observed or "(the repro has not run in a fresh process yet)")
    if len(text) > 20000:  # a log of every compiled kernel: keep the head and the end, where the error is
        text = text[:4000] + "\n...\n" + text[-15000:]
    return text


def _label(detail: str) -> str:
    """The verdict's label at the head of its detail ("output[0]", "state torch globals after call")."""
    head = headline(detail)
    return head.split(":", 1)[0].strip() if ":" in head else ""


def report_title(case: Case, key: BucketKey, detail: str) -> str:
    """One line that says the bug: what differs (or what was raised), from which op, under which setting."""
    spec = case.compile
    setting = ", ".join([spec.backend.split(":")[-1], spec.device]
                        + (["dynamic=True"] if spec.dynamic else []) + (["fullgraph=True"] if spec.fullgraph else [])
                        + ([f"mode={spec.mode}"] if spec.mode else [])
                        + (["warm FX-graph/AOTAutograd cache"] if getattr(spec, "cache", "") == "warm" else []))
    row = symptoms.state_row(key.symptom, _label(detail), key.signature)
    what = row[2] if row else symptoms.title_phrase(key.symptom)
    sym = symptoms.SYMPTOMS.get(key.symptom)
    label, op = _label(detail), culprit_named(key.signature)
    if row and key.signature.startswith("torch globals: "):
        tail = f" ({key.signature.split(': ', 1)[1]})"
    elif sym is not None and sym.identity == "culprit":
        tail = (f" in {label}" if label and not row else "") + (f", from {op}" if op else "")
    elif sym is not None and sym.identity == "exception":
        tail = f": {clip(headline(detail), 90)}"
    else:
        tail = f": {clip(key.signature, 90)}" if key.signature and key.signature != key.symptom else ""
    return f"[Fuzzer][{symptoms.title_kind(key.symptom)}] torch.compile({setting}) {what}{tail}"


def _repro_status(info: dict) -> str:
    """The repro's one status, from the fresh-process check (stated here and nowhere else)."""
    runs = info.get("confirm_runs")
    if info.get("confirmed"):
        return f"**Repro status:** fails in {f'{runs} fresh runs' if runs else 'every fresh run'} of `python repro.py`."
    if info.get("flaky"):
        return (f"**Repro status:** flaky: fails in {runs} fresh runs of `python repro.py`; run it a few times.")
    if info.get("confirmed") is False:
        return ("**Repro status:** not reproduced on its own. In fresh processes this file printed "
                f"`{info.get('repro_says', '')}`" + (", and so did the long form (the campaign's own judge)"
                                                      if info.get("long_said") else "") +
                ". The campaign saw the bug inside a worker that had run other cases before it, so state "
                "left by those may matter; file it only once it reproduces.")
    return "**Repro status:** not checked in a fresh process yet: run `python repro.py` before filing it."


def _next_step(case: Case, key: BucketKey, detail: str) -> str:
    row = symptoms.state_row(key.symptom, _label(detail), key.signature)
    what = row[2] if row else symptoms.title_phrase(key.symptom)
    words = " ".join(w for w in (culprit_named(key.signature), "torch.compile", what) if w)
    search = "https://github.com/pytorch/pytorch/issues?q=" + quote_plus(f"is:issue {words}")
    return f"file it upstream (search first: {search})"


def next_step(info: dict, case: Case, key: BucketKey, detail: str = "") -> str:
    """What the maintainer does with it: file it, add to a known issue, or upgrade torch."""
    known = info.get("known")
    if not isinstance(known, dict):
        return "Next step: " + _next_step(case, key, detail)
    advice = f" ({known['advice']})" if known.get("advice") else ""
    if known.get("fixed_in"):
        return f"Next step: fixed in torch {known['fixed_in']}: upgrade{advice}."
    if known.get("issue"):
        return (f"Next step: known upstream: {known['issue']} ({known.get('state') or 'state unknown'}) — "
                f"add your case there{advice}.")
    return f"Next step: known, not reported upstream yet: file it{advice}."


def _cache_setting(case: Case) -> str:
    """What a warm-cache case ran under (nothing for the fuzzer's default, caches off)."""
    if getattr(case.compile, "cache", "") != "warm":
        return ""
    return ("\n\nCompile caches: Inductor's FX-graph cache and the AOTAutograd cache are **on** (as users "
            "have them; `TORCHINDUCTOR_FX_GRAPH_CACHE=1`, `TORCHINDUCTOR_AUTOGRAD_CACHE=1`), in a fresh "
            "cache folder: a first process compiles the function and fills the cache, a second process "
            "compiles it again, served from the cache, and that second run is the one judged. "
            "The repro does the same (it runs itself once as the first process).")


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
    runs_back = key.symptom in symptoms.SYMPTOMS and symptoms.SYMPTOMS[key.symptom].repro_runs_backward
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
    finding_dir = Path(log_path).parent if log_path else None
    recheck = _recheck(finding_dir)
    v = versions()
    phrase = symptoms.phrase_for(key.symptom, _label(detail), key.signature)
    return f"""{report_title(case, key, detail)}

{next_step(info, case, key, detail)}

### 🐛 Describe the bug

`torch.compile({opts})` {phrase} on the program below on
{spec.device}, while eager is fine; the function is called {calls}. {backward}{_cache_setting(case)}

{_inputs_table(case, grads)}

Run `python repro.py`: it needs only torch, prints one `BUG:` line and exits 1 while the bug
shows, exits 0 once it is fixed. {_repro_status(info)}

{repro}

**Expected:** {symptoms.expected(key.symptom)}
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
