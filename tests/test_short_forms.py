"""The short repro form for every symptom and call shape: each file shows a planted fault and
stays silent on a correct backend, in a fresh interpreter.

Each test renders a case with a planted ``torch.compile`` backend and runs the file (exit 1 with
its BUG line), then renders the same case with a correct backend and runs it (exit 0). The
cases are the shapes the long form used to be needed for: recompiles, error parity, a killed
process, a hang, scalar globals, module buffers, grad modes and caller actions that change
between calls, special values and zero-size inputs.
"""
import dataclasses
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from fuzzcomp.generators import generate
from fuzzcomp.generators.ir import Assign, Call, Global, Input, Program, Ref, TensorType
from fuzzcomp.render.repro import render_repro, short_spec
from fuzzcomp.render.shortinputs import input_lines
from fuzzcomp.render.shortrepro import Spec, is_short, render_short
from fuzzcomp.findings.triage import BucketKey

F32 = TensorType(("s0",), "float32")


def _case(template, calls, inputs=None, out=F32):
    prog = Program(inputs or (Input("x0", F32),), (Assign("v0", "torch.op", template, (Ref("x0"),), out),),
                   ("v0",), ("s0",))
    return dataclasses.replace(generate(0), program=prog, calls=tuple(calls))


def _run(path, text, env=None, timeout=600):
    path.write_text(text)
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=timeout, env=env)
    lines = p.stdout.strip().splitlines()
    return p.returncode, (lines or [""])[-1], p.stdout + p.stderr


def _both_ways(tmp_path, case, key, planted, want_bug, env=None, check=None):
    for backend, want in ((planted, 1), ("eager", 0)):
        text = render_repro(case.with_compile(backend=backend), key, "detail")
        assert is_short(text), text
        if check:
            check(text)
        rc, last, out = _run(tmp_path / f"{backend.split(':')[-1]}.py", text, env)
        assert rc == want, out
        if want:
            assert last.startswith("BUG: " + want_bug), out
        else:
            assert last.startswith("OK"), out


def test_recompile_replay_is_a_compile_counter(tmp_path):
    """A backend that drops Dynamo's caches after every run: replaying the calls compiles again, on
    a second replay too."""
    case = _case("torch.sin({0})", [Call((3,), 0), Call((5,), 1)])
    key = BucketKey("recompile", "capture", "recompile: replay compiled again: size mismatch")
    _both_ways(tmp_path, case, key, "fuzzcomp.planted:forget_graphs", "replaying calls it has already seen, a second time, compiled",
               check=lambda t: 'counters["stats"]["unique_graphs"]' in t and "same(" not in t)


def test_recompile_count_against_the_schedule(tmp_path):
    """Three calls of one size may compile once; the planted backend compiles every call."""
    case = _case("torch.sin({0})", [Call((3,), 0), Call((3,), 1), Call((3,), 2)])
    key = BucketKey("recompile", "capture", "recompile: more compiles than predicted")
    _both_ways(tmp_path, case, key, "fuzzcomp.planted:forget_graphs", "3 of 3 calls compiled a new graph")


_SWALLOW = '''
import torch


def swallow_errors(gm, example_inputs):
    """Planted: an error inside the compiled graph is swallowed and zeros come back."""
    n = len(next(node for node in gm.graph.nodes if node.op == "output").args[0])

    def run(*args):
        try:
            return gm(*args)
        except Exception:
            return tuple(torch.zeros(1) for _ in range(n))
    return run
'''


def test_error_parity_says_what_eager_raises(tmp_path):
    (tmp_path / "swallow.py").write_text(_SWALLOW)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    case = _case("torch.index_select({0}, 0, torch.tensor([7]))", [Call((3,), 0)])
    key = BucketKey("error-parity", "unknown", "IndexError: index out of range in self")
    _both_ways(tmp_path, case, key, "swallow:swallow_errors", "eager raises IndexError: index out of range", env)


