"""The edge capabilities (``generators.edges``): each proven by a planted fault only it triggers,
found on cases with the edge forced, while a correct compilation (aot_eager) of the same case
stays silent (or shows only a torch bug the known-bug registry holds), and the fault stays silent
on cases that lack the edge: the same config's cases with the other edges forced, and cases with
no edge at all."""
from __future__ import annotations

import dataclasses
import warnings

import pytest

from fuzzcomp.findings.known import claim
from fuzzcomp.findings.triage import bucket_of
from fuzzcomp.generators import GenConfig, generate
from fuzzcomp.generators.edges import EDGE_CAPABILITIES, VEC_WIDTH
from fuzzcomp.generators.features import features
from fuzzcomp.judge.check import check
from fuzzcomp.run.execute import configure_torch
from test_edges import _alias_edge, _size_edges

# (capability = its feature, planted backend)
CASES = [
    ("reduce_tail_remainder", "tail_remainder_bug"),
    ("edge_dims", "edge_dims_bug"),
    ("alias_base_write_offset_view", "alias_offset_view_bug"),
]
EDGES = tuple(EDGE_CAPABILITIES)


def _config(force) -> GenConfig:
    # no global state changed inside the function: aot_eager loses such changes on cached calls,
    # a known bug of its own that the correct-backend check must not meet
    return GenConfig(force=tuple(force), reach_weights=(("gstate", 0.0),))


def _forced_having(cap: str, seeds: int = 60):
    """(seed, case) of the first seeds' cases with ``cap`` forced that have it."""
    for seed in range(seeds):
        case = generate(seed, _config((cap,)))
        if cap in features(case):
            yield seed, case


def _planted(case, backend):
    return check(case.with_compile(backend=f"fuzzcomp.planted:{backend}"))[1]


@pytest.mark.slow
@pytest.mark.parametrize("cap,backend", CASES)
def test_planted_fault_found_and_correct_backend_silent(cap, backend):
    """Of the first forced cases having the edge, the fault shows on some; on every case it shows
    on, aot_eager's verdicts (if any) are torch bugs the registry knows (the alias edge reaches
    AOTAutograd's synthetic-base ViewMeta replay, inplace-view-op-regenerated-alias), and on at
    least one it is silent."""
    configure_torch()
    found, silent, tried = [], [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed, case in _forced_having(cap):
            tried += 1
            if _planted(case, backend):
                found.append(seed)
                aot = case.with_compile(backend="aot_eager")
                verdicts = check(aot)[1]
                unknown = [v.detail for v in verdicts if claim(bucket_of(v), aot) is None]
                assert not unknown, (seed, unknown)
                if not verdicts:
                    silent.append(seed)
            if silent or tried == 10:
                break
    assert found, f"{backend} not found on {tried} cases with {cap}"
    assert silent, f"aot_eager showed a known torch bug on every case {backend} was found on: {found}"


@pytest.mark.slow
@pytest.mark.parametrize("cap,backend", CASES)
def test_fault_needs_its_edge(cap, backend):
    """Cases with another edge forced that lack this one leave the fault silent."""
    configure_torch()
    others = [c for c in EDGES if c != cap]
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(100):
            other = others[seed % 2]
            case = generate(seed, _config((other,)))
            if cap in features(case) or other not in features(case):
                continue
            assert not _planted(case, backend), seed
            checked += 1
            if checked == 2:
                break
    assert checked == 2


@pytest.mark.slow
def test_faults_stay_silent_without_any_edge():
    configure_torch()
    off = GenConfig(reach_weights=(("gstate", 0.0),) + tuple((c, 0.0) for c in EDGES))
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(20):
            case = generate(seed, off)
            if set(EDGES) & features(case):
                continue
            for _cap, backend in CASES:
                assert not _planted(case, backend), (seed, backend)
            checked += 1
            if checked == 3:
                break
    assert checked == 3


def _near_miss(cap: str, case):
    """The case one step short of its edge: the tail symbol never wide (every call at its odd
    tail size), the edge symbol never 0 (every call at 1), the base write dropped."""
    p = case.program
    if cap == "alias_base_write_offset_view":
        if _alias_edge(case) is None:
            return None
        return dataclasses.replace(case, program=dataclasses.replace(p, body=p.body[1:]))
    for prod, _red in _size_edges(case):
        sym = prod.type.shape[-1]
        j = p.symbols.index(sym)
        sizes = [c.sizes[j] for c in case.calls]
        if cap == "reduce_tail_remainder":
            w = VEC_WIDTH[prod.type.dtype]
            size = next((n for n in sizes if n % 2 and 3 <= n < w), None) if 0 not in sizes else None
        else:
            size = 1 if 0 in sizes and 1 in sizes else None
        if size is not None:
            return dataclasses.replace(case, calls=tuple(
                dataclasses.replace(c, sizes=c.sizes[:j] + (size,) + c.sizes[j + 1:]) for c in case.calls))
    return None


@pytest.mark.slow
@pytest.mark.parametrize("cap,backend", CASES)
def test_fault_silent_one_step_short_of_its_edge(cap, backend):
    """The same programs one step short of the edge (the tail size without a wide call, size 1
    without a 0, the alias viewed without the base write) leave the fault silent."""
    configure_torch()
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed, case in _forced_having(cap):
            near = _near_miss(cap, case)
            if near is None or cap in features(near):
                continue
            assert not _planted(near, backend), seed
            checked += 1
            if checked == 4:
                break
    assert checked == 4
