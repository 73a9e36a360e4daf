"""The tail forms (``generators.tail_forms``) without compiling: each is generated when forced,
read from the IR as its feature and capability, listed by ``fuzzcomp stats`` with its weight,
drawn last (seeds that draw none keep their program), and sound by construction (a widened view
never reads float data; nested regions only where this torch has them)."""
from __future__ import annotations

import dataclasses

import pytest

from fuzzcomp.generators import GenConfig, emit, generate
from fuzzcomp.generators import reach, tail_forms
from fuzzcomp.generators.capabilities import has, table
from fuzzcomp.generators.edges import EDGE_CAPABILITIES
from fuzzcomp.generators.features import features
from fuzzcomp.generators.ir import Assign, CallFn, walk_program

TAIL = ("out_topk_max_norm", "widen_view_out", "nested_region")


def _forced(cap: str, n: int = 40):
    return [generate(seed, GenConfig(force=(cap,))) for seed in range(n)]


@pytest.mark.parametrize("cap", TAIL)
def test_forced_form_is_generated_detected_and_emitted(cap):
    if cap == "nested_region" and not tail_forms.HAS_NESTED:
        pytest.skip("no torch.compiler.nested_compile_region in this torch")
    cases = [c for c in _forced(cap) if cap in features(c)]
    assert len(cases) >= 10, f"{cap} in only {len(cases)} of 40 forced seeds"
    for c in cases:
        assert cap in has(c)
        src = emit(c.program)
        compile(src, "<case>", "exec")
        if cap == "nested_region":
            assert src.count("@torch.compiler.nested_compile_region") == 1
    # unforced, the default config draws each at a few percent of cases
    rows = {r.name: r for r in table(GenConfig())}
    assert rows[cap].kind == "tail" and 0 < rows[cap].weight <= 0.05


def test_seeds_without_a_tail_form_keep_their_program():
    """The tail forms are the stream's last draws: a seed that builds none of them makes the same
    program, call schedule and compile settings as with every tail weight at zero (no draw)."""
    # the warm_cache setting and the edges are drawn after the tail forms, so they follow their
    # draws: off in both
    no_cache = (("warm_cache", 0.0),) + tuple((c, 0.0) for c in EDGE_CAPABILITIES)
    off = GenConfig(reach_weights=tuple((c, 0.0) for c in TAIL) + no_cache)
    same = changed = 0
    for seed in range(300):
        a, b = generate(seed, GenConfig(reach_weights=no_cache)), generate(seed, off)
        if set(TAIL) & features(a):
            changed += 1
            continue
        assert emit(a.program) == emit(b.program) and a.calls == b.calls and a.compile == b.compile, seed
        same += 1
    assert same > 250 and changed > 0


def _types(program) -> dict:
    t = {i.name: i.type for i in program.inputs}
    t.update({s.out: s.type for s in walk_program(program) if isinstance(s, (Assign, CallFn))})
    return t


def test_widened_views_read_only_integer_data():
    """Eager, compiled, the fp64 run and the perturbed runs must hold the same bits in the
    source of an exactly compared view: it is int16 data or integer data cast by the program."""
    seen = 0
    for c in _forced("widen_view_out", 60):
        types = _types(c.program)
        for s in walk_program(c.program):
            if isinstance(s, Assign) and s.op == tail_forms.WIDEN_OP:
                src = types[s.args[0].name]
                assert src.is_int or src.is_bool, (c.seed, s.template, src)
                assert s.type.dtype in ("int32", "float32") and s.out in c.program.outputs
                assert " & " not in s.template  # returned as it is: no mask over it
                seen += 1
    assert seen >= 10


def test_out_forms_detach_and_never_return_topk_indices():
    ops = set()
    for c in _forced("out_topk_max_norm", 80):
        for s in walk_program(c.program):
            if isinstance(s, Assign) and s.op in tail_forms.OUT_OPS:
                ops.add(s.op)
                assert ".detach()" in s.template and "out=" in s.template
                if s.op == "torch.topk[out]":  # the order of tied indices is unspecified: values only
                    assert s.template.endswith(")[0]")
    assert ops == set(tail_forms.OUT_OPS)


def test_nested_region_never_generated_without_the_decorator(monkeypatch):
    monkeypatch.setattr(tail_forms, "HAS_NESTED", False)
    assert reach.weights_of(())["nested_region"] == 0.0
    rows = {r.name: r for r in table(GenConfig(force=("nested_region",)))}
    assert rows["nested_region"].weight == 0.0
    for c in _forced("nested_region", 30):
        assert "nested_region" not in features(c)
        assert not any(h.nested for h in c.program.helpers)


def test_nested_helper_is_pure_and_called_twice():
    calls = 0
    for c in _forced("nested_region", 40):
        nested = [h for h in c.program.helpers if h.nested]
        if not nested:
            continue
        (h,) = nested
        from fuzzcomp.generators.ir import Mutate, walk
        assert not any(isinstance(s, Mutate) for s in walk(h.body))
        n = sum(isinstance(s, CallFn) and s.fn == h.name for s in walk_program(c.program))
        assert n >= 2
        calls += 1
    assert calls >= 10


def test_function_json_round_trip_keeps_the_region_mark():
    from fuzzcomp.generators.ir import from_jsonable, to_jsonable
    c = next(c for c in _forced("nested_region") if any(h.nested for h in c.program.helpers)) \
        if tail_forms.HAS_NESTED else None
    if c is None:
        pytest.skip("no nested regions in this torch")
    assert from_jsonable(to_jsonable(c)) == c
    old = to_jsonable(dataclasses.replace(c.program.helpers[-1], nested=False))
    del old["nested"]  # a case stored before the field existed reads as a plain helper
    assert from_jsonable(old).nested is False


def test_nested_region_bodies_are_capturable_whole():
    """A region may not graph-break (UncapturedHigherOrderOpError by design): CPU seed 1506's
    campaign filed a region body holding ``.storage_offset()`` as a crash. Region bodies are
    straight-line and hold no construct that graph-breaks."""
    if not tail_forms.HAS_NESTED:
        pytest.skip("no torch.compiler.nested_compile_region in this torch")
    from fuzzcomp.generators.ir import walk
    for c in _forced("nested_region", 60):
        for h in c.program.helpers:
            if h.nested:
                assert tail_forms.captures_whole(h.body)
                assert not any(u in s.template for s in walk(h.body) for u in tail_forms.UNCAPTURABLE)
    # the campaign's case: its region is no longer drawn with the storage_offset view in it
    c = generate(1506004968)
    assert not any(h.nested and "storage_offset" in emit(c.program) for h in c.program.helpers)
    body = (Assign("v1", "Tensor.as_strided", "{0}.as_strided((1,), (1,), {0}.storage_offset() + 1)", (), None),)
    assert not tail_forms.captures_whole(body)
