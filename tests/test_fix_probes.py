"""Fix probes (fuzzcomp.run.fix_probes): an entry's candidate fix closes its root cause in any
form, leaves other bugs alone, and leaves torch as it found it."""
import contextlib

import pytest
import torch

from fuzzcomp.findings.known import RegistryError, entry_from_json
from fuzzcomp.generators.ir import Assign, Input, Program, Ref, TensorType
from fuzzcomp.run import fix_probes

from oracle_cases import case


def test_a_probe_restores_what_it_patched():
    import torch._inductor.fx_passes.post_grad as pg
    import torch._inductor.ir as ir
    before = (pg.remove_noop_ops, ir.ExpandView.make_reindexer)
    with fix_probes.apply("no_noop_removal"):
        assert pg.remove_noop_ops is not before[0]
    with fix_probes.apply("expand_reindex_provably_one"):
        assert ir.ExpandView.make_reindexer is not before[1]
    with pytest.raises(ZeroDivisionError):  # restored on the way out of an error too
        with fix_probes.apply("no_noop_removal"):
            1 / 0
    assert (pg.remove_noop_ops, ir.ExpandView.make_reindexer) == before


def test_an_entry_names_only_a_probe_that_exists():
    entry = {"id": "x", "title": "t", "buckets": ["b"], "fix_probe": "no_noop_removal"}
    assert entry_from_json(entry, "e").fix_probe == "no_noop_removal"
    with pytest.raises(RegistryError, match="fix_probe 'nope'"):
        entry_from_json(dict(entry, fix_probe="nope"), "e")


def test_the_registry_names_its_probes_on_the_entries_they_close():
    from fuzzcomp.findings.known import default_registry
    reg = default_registry("2.13.0+cpu")
    named = {b.id: b.fix_probe for b in reg.bugs if b.fix_probe}
    assert named["expand-symbolic-one-reindex"] == "expand_reindex_provably_one"
    assert named["generalized-scatter-output-aliases-input"] == "no_noop_removal"
    # candidates follow the stage the fix patches, whatever the symptom
    ids = {b.id for b in reg.fix_candidates("inductor")}
    assert {"expand-symbolic-one-reindex", "generalized-scatter-output-aliases-input"} <= ids
    assert ids == {b.id for b in reg.fix_candidates("unknown")}
    assert not reg.fix_candidates("capture") and not reg.fix_candidates("autograd")


def _embedding_bag_broadcast():
    """H200 seed 1503's root cause on CPU (the judge's reduction): embedding_bag's bag count is
    traced as (2*s - 1)//s under dynamic shapes, and x + v.sum(-1).sin() expands it over s."""
    x, w = TensorType(("s0",), "float32"), TensorType((10, 8), "float32")
    v, s = TensorType((1, 8), "float32"), TensorType((1,), "float32")
    return Program((Input("x", x), Input("w", w)),
                   (Assign("v", "torch.nn.functional.embedding_bag",
                           "torch.nn.functional.embedding_bag({}.long().abs().remainder(10).reshape(1, -1), {}, "
                           "mode='mean')", (Ref("x"), Ref("w")), v),
                    Assign("t", "torch.sin", "torch.sin({}.sum(-1))", (Ref("v"),), s),
                    Assign("y", "torch.add", "torch.add({}, {})", (Ref("x"), Ref("t")), x)),
                   ("y",), ("s0",))


@pytest.mark.slow
@pytest.mark.parametrize("backend, fix, flagged", [
    ("inductor", None, True),                                    # the bug
    ("inductor", "expand_reindex_provably_one", False),          # its entry's fix closes it
    ("inductor", "no_noop_removal", True),                       # another entry's fix does not
    ("fuzzcomp.planted:perturb_mul", "expand_reindex_provably_one", True),  # nor does it hide a planted fault
])
def test_the_fix_probe_closes_its_root_cause_and_nothing_else(backend, fix, flagged):
    from fuzzcomp.judge.check import check
    from fuzzcomp.run.execute import ExecOptions
    prog = _embedding_bag_broadcast()
    if backend != "inductor":  # a program with a mul for the planted fault to perturb
        prog = Program(prog.inputs, prog.body + (Assign("z", "torch.mul", "torch.mul({}, 3.0)", (Ref("y"),),
                                                        prog.body[-1].type),), ("z",), prog.symbols)
    c = case(prog, backend, sizes=((3,), (4,)), dynamic=True)
    torch._dynamo.reset()
    import contextlib
    with (fix_probes.apply(fix) if fix else contextlib.nullcontext()):
        obs, verdicts = check(c, ExecOptions(ladder=False, culprit=False))
    assert obs.eager_valid
    assert bool([v for v in verdicts if v.symptom == "numeric"]) == flagged, [v.detail for v in verdicts]