def test_a_killed_process_is_caught_in_a_child(tmp_path):
    """The planted backend aborts the process while compiling, as a segfaulting codegen would."""
    case = _case("torch.sin({0})", [Call((3,), 0)])
    key = BucketKey("segfault", "backend", "signal")
    _both_ways(tmp_path, case, key, "fuzzcomp.planted:abort", "the compiled call killed the process (signal 6)",
               check=lambda t: '"--child"' in t)


@pytest.mark.slow  # the planted half waits out its 20 s; the child-process form itself: the killed-process test
def test_a_hang_is_caught_in_a_child_with_a_timeout(tmp_path):
    case = _case("torch.sin({0})", [Call((3,), 0)]).with_compile(backend="fuzzcomp.planted:hang_at_run")
    spec = short_spec(case, BucketKey("hang", "backend", "hang"), "detail")
    spec.hang_s = 20
    rc, last, out = _run(tmp_path / "hang.py", render_short(spec))
    assert rc == 1 and last == "BUG: the compiled call did not return within 20 s", out
    spec = short_spec(case.with_compile(backend="eager"), BucketKey("hang", "backend", "hang"), "detail")
    spec.hang_s = 20
    rc, last, out = _run(tmp_path / "eager.py", render_short(spec))
    assert rc == 0 and last.startswith("OK"), out


def test_scalar_globals_that_change_between_calls(tmp_path):
    """The program reads a scalar global whose value changes between calls: inputs() sets it
    before each call, and a planted 0.1% error in the multiply shows on the first call."""
    prog = Program((Input("x0", F32),), (Assign("v0", "torch.mul", "torch.mul({0}, G0)", (Ref("x0"),), F32),),
                   ("v0",), ("s0",), globals=(Global("G0", "float"),))
    case = dataclasses.replace(generate(0), program=prog, calls=(Call((3,), 0, globals=(("G0", 2.0),)),
                                                                 Call((3,), 1, globals=(("G0", -3.0),))))
    key = BucketKey("numeric", "inductor", "output values")

    def check(text):  # one block for both calls: G0 and the seed come from the CALLS table
        assert "global G0" in text and "CALLS = ((2.0, 0), (-3.0, 1))" in text and "if call ==" not in text, text
    _both_ways(tmp_path, case, key, "fuzzcomp.planted:perturb_mul", "call 0: compiled output differs", check=check)


def test_grad_modes_and_caller_actions_that_change_between_calls(tmp_path):
    """Call 0 under autocast with grad, call 1 under no_grad with deterministic algorithms: the
    short file keeps a table of each; a planted backend that ignores the caller's autocast shows
    (its matmul returns float32 where eager's is bfloat16)."""
    x = (Input("x0", TensorType(("s0", "s0"), "float32"), requires_grad=True),)
    case = _case("torch.matmul({0}, {0})", [Call((3,), 0, caller=("autocast",)),
                                            Call((4,), 1, grad_mode="no_grad", caller=("deterministic",))], x,
                 out=TensorType(("s0", "s0"), "float32"))
    key = BucketKey("numeric", "inductor", "output values")

    def check(text):
        assert "MODES = (torch.enable_grad, torch.no_grad,)" in text, text
        assert "CALLER = (('autocast',), ('deterministic',))" in text, text
    _both_ways(tmp_path, case, key, "fuzzcomp.planted:ignore_caller_autocast", "call 0: compiled output differs",
               check=check)


