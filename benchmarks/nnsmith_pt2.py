"""NNSmith 0.1.0 with a torch.compile ("pt2") backend, and a re-check of its reports.

Run with the NNSmith venv's python (see benchmarks/README.md), never imported by fuzzcomp.

    python benchmarks/nnsmith_pt2.py fuzz [hydra overrides...]   # NNSmith's own fuzz loop
    python benchmarks/nnsmith_pt2.py recheck FUZZ_ROOT OUT.json  # judge its reports by our fp64 rule

Why a runtime patch: nnsmith 0.1.0 (the newest release on the package index
here) has no pt2 backend; ``BackendFactory.init`` is a fixed if-chain over
onnxruntime/tvm/tensorrt/tflite/xla/torchjit. ``fuzz`` wraps that method so
``backend.type=pt2`` returns ``Pt2Factory`` below (our code: torch.compile of
NNSmith's own ``SymbolNet``), then calls NNSmith's unmodified hydra entry point.
Two more runtime settings, both documented in the README:
- ``torch._dynamo.reset()`` before each model: all SymbolNets share one
  ``forward`` code object, so without it Dynamo would hit its recompile limit
  after a few models and silently run the rest eagerly (inflating throughput).
- NNSmith's per-backend op/dtype cache (topset) is seeded from an eager
  dry run (NNSmith's own ``infer_topset_from_scratch(model, None)``) instead of
  compiling every op x dtype with Inductor first (tens of minutes): ops that
  Inductor then rejects show up as crash reports, which ``recheck`` judges.
Both tools run single-threaded (torch threads 1, Inductor compile_threads 1).
"""
from __future__ import annotations

import json
import os
import pickle
import re
import sys
import traceback
from pathlib import Path

import numpy as np
import torch

PT2_BACKEND = os.environ.get("NNSMITH_PT2_BACKEND", "inductor")  # a registered name or module:function
# where to keep running totals of what Dynamo captured (models, graphs, ops): the program size the
# compiler saw, comparable with fuzzcomp's per-case ``captured_ops`` (side_by_side.py reads it)
STATS_PATH = os.environ.get("NNSMITH_PT2_STATS")
_TOTALS = {"models": 0, "graphs": 0, "captured_ops": 0}


def _record_capture() -> None:
    if not STATS_PATH:
        return
    from torch._dynamo.utils import counters
    _TOTALS["graphs"] = int(counters["stats"]["unique_graphs"])
    _TOTALS["captured_ops"] = int(counters["stats"]["calls_captured"])
    tmp = STATS_PATH + ".tmp"
    with open(tmp, "w") as f:
        json.dump(_TOTALS, f)
    os.replace(tmp, STATS_PATH)


def _backend():
    if ":" not in PT2_BACKEND:
        return PT2_BACKEND
    import importlib
    mod, _, attr = PT2_BACKEND.partition(":")
    return getattr(importlib.import_module(mod), attr)


def _configure_torch() -> None:
    torch.set_num_threads(1)
    import torch._inductor.config as inductor_config
    if hasattr(inductor_config, "compile_threads"):
        inductor_config.compile_threads = 1


def _make_factory_class():
    from multipledispatch import dispatch
    from nnsmith.backends.factory import BackendFactory
    from nnsmith.materialize.torch import TorchModel

    class Pt2Factory(BackendFactory):
        """torch.compile(SymbolNet) on CPU; outputs as NNSmith's other torch backend returns them."""

        def __init__(self, target="cpu", optmax: bool = False, **kwargs):
            super().__init__(target, optmax)
            self.device = torch.device("cuda" if target == "cuda" else "cpu")

        @property
        def system_name(self) -> str:
            return "pt2"

        @property
        def version(self) -> str:
            return f"{torch.__version__}-{PT2_BACKEND.replace(':', '.')}"

        @dispatch(TorchModel)
        def make_backend(self, model: TorchModel):
            torch._dynamo.reset()
            net = model.torch_model.to(self.device).eval()
            compiled = torch.compile(net, backend=_backend())
            names = list(net.output_like.keys())

            _TOTALS["models"] += 1

            def closure(inputs):
                tensors = [torch.from_numpy(v).to(self.device) for v in inputs.values()]
                try:
                    with torch.no_grad():
                        out = compiled(*tensors)
                finally:
                    _record_capture()
                return {k: v.cpu().detach().resolve_conj().numpy() for k, v in zip(names, out)}
            return closure

    return Pt2Factory


def install_pt2() -> None:
    from nnsmith.backends.factory import BackendFactory
    factory_cls = _make_factory_class()
    real_init = BackendFactory.init

    def init(name, target="cpu", optmax=True, **kwargs):
        if name == "pt2":
            return factory_cls(target="cuda" if target == "gpu" else target, optmax=optmax, **kwargs)
        return real_init(name, target=target, optmax=optmax, **kwargs)
    BackendFactory.init = staticmethod(init)
    _seed_topset(factory_cls)


def _seed_topset(factory_cls) -> None:
    from nnsmith import narrow_spec
    from nnsmith.materialize import Model
    model_cls = Model.init("torch", backend_target="cpu")
    path = Path(narrow_spec.NNSMITH_CACHE_DIR) / (narrow_spec.get_cache_name(model_cls, factory_cls()) + ".yaml")
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        narrow_spec.dump_topset(narrow_spec.infer_topset_from_scratch(model_cls, None), str(path))


# ---- re-check NNSmith's reports with PyTorch's fuzzer rule (fp64 reference) ---------------------

