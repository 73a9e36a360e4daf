"""Feature histogram over many seeds: which ops, families, dtypes, layouts and ranks the
generator actually produces.

Contract: ``histogram(seeds, config)`` is pure (it only generates cases, it never
runs them) and returns a ``Stats`` of Counters keyed by plain strings, and per
capability (``capabilities.table``) its weight and the seeds of the cases having it;
``render(stats, invalid=seeds)`` turns one into text, with each capability's
eager-valid rate when given the seeds eager rejected. Counting is per statement for
ops and families, per input for dtypes, layouts and ranks, per case for features
and capabilities.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from . import capabilities
from .build import GenConfig, generate
from .features import features
from .features_ops import op_features
from .ir import Assign, If, Mutate, Ref, walk
from .reach import reach_features
from .registry import FAMILY_OF, callable_name


@dataclass
class Stats:
    cases: int = 0
    ops: Counter = field(default_factory=Counter)          # spec name -> statements
    callables: Counter = field(default_factory=Counter)    # registry torch callable -> statements
    families: Counter = field(default_factory=Counter)
    dtypes: Counter = field(default_factory=Counter)       # input dtypes
    result_dtypes: Counter = field(default_factory=Counter)  # dtypes of assigned values
    layouts: Counter = field(default_factory=Counter)
    ranks: Counter = field(default_factory=Counter)
    sizes: Counter = field(default_factory=Counter)        # concrete symbol sizes over all calls
    features: Counter = field(default_factory=Counter)     # per case: has in-place, has if, ...
    capabilities: list = field(default_factory=list)       # capabilities.Capability rows of the config
    cap_seeds: dict = field(default_factory=dict)          # capability -> seeds of the cases having it


def histogram(seeds: Iterable[int], config: GenConfig = GenConfig()) -> Stats:
    st = Stats(capabilities=capabilities.table(config))
    st.cap_seeds = {c.name: [] for c in st.capabilities}
    for seed in seeds:
        case = generate(seed, config)
        prog = case.program
        st.cases += 1
        seen: set[str] = set()
        for stmt in walk(prog.body):
            if isinstance(stmt, If):
                seen.add("if")
                continue
            if not isinstance(stmt, (Assign, Mutate)):
                continue
            fam = FAMILY_OF.get(stmt.op, "structure")  # ops the structure builder emits itself
            st.ops[stmt.op] += 1
            if stmt.op in FAMILY_OF:
                st.callables[callable_name(stmt.op)] += 1
            st.families[fam] += 1
            seen.add("family:" + fam)
            if isinstance(stmt, Mutate):
                seen.add("in-place")
            else:
                st.result_dtypes[stmt.type.dtype] += 1
        seen |= _alias_features(prog)
        seen |= op_features(case)
        for i in prog.inputs:
            st.dtypes[i.type.dtype] += 1
            st.layouts[i.layout] += 1
            st.ranks[i.type.rank] += 1
        for call in case.calls:
            for v in call.sizes:
                st.sizes[v] += 1
        seen.add(f"calls={len(case.calls)}")
        seen |= reach_features(case)  # caller actions, special values, library modules, state, scalars
        feats = features(case)  # the structural ones too: if_size, for_range, module, ...
        seen |= feats
        st.features.update(seen)
        for cap in capabilities.has(case, feats):
            st.cap_seeds[cap].append(seed)
    return st


def _alias_features(prog) -> set[str]:
    """Aliasing features: outputs that are views of inputs, in-place writes to (views of) inputs."""
    made = {s.out: s for s in walk(prog.body) if isinstance(s, Assign)}
    inputs = {i.name for i in prog.inputs}

    def base_input(name: str) -> str | None:
        for _ in range(64):
            if name in inputs:
                return name
            st = made.get(name)
            if st is None or FAMILY_OF.get(st.op) != "view" or not st.args or not isinstance(st.args[0], Ref):
                return None
            name = st.args[0].name
        return None

    out: set[str] = set()
    if any(base_input(o) for o in prog.outputs if o not in inputs):
        out.add("output aliases input")
    for st in walk(prog.body):
        if isinstance(st, Mutate):
            if base_input(st.target):
                out.add("in-place on input (or its view)")
            if not st.template.startswith(("{0}.", "torch.")) or st.template.startswith(("{0}.t()", "{0}.transpose",
                                                                                        "{0}.diagonal", "{0}.select",
                                                                                        "{0}.unsqueeze")):
                out.add("in-place through a view")
            if "out={0}" in st.template:
                out.add("out= variant")
    return out


def _block(title: str, counter: Counter, total: int | None = None, top: int | None = None) -> list[str]:
    lines = [f"{title} ({len(counter)} distinct):"]
    items = counter.most_common(top)
    width = max((len(str(k)) for k, _ in items), default=0)
    for k, c in items:
        share = f"  {100 * c / total:5.1f}%" if total else ""
        lines.append(f"  {str(k):<{width}}  {c:6d}{share}")
    return lines


def capability_lines(st: Stats, invalid: set | None = None) -> list[str]:
    """One row per capability: its weight, the cases having it out of all, and (given the seeds
    eager rejected) the eager-valid rate among them."""
    lines = [f"capabilities (weight: reach/arg/setting = chance per case, knob = share of op statements, "
             f"form = share of its builder's draws, tail/edge = chance per case; cases having it of {st.cases}"
             + ("; eager-valid among them" if invalid is not None else "") + "):"]
    width = max((len(c.name) for c in st.capabilities), default=0)
    for c in st.capabilities:
        seeds = st.cap_seeds.get(c.name, [])
        row = (f"  {c.name:<{width}}  {c.kind:<7}  {c.weight:7.4f}  {len(seeds):6d}  "
               f"{100 * len(seeds) / max(st.cases, 1):5.1f}%")
        if invalid is not None:
            bad = sum(1 for sd in seeds if sd in invalid)
            row += (f"   valid {len(seeds) - bad}/{len(seeds)} = {100 * (len(seeds) - bad) / len(seeds):5.1f}%"
                    if seeds else "   valid -")
        lines.append(row + (f"   ({c.note})" if c.note else ""))
    return lines


def render(st: Stats, top_ops: int | None = 40, invalid: set | None = None) -> str:
    """The histogram as text; ``invalid`` (the seeds eager rejected, when it ran) adds each
    capability's eager-valid rate."""
    n_in = sum(st.dtypes.values())
    lines = [f"cases: {st.cases}   statements: {sum(st.ops.values())}   "
             f"distinct torch callables used: {len(st.callables)}"]
    lines += capability_lines(st, invalid)
    lines += _block("families", st.families, sum(st.families.values()))
    lines += _block("features (cases having it)", st.features, st.cases)
    lines += _block("input dtypes", st.dtypes, n_in)
    lines += _block("result dtypes (assigned values)", st.result_dtypes, sum(st.result_dtypes.values()))
    lines += _block("input layouts", st.layouts, n_in)
    lines += _block("input ranks", Counter({f"rank {k}": v for k, v in sorted(st.ranks.items())}), n_in)
    lines += _block("symbol sizes (per call)", Counter({f"{k:>3}": v for k, v in sorted(st.sizes.items())}),
                    sum(st.sizes.values()))
    lines += _block("torch callables" + (f", top {top_ops}" if top_ops else ""), st.callables, None, top_ops)
    return "\n".join(lines)