def test_module_buffer_mutation_and_state(tmp_path):
    """A model whose forward updates a running buffer: the planted backend runs the graph on
    copies, so the buffer update is lost; the short file loads the buffer before each call and
    compares it after."""
    src = generate(51)  # its forward does self.buf0.neg_(): a generated program, two calls
    spec = short_spec(src, BucketKey("mutation", "inductor", "x"), "x")
    assert "self.buf0.neg_()" in spec.fn_src and any(k == "buffer" for _p, _s, _d, k in spec.state)
    (tmp_path / "copies.py").write_text(textwrap.dedent('''
        import torch


        def on_copies(gm, example_inputs):
            """Planted: the graph runs on copies of its tensor inputs: in-place updates are lost."""
            def run(*args):
                return gm(*[a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args])
            return run
        '''))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    key = BucketKey("mutation", "inductor", "buffer values")
    _both_ways(tmp_path, src, key, "copies:on_copies", "", env,
               check=lambda t: "MODEL." in t.split("def inputs(")[1] and ".clone()]" in t)


def test_special_values_zero_size_and_offset_alias_rebuild_bitwise():
    """Special values in a tensor of more than 16 elements go through the salt helper; a
    zero-size input keeps its shape; an offset alias is ``base[1:]``. Each rebuilds bitwise."""
    from fuzzcomp.run.runtime import make_inputs
    from fuzzcomp.render.shortinputs import SALT_HELPER
    specs = [("x0", (5, 4), "float32", "transposed", {"special": True}), ("x1", (0, 3), "float32", "contiguous"),
             ("x2", (3,), "float16", "contiguous", {"special": True}),
             ("x3", (5, 4), "float32", "contiguous", {"kind": "alias", "of": 0, "view": "offset"})]
    spec = Spec(fn_src="def fn(x0, x1, x2, x3):\n    return (x0,)\n", inputs=specs, calls=[((), 11)], symbols=(),
                symptom="numeric", title="t")
    built = input_lines(spec, ((), 11), False)
    assert built.salt
    env = {"torch": torch}
    exec("\n".join(SALT_HELPER + built.lines), env)  # noqa: S102 - our own rendering
    want = make_inputs([s for s in specs], {}, 11)
    for name, w in zip(("x0", "x1", "x2", "x3"), want):
        got = env[name]
        assert got.shape == w.shape and got.stride() == w.stride(), name
        assert torch.equal(got.isnan(), w.isnan()) and torch.equal(got.nan_to_num(), w.nan_to_num()), name
        assert torch.equal(got.signbit(), w.signbit()), name
    assert env["x0"].isnan().any() or env["x0"].isinf().any()


def test_dynamo_config_of_the_case_is_set():
    case = _case("torch.sin({0})", [Call((3,), 0)])
    case = dataclasses.replace(case, compile=dataclasses.replace(case.compile, config=(("capture_scalar_outputs", True),)))
    text = render_repro(case, BucketKey("compile-crash", "inductor", "x"), "detail")
    assert is_short(text) and "torch._dynamo.config.capture_scalar_outputs = True" in text, text


def test_single_and_dict_outputs_reach_backward(tmp_path):
    """A program returning one tensor or a dict: backward reaches its outputs (iterating the
    tensor itself would run backward over its rows), so a planted wrong gradient shows."""
    x = (Input("x0", F32, requires_grad=True),)
    key = BucketKey("gradient", "autograd", "input values")
    for kind in ("single", "dict"):
        case = _case("torch.mul({0}, 3)", [Call((4,), 0)], x)
        case = dataclasses.replace(case, program=dataclasses.replace(case.program, out_kind=kind))
        _both_ways(tmp_path, case, key, "fuzzcomp.planted:wrong_gradient", "compiled gradients differ")


def test_unused_parameters_and_submodule_returns():
    """Parameters and buffers nothing reads are neither registered nor loaded; the outputs are
    Model.forward's (a tuple), not a submodule's single tensor."""
    from fuzzcomp.render.shortrepro import _drop_unused_state, _leaves
    src = textwrap.dedent('''
        class Sub0(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.p = torch.nn.Parameter(torch.zeros(()))

            def forward(self, v3):
                return v3 * self.p


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer('buf0', torch.zeros((1,)))
                self.lin_w = torch.nn.Parameter(torch.zeros((8, 1)))
                self.sub0 = Sub0()

            def forward(self, x0):
                return (self.sub0(x0),)


        MODEL = Model()


        def fn(x0):
            return MODEL(x0)
        ''')
    out, dead = _drop_unused_state(src)
    assert dead == {"buf0", "lin_w"} and "self.p = torch.nn.Parameter" in out and "lin_w" not in out, out
    assert _leaves(out) == "out"