def _load_report(bug_dir: Path):
    from nnsmith.materialize import Model
    model_path = next(bug_dir.glob("model*.pth"), None)
    if model_path is None:
        raise FileNotFoundError(f"no model*.pth in {bug_dir}")
    model = Model.init("torch", backend_target="cpu").load(str(model_path))
    inputs = None
    oracle_path = bug_dir / "oracle.pkl"
    if oracle_path.exists():
        with open(oracle_path, "rb") as f:
            oracle = pickle.load(f)
        inputs = oracle.get("input") if isinstance(oracle, dict) else getattr(oracle, "input", None)
    if inputs is None:
        inputs = {k: v.numpy() for k, v in model.torch_model.get_random_inps().items()}
    return model, inputs


PERTURB_EPS = 4.0  # as fuzzcomp's own oracle: float inputs moved by this many machine epsilons
PERTURB_DRAWS = 3


def _run(fn, inputs, upcast=False, draw=None):
    ts = []
    for i, v in enumerate(inputs.values()):
        t = torch.from_numpy(np.array(v))
        if draw is not None and t.dtype.is_floating_point:  # a perturbed eager run: the tie screen
            g = torch.Generator().manual_seed(1000 * draw + i)
            noise = torch.randn(t.shape, generator=g, dtype=torch.float64)
            t = (t.double() * (1 + PERTURB_EPS * torch.finfo(t.dtype).eps * noise)).to(t.dtype)
        if upcast and t.dtype.is_floating_point:
            t = t.double()
        ts.append(t)
    try:
        with torch.no_grad():
            out = fn(*ts)
        return [o.detach().clone() for o in out], None
    except Exception as e:
        return None, f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}"


def recheck_one(bug_dir: Path) -> dict:
    """Eager x2, fp64 eager and a fresh compile of the reported model, judged by fp64rule.compare."""
    import copy
    from fuzzcomp.oracles.fp64rule import compare
    model, inputs = _load_report(bug_dir)
    net = model.torch_model.eval()
    e1, err = _run(net, inputs)
    e2, _ = _run(net, inputs)
    net64 = copy.deepcopy(net).double()
    ref, err64 = _run(net64, inputs, upcast=True)
    torch._dynamo.reset()
    comp, cerr = _run(torch.compile(copy.deepcopy(net), backend=_backend()), inputs)
    if err is not None:
        return {"true": False, "why": f"eager raises too ({err}): parity, not a bug"}
    if cerr is not None:
        return {"true": True, "why": f"compiled raises, eager does not: {cerr}"}
    if ref is None:
        return {"true": False, "why": f"no fp64 reference ({err64}): unjudgeable"}
    # perturbed eager runs, as fuzzcomp's oracle uses them: an integer output (argmin, a comparison)
    # that flips under a few-ulp input change sits on a tie or boundary and is not evidence
    perturbed = [p for p in (_run(net, inputs, draw=d)[0] for d in range(PERTURB_DRAWS)) if p is not None]
    reasons, skipped = [], []
    for k, (a, b, r, c) in enumerate(zip(e1, e2, ref, comp)):
        status, reason = compare(a, b, r, c, perturbed=[p[k] for p in perturbed if k < len(p)])
        if status == "mismatch":
            reasons.append(f"output {k}: {reason}")
        elif status == "skip":
            skipped.append(f"output {k}: {reason}")
    if reasons:
        return {"true": True, "why": "; ".join(reasons)[:300]}
    if skipped:
        return {"true": False, "why": "not evidence by PyTorch's fuzzer rules: " + "; ".join(skipped)[:260]}
    return {"true": False, "why": "compiled is within the fp64 rule on every output (NNSmith's fixed "
                                  "rtol/atol flagged it)"}


def _report_kind(bug_dir: Path) -> tuple[str, str]:
    name = bug_dir.name  # bug-<symptom>-<stage>-<n>
    log = (bug_dir / "err.log").read_text(errors="replace") if (bug_dir / "err.log").exists() else ""
    lines = [line.strip() for line in log.strip().splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^[\w.]*(Error|Exception|Failed|Unsupported)\b.*:", line)]
    last = (errors or lines or [""])[-1]
    return name.rsplit("-", 1)[0], re.sub(r"0x[0-9a-f]+|\d+", "N", last)[:160]


def recheck(root: str, out: str) -> int:
    _configure_torch()
    rows = []
    for bug_dir in sorted(Path(root).glob("bug-*")):
        kind, last = _report_kind(bug_dir)
        try:
            verdict = recheck_one(bug_dir)
        except Exception as e:  # a report we cannot even load is counted, not dropped
            verdict = {"true": None, "why": f"recheck failed: {type(e).__name__}: {e}"[:300],
                       "trace": traceback.format_exc()[-600:]}
        rows.append({"report": bug_dir.name, "kind": kind, "signature": f"{kind} | {last}", **verdict})
    distinct = {r["signature"] for r in rows}
    true_sigs = {r["signature"] for r in rows if r["true"]}
    result = {"reports": len(rows), "distinct": len(distinct), "true_reports": sum(bool(r["true"]) for r in rows),
              "true_distinct": len(true_sigs), "rows": rows}
    Path(out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["fuzz"]:
        _configure_torch()
        install_pt2()
        from nnsmith.cli.fuzz import main as nnsmith_main
        sys.argv = [sys.argv[0], *argv[1:]]
        nnsmith_main()
        return 0
    if argv[:1] == ["recheck"] and len(argv) == 3:
        return recheck(argv[1], argv[2])
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
