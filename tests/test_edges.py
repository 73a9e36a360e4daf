"""The edge capabilities (``generators.edges``) without compiling: each is generated when forced,
read from the IR and schedule as its feature and capability, listed by ``fuzzcomp stats`` with its
weight, drawn last (seeds that draw none keep their case), and shaped as promised: a tail-size
call and a wide call on a reduced last dim, a 0 call and a 1 call on a reduced/broadcast dim, a
base written first while a view of its offset or transposed alias is returned."""
from __future__ import annotations

import pytest

from fuzzcomp.generators import GenConfig, emit, generate
from fuzzcomp.generators import edges
from fuzzcomp.generators.capabilities import has, table
from fuzzcomp.generators.features import FEATURES, features
from fuzzcomp.generators.ir import (Assign, Call, Case, CompileSpec, Input, Lit, Mutate, Program, Ref,
                                    TensorType, walk_program)
from fuzzcomp.generators.registry import FAMILY_OF

EDGES = tuple(edges.EDGE_CAPABILITIES)


def _forced(cap: str, n: int = 40):
    return [generate(seed, GenConfig(force=(cap,))) for seed in range(n)]


_WRITES = {w[0] for w in edges.BASE_WRITES}
_VIEWS = {v[0] for v in edges.ALIAS_VIEWS}


def _size_edges(case):
    """(product, reduction) statement pairs the size edges built: a reduction of a broadcast
    product (the edges' own op) of a value and a new 1-D input."""
    p = case.program
    prods = {s.out: s for s in p.body if isinstance(s, Assign) and s.op in edges.BCAST_OPS}
    return [(prods[s.args[0].name], s) for s in p.body
            if isinstance(s, Assign) and s.args and getattr(s.args[0], "name", None) in prods]


def _alias_edge(case):
    """(base write, alias view) when the body opens with an edge write of an input and returns a
    view of an offset/transposed alias of it, else None."""
    p = case.program
    first = p.body[0] if p.body else None
    if not (isinstance(first, Mutate) and first.op in _WRITES):
        return None
    aliases = {i.name for i in p.inputs if i.kind == "alias" and i.alias_of == first.target
               and i.view in edges.OFFSET_VIEWS}
    view = next((s for s in p.body if isinstance(s, Assign) and s.op in _VIEWS and s.args[0].name in aliases
                 and s.out in p.outputs), None)
    return (first, view) if view is not None else None


def _edge_stmts(case):
    return [s for pair in _size_edges(case) for s in pair] + list(_alias_edge(case) or ())


@pytest.mark.parametrize("cap", EDGES)
def test_forced_edge_is_generated_detected_and_listed(cap):
    cases = [c for c in _forced(cap) if _edge_stmts(c)]
    assert len(cases) >= 25, f"{cap} built in only {len(cases)} of 40 forced seeds"
    for c in cases:
        assert cap in features(c) and cap in has(c), c.seed
        compile(emit(c.program), "<case>", "exec")
        assert len(c.calls[0].sizes) == len(c.program.symbols)
    assert cap in FEATURES
    rows = {r.name: r for r in table(GenConfig())}
    assert rows[cap].kind == "edge" and 0 < rows[cap].weight <= 0.05
    assert {r.name: r for r in table(GenConfig(force=(cap,)))}[cap].weight == 1.0


def test_edge_ops_have_families():
    """The fp64 rule counts the sums of the edge reductions: their ops need a family; the
    reductions and alias views are the registry's own ops (known-bug rules name them so)."""
    for op, fam in edges.FAMILIES.items():
        assert FAMILY_OF[op] == fam
    assert {o[0] for o in edges.TAIL_OPS + edges.EDGE_OPS} <= {n for n, f in FAMILY_OF.items()
                                                              if f in ("reduction", "nn")}
    assert _VIEWS <= {n for n, f in FAMILY_OF.items() if f == "view"}


def test_seeds_without_an_edge_keep_their_case():
    """The edges are the stream's very last draws: a seed that builds none makes the same program,
    schedule and compile settings as with every edge weight at zero (no draw at all)."""
    off = GenConfig(reach_weights=tuple((c, 0.0) for c in EDGES))
    same = changed = 0
    for seed in range(300):
        a, b = generate(seed), generate(seed, off)
        if _edge_stmts(a):
            changed += 1
            continue
        assert emit(a.program) == emit(b.program) and a.calls == b.calls and a.compile == b.compile, seed
        same += 1
    assert same > 250 and changed > 0