def test_calls_that_differ_in_sizes_and_seeds_share_one_inputs_block(tmp_path):
    """Three calls whose inputs differ only in sizes, a scalar argument and seeds: inputs(call)
    is one block over a CALLS table (sizes written with the size's name, an offset view's base
    sized from it, a list input, special values), every tensor still bitwise the campaign's; a
    planted 0.1% error in the add shows on the first call, and eager stays silent."""
    sq = TensorType(("s0", "s1"), "float32")
    inputs = (Input("x0", sq, layout="offset", requires_grad=True), Input("x1", sq, kind="list", count=2),
              Input("x2", sq, layout="sliced", special=True), Input("n", sq, kind="int"))
    prog = Program(inputs, (Assign("v0", "torch.add", "torch.add({0}, {1}[1] * {3}) + {2}.isnan().sum()",
                                   (Ref("x0"), Ref("x1"), Ref("x2"), Ref("n")), sq),), ("v0",), ("s0", "s1"))
    calls = tuple(Call((a, b), seed, scalars=(("n", k),)) for a, b, seed, k in ((4, 5, 7, 2), (6, 5, 8, 3), (9, 5, 9, 2)))
    case = dataclasses.replace(generate(0), program=prog, calls=calls)
    key = BucketKey("numeric", "inductor", "output values")

    def check(text):
        assert "CALLS = ((4, 2, 7), (6, 3, 8), (9, 2, 9))  # per call: the size s0, n, the values' seed" in text, text
        assert "if call ==" not in text and "[3:].view(s0, 5)" in text and "(s0, 10)" in text, text
    _both_ways(tmp_path, case, key, "fuzzcomp.planted:perturb_add", "call 0: compiled output differs", check=check)


def test_the_unpruned_short_form_keeps_what_the_minimiser_kept(tmp_path):
    """The pruned short file drops a dead statement and an unused parameter; the ``short-full``
    form (the fallback when the pruned file does not reproduce) keeps the minimised program as
    it is, and still runs both ways."""
    prog = Program((Input("x0", F32), Input("x1", F32)),
                   (Assign("v9", "torch.cos", "torch.cos({0})", (Ref("x0"),), F32),
                    Assign("v8", "torch.sin", "torch.sin({0})", (Ref("x0"),), F32),
                    Assign("v0", "torch.mul", "torch.mul({0}, 2.0)", (Ref("x0"),), F32)), ("v0",), ("s0",))
    case = dataclasses.replace(generate(0), program=prog, calls=(Call((3,), 0),))
    key = BucketKey("numeric", "inductor", "output values")
    pruned = render_repro(case, key, "detail")
    full = render_repro(case, key, "detail", form="short-full")
    assert is_short(pruned) and is_short(full)
    assert "torch.sin" not in pruned and "def fn(x0):" in pruned, pruned
    assert "v8 = torch.sin(x0)" in full and "def fn(x0, x1):" in full and "x1 = " in full, full
    for backend, want in (("fuzzcomp.planted:perturb_mul", 1), ("eager", 0)):
        rc, last, out = _run(tmp_path / f"{want}.py", render_repro(case.with_compile(backend=backend), key, "d",
                                                                    form="short-full"))
        assert rc == want, out


