"""How small a wrong answer the value oracle flags, per float dtype and magnitude band.

For each dtype (float32, float16, bfloat16, float64) and band (values near 1e-3, 1 and 1e3), a
planted backend scales every ``torch.add`` result by (1 + r) (the faulty add is differentiated
too, so gradients are off by the same factor); the program is ``torch.add(x * M, y * M)`` over two
inputs. For r on a ladder of relative errors (1e-1 down to 1e-9) the case is checked over
``--cases`` call schedules (different sizes and seeds); the table gives the smallest r the oracle
flags in at least one of them, for values (``numeric`` verdicts) and for gradients (``gradient``
verdicts), next to the dtype's epsilon. Nothing here is compiled by Inductor: the planted backend
runs Dynamo's graph eagerly, so the figures are the oracle's and not a compiler's.

    python benchmarks/oracle_sensitivity.py [--cases 2] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import torch

from fuzzcomp.generators.ir import Assign, Call, Case, CompileSpec, Input, Program, Ref, TensorType
from fuzzcomp.judge.check import check
from fuzzcomp.planted.faults import perturb_results
from fuzzcomp.run.execute import ExecOptions, configure_torch

DTYPES = ("float32", "float16", "bfloat16", "float64")
BANDS = (1e-3, 1.0, 1e3)
LADDER = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6, 1e-7, 1e-8, 1e-9)


class SCALED:
    """The planted backends, one per rung: ``SCALED.r<k>`` scales add results by 1 + LADDER[k]."""


for _k, _r in enumerate(LADDER):
    import operator
    setattr(SCALED, f"r{_k}", staticmethod(perturb_results({torch.add, operator.add, "add"}, 1.0 + _r)))


def _case(dtype: str, band: float, k: int, n_cases: int) -> Case:
    t = TensorType(("s0", "s0"), dtype)
    p = Program((Input("x", t), Input("y", t)),
                (Assign("a", "torch.mul", f"torch.mul({{0}}, {band!r})", (Ref("x"),), t),
                 Assign("b", "torch.mul", f"torch.mul({{0}}, {band!r})", (Ref("y"),), t),
                 Assign("w", "torch.add", "torch.add({0}, {1})", (Ref("a"), Ref("b")), t)), ("w",), ("s0",))
    calls = tuple(Call((4 + j,), 101 + 7 * j) for j in range(n_cases))
    return Case(p, calls, CompileSpec(backend=f"__main__:SCALED.r{k}"), 0, "sensitivity")


def smallest_flagged(dtype: str, band: float, n_cases: int) -> dict:
    """The smallest r of the ladder flagged, for values and for gradients (None: not even 1e-1)."""
    found = {"numeric": None, "gradient": None}
    opts = ExecOptions(ladder=False, culprit=False, replay=False)
    for k, r in enumerate(LADDER):
        _, verdicts = check(_case(dtype, band, k, n_cases), opts)
        hit = {v.symptom for v in verdicts}
        for kind in found:
            if kind in hit:
                found[kind] = r
        if not hit & set(found):
            break  # the rungs only get smaller
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=2, help="call schedules per rung (default 2)")
    ap.add_argument("--json", help="also write the table as JSON here")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    configure_torch()
    torch.set_num_threads(1)
    rows = []
    t0 = time.perf_counter()
    print(f"{'dtype':9} {'band':>6} {'eps':>9} {'values: smallest r':>19} {'grads: smallest r':>18}")
    for dtype in DTYPES:
        eps = torch.finfo(getattr(torch, dtype)).eps
        for band in BANDS:
            f = smallest_flagged(dtype, band, args.cases)
            rows.append({"dtype": dtype, "band": band, "eps": eps, **f})
            fmt = lambda v: "not flagged" if v is None else f"{v:.0e}"  # noqa: E731
            print(f"{dtype:9} {band:>6g} {eps:>9.2e} {fmt(f['numeric']):>19} {fmt(f['gradient']):>18}", flush=True)
    print(f"({args.cases} call schedules per rung, {time.perf_counter() - t0:.0f} s)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