def _sizes(case, dim):
    j = case.program.symbols.index(dim)
    return [c.sizes[j] for c in case.calls]


def test_tail_sizes_straddle_the_vector_width():
    seen = 0
    for c in _forced("reduce_tail_remainder", 60):
        for prod, s in _size_edges(c):
            sizes = _sizes(c, prod.type.shape[-1])
            if 0 in sizes:  # an edge_dims product the default weights drew too
                continue
            assert s.args[1] == Lit(-1), s.template
            w = edges.VEC_WIDTH[prod.type.dtype]
            assert any(n % 2 and 3 <= n < w for n in sizes) and any(n >= w for n in sizes), (c.seed, sizes)
            seen += 1
    assert seen >= 30


def test_edge_sizes_hold_zero_and_one_and_reduce_where_empty_is_defined():
    seen = 0
    for c in _forced("edge_dims", 60):
        for prod, s in _size_edges(c):
            sizes = _sizes(c, prod.type.shape[-1])
            if 0 not in sizes:  # a tail product the default weights drew too
                continue
            assert 1 in sizes, (c.seed, sizes)
            if s.args[1] == Lit(-1):  # over the edge dim: only reductions defined on empty dims
                assert s.op not in ("torch.amax", "torch.var"), s.op
            seen += 1
    assert seen >= 30


def test_alias_base_is_written_first_and_a_view_of_its_alias_returned():
    seen = 0
    for c in _forced("alias_base_write_offset_view", 60):
        found = _alias_edge(c)
        if found is None:
            continue
        first, view = found
        assert view.out == c.program.outputs[-1]  # appended last
        assert all(first.target not in (call.requires_grad or ()) for call in c.calls)
        assert "alias_base_write_offset_view" in features(c)
        seen += 1
    assert seen >= 25


def _case(body, inputs, outputs, symbols, sizes):
    return Case(Program(tuple(inputs), tuple(body), tuple(outputs), tuple(symbols)),
                tuple(Call(tuple(s), k) for k, s in enumerate(sizes)), CompileSpec(), 0, "test")


def test_features_read_regular_reductions_too():
    """A registry reduction over a last dim sized 5 and then 17 (float32, width 16) has the tail
    edge; over the first dim, or at 5 and 9, it has not. Sizes 0 and 1 on its input: edge dims."""
    t = TensorType(("s0", "s1"), "float32")
    x = Input("x", t)

    def red(d):
        return Assign("r", "torch.sum", "{0}.sum({1}, keepdim={2})", (Ref("x"), Lit(d), Lit(False)),
                      TensorType(("s0",), "float32"))
    assert "reduce_tail_remainder" in features(_case([red(1)], [x], ["r"], ["s0", "s1"], [(2, 5), (2, 17)]))
    assert "reduce_tail_remainder" not in features(_case([red(0)], [x], ["r"], ["s0", "s1"], [(2, 5), (2, 17)]))
    assert "reduce_tail_remainder" not in features(_case([red(1)], [x], ["r"], ["s0", "s1"], [(2, 5), (2, 9)]))
    assert "edge_dims" in features(_case([red(1)], [x], ["r"], ["s0", "s1"], [(0, 5), (1, 5)]))
    assert "edge_dims" not in features(_case([red(1)], [x], ["r"], ["s0", "s1"], [(0, 5), (2, 5)]))


def test_alias_feature_needs_the_base_written_and_the_alias_viewed_out():
    t = TensorType(("s0", "s0"), "float32")
    base, alias = Input("x0", t), Input("x1", t, kind="alias", alias_of="x0", view="transposed")
    write = Mutate("x0", "Tensor.neg_", "{0}.neg_()", (Ref("x0"),))
    view = Assign("v", "Tensor.t", "{0}.t()", (Ref("x1"),), t)
    other = Assign("w", "torch.sin", "torch.sin({0})", (Ref("x1"),), t)
    yes = _case([write, view], [base, alias], ["v"], ["s0"], [(3,)])
    assert "alias_base_write_offset_view" in features(yes)
    assert "alias_base_write_offset_view" not in features(_case([view], [base, alias], ["v"], ["s0"], [(3,)]))
    assert "alias_base_write_offset_view" not in features(_case([write, other], [base, alias], ["w"], ["s0"], [(3,)]))
    same = Input("x1", t, kind="alias", alias_of="x0", view="same")
    assert "alias_base_write_offset_view" not in features(_case([write, view], [base, same], ["v"], ["s0"], [(3,)]))