def test_backward_starts_from_inputs_written_in_place_as_the_campaigns_loss_does(tmp_path):
    """The program writes x0 into x1 in place and returns something without grad: the campaign's
    loss reaches x1 (it carries autograd history), so x0's gradient is judged. The short file
    starts backward there too, and a planted wrong gradient shows; eager stays silent."""
    x = (Input("x0", F32, requires_grad=True), Input("x1", F32))
    prog = Program(x, (Assign("v0", "torch.mul_", "{1}.mul_({0})", (Ref("x0"), Ref("x1")), F32),
                       Assign("v1", "torch.zeros_like", "torch.zeros_like({0})", (Ref("x1"),), F32)),
                   ("v1",), ("s0",))
    case = dataclasses.replace(generate(0), program=prog, calls=(Call((4,), 0),))
    key = BucketKey("gradient", "autograd", "input values")
    _both_ways(tmp_path, case, key, "fuzzcomp.planted:wrong_gradient", "compiled gradients differ",
               check=lambda t: "# inputs written in place" in t)


_SCALING = '''
def scale_outputs(gm, example_inputs):
    """A planted fault: every float output comes back 5% too large."""
    def run(*args):
        return tuple(o * 1.05 if o.is_floating_point() else o for o in gm.forward(*args))
    return run
'''


def test_a_half_precision_program_is_judged_without_a_loose_allclose(tmp_path):
    """A bfloat16 program: the campaign's floor is 4 bfloat16 epsilons, and same() at the matching
    tol (0.31) would first try allclose at 31% and pass a 5% error. The file checks with close()
    (same's fp64 rule, no allclose shortcut): the planted 5% error shows, and eager is silent."""
    (tmp_path / "scaling.py").write_text(_SCALING)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    bf = TensorType(("s0",), "bfloat16")
    case = _case("torch.mul({0}, 2)", [Call((64,), 0)], (Input("x0", bf),), out=bf)
    key = BucketKey("numeric", "inductor", "output values")
    _both_ways(tmp_path, case, key, "scaling:scale_outputs", "compiled output differs", env=env,
               check=lambda t: "def close(r, c, f):" in t and "if not close(ref, res, fp64):" in t and "tol=" not in t)


def test_a_program_that_leaves_grad_mode_off_does_not_change_the_next_call(tmp_path):
    """CPU 1508's split repro: fn ends with torch.set_grad_enabled(False), so the compiled call ran
    under the grad mode the eager call left and the file showed another symptom than the campaign
    (leaf=True instead of view=False). Each call now starts from torch's default, as the campaign's
    calls do: with a correct backend the file is silent (before, it said BUG)."""
    case = generate(29)  # ends with torch.set_grad_enabled(False)
    key = BucketKey("aliasing", "inductor", "alias meta of output tensor N: eager='requires_grad=True")
    text = render_repro(case.with_compile(backend="eager"), key, "detail")
    assert "torch.set_grad_enabled(False)" in text and "torch.set_grad_enabled(True)  # fn changes it" in text
    rc, last, out = _run(tmp_path / "eager.py", text)
    assert rc == 0 and last.startswith("OK"), out


def test_the_callers_write_into_an_inference_output_runs_under_inference_mode(tmp_path):
    """An output made under inference mode can be written only inside inference mode: the
    campaign writes it there, and so must the short file (CPU 1517: a repro whose caller wrote the
    output after the `with` block raised in eager at call 0 and printed no BUG line)."""
    case = _case("torch.mul({0}, {0})", [Call((3,), 0, grad_mode="inference", caller=("mutate_output",)),
                                         Call((3,), 1, grad_mode="inference", caller=("mutate_output",))])
    key = BucketKey("runtime-crash", "runtime", "RuntimeError: planted fault: compiled kernel failed at run time")

    def check(text):
        assert "with torch.inference_mode():  # the caller's writes, under the call's grad mode" in text, text
    # the planted backend's graph raises on its second call: call 1, after call 0's write went through
    _both_ways(tmp_path, case, key, "fuzzcomp.planted:runtime_crash", "call 1: compiled call raised RuntimeError",
               check=check)