def _write_through_view_then_clone():
    """#195451 on CPU (H200 seed 1503's judge): x[::2].add_(1); return x.clone(): Inductor returns
    the input itself (remove_noop_ops drops the clone, reinplacing writes the input)."""
    sq = TensorType(("s0", "s0"), "float32")
    from fuzzcomp.generators.ir import Lit, Mutate
    return Program((Input("x", sq),),
                   (Mutate("x", "Tensor.add_", "{}[::2].add_({})", (Ref("x"), Lit(1.0))),
                    Assign("y", "torch.clone", "torch.clone({})", (Ref("x"),), sq)),
                   ("y",), ("s0",))


@pytest.mark.slow
@pytest.mark.parametrize("fix, flagged", [(None, True), ("no_noop_removal", False),
                                          ("expand_reindex_provably_one", True)])
def test_the_noop_removal_probe_closes_the_clone_that_comes_back_as_the_input(fix, flagged):
    _assert_aliasing_flagged(_write_through_view_then_clone(), 3, fix, flagged)


def _assert_aliasing_flagged(program, size: int, fix, flagged: bool) -> None:
    """``program`` compiled by Inductor (under ``fix`` where one is named) shows an aliasing
    divergence exactly when ``flagged``."""
    from fuzzcomp.judge.check import check
    from fuzzcomp.run.execute import ExecOptions
    torch._dynamo.reset()
    with (fix_probes.apply(fix) if fix else contextlib.nullcontext()):
        obs, verdicts = check(case(program, "inductor", sizes=((size,),)),
                              ExecOptions(ladder=False, culprit=False, grad="off"))
    assert obs.eager_valid
    assert bool([v for v in verdicts if v.symptom == "aliasing"]) == flagged, [v.detail for v in verdicts]


def _minus_a_zero():
    """#197893's joint-graph form (CPU 1513 a9cbade6): ``x - zeros(())``; Inductor's joint-graph
    pass drops the identity subtraction and returns the input itself."""
    x = TensorType(("s0", 65), "int64")
    zero = TensorType((), "int16")
    return Program((Input("x", x, layout="transposed"),),
                   (Assign("z", "torch.zeros", "torch.zeros((), dtype=torch.int16, device=DEVICE)", (), zero),
                    Assign("y", "torch.sub", "torch.sub({}, {})", (Ref("x"), Ref("z")), x)),
                   ("y",), ("s0",))


@pytest.mark.slow
@pytest.mark.parametrize("fix, flagged", [(None, True), ("no_noop_removal", False)])
def test_the_noop_removal_probe_closes_the_subtracted_zero_that_comes_back_as_the_input(fix, flagged):
    _assert_aliasing_flagged(_minus_a_zero(), 8, fix, flagged)


@pytest.mark.slow
def test_the_two_nested_region_fixes_each_close_their_own_form_only():
    """invoke-subgraph-operand-alias-reuse and cond-scatter-add-grad's nested-region form both need
    the region, so a knock-out cannot tell them apart; their fixes can (CPU 1513's judge). Form A
    calls the region on an input and on an intermediate (the donated buffer); form B returns the
    region's operand-aliasing output while a later kernel reuses its storage."""
    @torch.compiler.nested_compile_region
    def h(a):
        return torch.sin(a)
    forms = {"A": lambda x, y: (h(x) + h(x * 2) + h(y),), "B": lambda x, y: (h(x), h(x * 2), y.cos())}
    wrong = {}
    for form, f in forms.items():
        for fix in (None, "subgraph_no_inherited_donation", "invoke_subgraph_alias_no_reuse"):
            torch._dynamo.reset()
            x = torch.tensor([0.5, 1.0, -0.3, 2.0], requires_grad=True)
            y = torch.tensor([1.0, 2.0, 3.0, -1.0])
            ref = torch.cos(x.detach().double()) + 2 * torch.cos(2 * x.detach().double())
            with (fix_probes.apply(fix) if fix else contextlib.nullcontext()):
                sum(o.sum() for o in torch.compile(f, fullgraph=True)(x, y)).backward()
            wrong[form, fix] = (x.grad.double() - ref).abs().max().item() > 1e-5
    assert wrong == {("A", None): True, ("A", "subgraph_no_inherited_donation"): False,
                     ("A", "invoke_subgraph_alias_no_reuse"): True,
                     ("B", None): True, ("B", "subgraph_no_inherited_donation"): True,
                     ("B", "invoke_subgraph_alias_no_reuse"): False}
