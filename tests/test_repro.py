"""Repro files: standalone, honest exit codes, readable; and the source-level reducer for edited ones.

The source-level tests use tiny pure-Python "repros" (same protocol: print
``BUG: ...`` and exit 1 while the bug shows) so each probe costs milliseconds.
"""
import ast
import json
from pathlib import Path
import os
import dataclasses
import subprocess
import sys
import textwrap

import pytest
import torch

from fuzzcomp.render.bugreport import environment, render_report
from fuzzcomp.generators import generate
from fuzzcomp.generators.ir import Assign, Call, Input, Program, Ref, TensorType
from fuzzcomp.render.repro import render_repro
from fuzzcomp.render.shortrepro import CASE_PREFIX, case_from_text, is_short
from fuzzcomp.findings.store import case_from_json
from fuzzcomp.reduce.srcreduce import (SourceReduceError, bug_signature, candidates, count_statements,
                                is_interesting, reduce_source)
from fuzzcomp.findings.triage import BucketKey

KEY = BucketKey("numeric", "unknown", "output values")
F32 = TensorType(("s0",), "float32")


def _add_case(backend):
    prog = Program((Input("x0", F32),), (Assign("v0", "torch.add", "torch.add({0}, {0})", (Ref("x0"),), F32),),
                   ("v0",), ("s0", "s1"))
    return dataclasses.replace(generate(0), program=prog, calls=(Call((3, 9), 0),)).with_compile(backend=backend, dynamic=False)


def _imports(text):
    mods = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            mods |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            mods.add(node.module)
    return mods


def test_repro_needs_only_torch_and_the_custom_backend(tmp_path):
    text = render_repro(_add_case("inductor"), KEY, "detail")
    assert _imports(text) <= {"torch", "torch._dynamo.utils", "traceback"}
    planted = render_repro(_add_case("fuzzcomp.planted:perturb_add"), KEY, "detail")
    assert _imports(planted) - _imports(text) == {"fuzzcomp.planted"}
    for field in ("[Fuzzer][Eager/Compile Divergence] torch.compile (perturb_add, cpu) returns wrong values",
                  "torch 2.", "seed 0", "bucket numeric-unknown-"):
        assert field in planted, field
    long = render_repro(_add_case("inductor"), KEY, "detail", form="long")
    assert _imports(long) <= {"sys", "torch", "torch._inductor.config", "torch._dynamo.utils", "collections",
                              "contextlib", "math",
                              "traceback"}


def test_short_repro_reads_like_a_person_wrote_it():
    case = _add_case("inductor")
    text = render_repro(case, KEY, "output[0]: rmse vs fp64 ...")
    body = [ln for ln in text.splitlines() if not ln.startswith(CASE_PREFIX)]
    assert is_short(text) and len(body) < 40, text
    assert "torch.tensor([1.880212, 0.83127946, -0.16246822], dtype=torch.float32)" in text  # literal values
    assert "# float32 (3,), strides (1,), requires grad" in text
    assert "same(ref, res, fp64_ref=fp64" in text and "torch.compile(fn, dynamic=False)" in text
    assert "INPUTS" not in text and "run_scheduled" not in text
    # the case travels in one trailing line, for replay with the full oracle
    assert case_from_json(case_from_text(text)).program.body == case.program.body


def test_repro_exit_codes_and_pytest_collection(tmp_path):
    """Short form: exit 1 + one BUG line with the planted fault (exit 0 on a correct backend, the
    'fixed' compiler: test_end_to_end runs the campaign's repro with backend='eager'). The long
    form stays collectable by pytest."""
    bad, long = tmp_path / "bad_repro.py", tmp_path / "long_repro.py"
    bad.write_text(render_repro(_add_case("fuzzcomp.planted:perturb_add"), KEY, "detail"))
    long.write_text(render_repro(_add_case("eager"), KEY, "detail", form="long"))
    b = subprocess.run([sys.executable, str(bad)], capture_output=True, text=True, timeout=600)
    assert b.returncode == 1 and b.stdout.strip().startswith("BUG: compiled output differs"), b.stdout + b.stderr
    assert len(b.stdout.strip().splitlines()) == 1
    t = subprocess.run([sys.executable, "-m", "pytest", str(long), "-q", "-p", "no:cacheprovider", "-o",
                        "addopts=", "-o", "python_files=*.py"], capture_output=True, text=True, timeout=600,
                       cwd=tmp_path)
    assert t.returncode == 0 and "1 passed" in t.stdout, t.stdout


@pytest.mark.parametrize("layout", ["transposed", "sliced", "expanded", "offset", "channels_last"])
def test_short_inputs_rebuild_the_campaigns_tensors(layout):
    """Every layout through its real expression, bitwise the campaign's tensor (values and strides),
    large ones as a seeded expression, small ones as literals; an alias is a view of its base."""
    from fuzzcomp.run.runtime import make_input
    from fuzzcomp.render.shortinputs import input_lines
    from fuzzcomp.render.shortrepro import Spec
    for shape in ((2, 2, 2, 2), (4, 5, 3, 2)):
        specs = [("x0", shape, "float32", layout), ("x1", shape, "int32", layout),
                 ("x2", shape, "bfloat16", "contiguous", {"kind": "alias", "of": 0, "view": "same"})]
        spec = Spec(fn_src="def fn(x0, x1, x2):\n    return (x0,)\n", inputs=specs, calls=[((), 7)], symbols=(),
                    symptom="compile-crash", title="t")
        lines = input_lines(spec, ((), 7), False).lines
        env = {"torch": torch}
        exec("\n".join(lines), env)  # noqa: S102 - our own rendering
        for i, (name, _, dtype, lay) in enumerate(specs[:2]):
            want = make_input(shape, dtype, lay, 7 * 31 + i)
            got = env[name]
            assert got.stride() == want.stride() and torch.equal(got, want), (layout, name)
        assert env["x2"] is env["x0"]
        big = "\n".join(lines)
        assert ("torch.rand(" in big) == (shape == (4, 5, 3, 2) or layout in ("sliced", "offset")), big  # bases of 32, 19


def test_short_crash_and_gradient_repros_show_and_clear(tmp_path):
    """A planted runtime crash and a planted wrong gradient: each short file exits 1 with its BUG
    line, and 0 with the same program on a correct backend."""
    prog = Program((Input("x0", F32, requires_grad=True),),
                   (Assign("v0", "torch.mul", "torch.mul({0}, {0})", (Ref("x0"),), F32),), ("v0",), ("s0",))
    case = dataclasses.replace(generate(0), program=prog, calls=(Call((3,), 0),))
    twice = dataclasses.replace(case, calls=(Call((3,), 0), Call((3,), 1)))  # the planted crash: 2nd call
    for backend, key, says, c in (("runtime_crash", BucketKey("runtime-crash", "runtime", "x"),
                                   "BUG: call 1: compiled call raised RuntimeError: planted fault", twice),
                                  ("wrong_gradient", BucketKey("gradient", "unknown", "x"),
                                   "BUG: compiled gradients differ", case)):
        for name, b in ((backend, f"fuzzcomp.planted:{backend}"), ("eager", "eager")):
            path = tmp_path / f"{backend}_{name}.py"
            path.write_text(render_repro(c.with_compile(backend=b), key, "detail"))
            assert is_short(path.read_text()), path.read_text()
            p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)
            if name == "eager":
                assert p.returncode == 0, p.stdout + p.stderr
            else:
                assert p.returncode == 1 and p.stdout.strip().splitlines()[-1].startswith(says), p.stdout + p.stderr


def test_replay_judges_a_short_repro_with_the_full_oracle(tmp_path):
    path = tmp_path / "repro.py"
    path.write_text(render_repro(_add_case("fuzzcomp.planted:perturb_add"), KEY, "detail"))
    p = subprocess.run([sys.executable, "-m", "fuzzcomp", "replay", str(path)], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 1 and "numeric/" in p.stdout and "rmse vs fp64" in p.stdout, p.stdout + p.stderr


def test_report_has_the_upstream_fuzzer_issue_shape(tmp_path):
    case = _add_case("inductor")
    log = tmp_path / "repro.log"
    log.write_text("Traceback (most recent call last):\n  File \"repro.py\", line 3\nRuntimeError: boom\n"
                   "BUG: compiled call raised RuntimeError: boom\n")
    (tmp_path / "recheck.json").write_text('{"python": "3.11", "torch": "2.11.0", "result": "fixed"}')
    text = render_repro(case, KEY, "d")
    md = render_report(case, KEY, "output[0]: rmse ...", text, "BUG: ...", log_path=log,
                       info={"stage_ladder": {"stage": "aot_eager", "rung": "aot_eager",
                                              "rungs": {"eager": "clean", "aot_eager": "shows"}}})
    assert md.startswith("[Fuzzer][Eager/Compile Divergence] torch.compile(inductor, cpu) returns wrong values")
    for section in ("### 🐛 Describe the bug", "### Error logs", "**Expected:**", "**Actual:**",
                    "### Versions", "PyTorch version: 2.", "Python version: 3.", "def fn(x0):",
                    "| requires_grad |", "| `x0` | `[3]` | float32 | contiguous | True |",
                    "the fuzzer runs backward", "RuntimeError: boom\nBUG: compiled call raised", "Stage: **aot_eager**",
                    "`aot_eager`: shows", "Rechecked on torch 2.11.0 (Python 3.11): the bug is **fixed** there",
                    "Labels: `topic: fuzzer`"):
        assert section in md, section
    assert "<details>" not in md  # the short repro is inline, not folded
    assert text.strip() in md
    env = environment()
    assert env["Is CUDA available"] in ("True", "False") and env["PyTorch build compiler"] != ""


# ---- source-level reduction ---------------------------------------------------------------------
TOY = textwrap.dedent('''\
    #!/usr/bin/env python3
    """A toy repro: the 'bug' shows when fn's result contains 13."""
    import sys


    def fn(a, b):
        c = a + 1
        d = [c, 2]  # a comment the reducer must not need
        e = max(d) * 2
        if a > 0:
            f = 13
        else:
            f = 12
        g = (e, f)
        h = g[1]
        return (h, e)


    INPUTS = [
        ('a', (3,), 'float32', 'contiguous'),
        ('b', (3,), 'float32', 'contiguous'),
    ]
    CALLS = [((1,), 0), ((2,), 1), ((3,), 2)]

    if __name__ == "__main__":
        out = fn(*[5, 7][:len(INPUTS)])
        if 13 in out:
            print("BUG: call 0, output[0]: got 13 for " + str(len(CALLS)) + " calls")
            sys.exit(1)
        print("OK")
''')


def test_bug_signature_masks_numbers():
    assert bug_signature("BUG: call 3, output[1]: rmse vs fp64: compiled 0.3 > 3 x") == \
        "BUG: call N, output[N]: rmse vs"


def test_candidates_are_valid_python():
    cands = list(candidates(TOY))
    assert len(cands) > 10
    for c in cands:
        ast.parse(c)


def test_source_reduction_of_a_hand_edited_file(tmp_path):
    path = tmp_path / "toy.py"
    path.write_text(TOY)
    text, st = reduce_source(path, budget_s=120, timeout_s=60)
    assert st.expect == "BUG: call N, output[N]: got N"
    assert count_statements(text) <= 4, text  # f = 13 (if unwrapped), g, h, return
    assert "def fn(a):" in text and "('b', " not in text  # the unused input went, from INPUTS too
    assert "CALLS = [((" in text and text.count("), (") == 0  # one call left
    assert "#!/usr/bin/env python3" in text and "A toy repro" in text  # the rest of the file is kept
    path.write_text(text)
    assert is_interesting(path, st.expect, 60)
    # the predicate also runs as a standalone script (exit 0 = interesting)
    p = subprocess.run([sys.executable, "-m", "fuzzcomp.reduce.srcreduce", str(path), "--expect", st.expect],
                       capture_output=True, timeout=60)
    assert p.returncode == 0
    p = subprocess.run([sys.executable, "-m", "fuzzcomp.reduce.srcreduce", str(path), "--expect", "BUG: other"],
                       capture_output=True, timeout=60)
    assert p.returncode == 1


def test_source_reduction_refuses_a_file_without_a_bug(tmp_path):
    path = tmp_path / "fine.py"
    path.write_text("def fn(a):\n    return (a,)\nprint('OK')\n")
    with pytest.raises(SourceReduceError, match="does not show a bug"):
        reduce_source(path, budget_s=10, timeout_s=30)


def test_program_without_inputs_renders_valid_python_and_runs(tmp_path):
    """A minimised module program that lost all its inputs (found on CUDA) once rendered
    ``INPUTS = [ , ]``, a SyntaxError that still exited 1 and was counted as confirmed. Here it is
    rendered for the CPU: it must parse, run, and say OK or BUG, never crash."""
    import json
    from pathlib import Path

    from fuzzcomp.findings.store import case_from_json
    case = case_from_json(json.loads((Path(__file__).parent / "data" / "module_no_inputs_case.json").read_text()))
    case = case.with_compile(device="cpu")
    assert not case.program.inputs and case.program.module is not None
    text = render_repro(case, BucketKey("numeric", "unknown", "output values"), "test")
    ast.parse(text)
    path = tmp_path / "repro.py"
    path.write_text(text)
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    last = (p.stdout.strip().splitlines() or [""])[-1]
    assert p.returncode in (0, 1) and (last.startswith("OK") or last.startswith("BUG")), p.stderr[-2000:]


def test_a_broken_repro_is_not_confirmed(tmp_path):
    """A repro that cannot even be parsed exits 1 like a reproduced bug; only its BUG line counts."""
    from fuzzcomp.campaign.pipeline import reproduced, run_repro
    bad = tmp_path / "repro.py"
    bad.write_text("INPUTS = [\n    ,\n]\n")
    code, last = run_repro(bad, timeout_s=60)
    assert code == 1 and not reproduced(code, last)
    good = tmp_path / "good.py"
    good.write_text("import sys\nprint('BUG: call 0: x')\nsys.exit(1)\n")
    assert reproduced(*run_repro(good, timeout_s=60))


def test_random_program_is_silent_under_inductor(tmp_path):
    """dropout draws random numbers: the short file sets fallback_random and reseeds before every
    run, so a correct Inductor compile is not a false 'numeric' bug."""
    prog = Program((Input("x0", TensorType((64,), "float32")),),
                   (Assign("v0", "torch.nn.functional.dropout", "torch.nn.functional.dropout({0}, 0.5)",
                           (Ref("x0"),), TensorType((64,), "float32")),), ("v0",), ())
    case = dataclasses.replace(generate(0), program=prog, calls=(Call((), 3),)).with_compile(backend="inductor")
    text = render_repro(case, KEY, "detail")
    assert "fallback_random = True" in text and "torch.manual_seed(3)" in text and is_short(text), text
    path = tmp_path / "repro.py"
    path.write_text(text)
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr


_LEAKY = '''
import torch


def leak_default_dtype(gm, example_inputs):
    """A planted fault: the compiled call leaves the default dtype at float64."""
    def run(*args):
        out = gm.forward(*args)
        torch.set_default_dtype(torch.float64)
        return out
    return run
'''


def test_short_repro_of_a_torch_global_checks_the_global_state(tmp_path):
    """A finding that a torch global differs after the call gets a short repro whose check is
    torch's state (grad mode, deterministic algorithms, default dtype): it shows the planted leak
    and stays silent on a correct backend. Input values are no witness of this bug class."""
    (tmp_path / "leaky.py").write_text(_LEAKY)
    key = BucketKey("mutation", "autograd", "torch globals: default_dtype")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    for backend, want in (("leaky:leak_default_dtype", 1), ("eager", 0)):
        path = tmp_path / f"globals_{want}.py"
        text = render_repro(_add_case(backend), key, "state torch globals after call: ...")
        path.write_text(text)
        assert is_short(text) and "def state():" in text and "from torch._dynamo.utils import same" not in text, text
        assert "torch globals" in text.split('"""')[1].splitlines()[0] or "global state" in text, text
        p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600, env=env)
        assert p.returncode == want, p.stdout + p.stderr
        if want:
            assert p.stdout.strip().splitlines()[-1].startswith("BUG: torch globals after the call"), p.stdout


def test_short_gradient_repro_accepts_none_against_zeros(tmp_path):
    """Eager's None gradient against compiled zeros is the accepted difference the oracle never
    files; the short gradient repro says OK there too, and still shows a real wrong gradient."""
    src = textwrap.dedent('''
        import torch


        def zero_grad_for_unused(gm, example_inputs):
            """Planted: compiled backward gives zeros (not None) for an input the output ignores."""
            def run(x0, x1):
                return (x0 * 2 + (x1 > 0).float() + x1 * 0,)
            return run
        ''')
    (tmp_path / "zeros.py").write_text(src)
    two = TensorType(("s0",), "float32")
    prog = Program((Input("x0", two, requires_grad=True), Input("x1", two, requires_grad=True)),
                   (Assign("v0", "torch.mul", "torch.mul({0}, 2) + ({1} > 0).float()", (Ref("x0"), Ref("x1")), two),),
                   ("v0",), ("s0",))
    case = dataclasses.replace(generate(0), program=prog, calls=(Call((3,), 0),))
    key = BucketKey("gradient", "autograd", "input values | culprit op: torch.mul")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    for backend, want in (("zeros:zero_grad_for_unused", 0), ("fuzzcomp.planted:wrong_gradient", 1)):
        path = tmp_path / f"grad_{want}.py"
        text = render_repro(case.with_compile(backend=backend), key, "grad of input x1: eager gave None")
        path.write_text(text)
        assert is_short(text), text
        p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600, env=env)
        assert p.returncode == want, p.stdout + p.stderr


def test_title_names_no_machine_path():
    """A crash inside a generated kernel names Inductor's cache path; the title keeps the message."""
    from fuzzcomp.render.repro import headline
    got = headline("compiled raised RuntimeError: kernel, /tmp/fuzzcomp-inductor-k2zm3sat/n3/"
                   "cn354zwmm5vp467hqfhl7uizhtptqwgxc6jkert62kcj3xb.cpp:37, index out of bounds: 0 <= tmp3 < 1L")
    assert got == "compiled raised RuntimeError: kernel, <generated>.cpp:37, index out of bounds: 0 <= tmp3 < 1L"
    wrapped = "BackendCompilerFailed: backend='inductor' raised: | RuntimeError: at /usr/lib/torch/_ops.py, line 3 | cmd"
    assert headline(wrapped) == "BackendCompilerFailed: RuntimeError: at _ops.py, line 3"


def _caller_case(template, caller):
    prog = Program((Input("x0", F32, requires_grad=True),),
                   (Assign("v0", "torch.exp", template, (Ref("x0"),), F32),), ("v0",), ("s0",))
    # two calls: the planted runtime crash fires on the second
    return dataclasses.replace(generate(0), program=prog, calls=(Call((3,), 0, caller=caller),
                                                                 Call((3,), 1, caller=caller)))


def test_short_crash_repro_keeps_the_callers_actions(tmp_path):
    """A case whose caller turns on deterministic algorithms and writes an input between forward
    and backward: the short file does both, where the campaign did them, so it shows a planted
    crash and is silent on a correct backend; and the write really happens before backward (with
    x0 * x0, which saves x0, eager itself then fails in backward)."""
    key = BucketKey("runtime-crash", "runtime", "RuntimeError: planted fault")
    caller = ("deterministic", "mutate_input")
    for backend, want in (("fuzzcomp.planted:runtime_crash", 1), ("eager", 0)):
        text = render_repro(_caller_case("torch.exp({0})", caller).with_compile(backend=backend), key, "d")
        assert is_short(text) and "torch.use_deterministic_algorithms(True)" in text, text
        body = text.split("def run(f, xs):")[1]
        assert body.index("out = f(*xs)") < body.index("xs[0].mul_(2)") < body.index("torch.autograd.backward"), text
        path = tmp_path / f"caller_{want}.py"
        path.write_text(text)
        p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)
        assert p.returncode == want, p.stdout + p.stderr
    path.write_text(render_repro(_caller_case("torch.mul({0}, {0})", caller).with_compile(backend="eager"), key, "d"))
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 1 and "modified by an inplace operation" in p.stderr, p.stdout + p.stderr


_CLONING = '''
def clone_outputs(gm, example_inputs):
    """A planted fault: outputs come back as copies, so a view of an input is no view of it."""
    def run(*args):
        return tuple(o.clone() for o in gm.forward(*args))
    return run
'''


def _exit_of(path, text, env=None):
    """Write ``text`` to ``path`` and run it in a fresh interpreter: (exit code, output)."""
    path.write_text(text)
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600, env=env)
    return p.returncode, p.stdout + p.stderr


def test_short_alias_meta_repro_checks_what_autograd_sees(tmp_path):
    """An output that is a view of an input in eager and not in compiled (the 'alias meta'
    bucket): the short file compares requires_grad, is_leaf and view-ness, shows the planted
    copy and is silent on a correct backend (a storage-only check said OK there)."""
    (tmp_path / "cloning.py").write_text(_CLONING)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    prog = Program((Input("x0", F32, requires_grad=True),),
                   (Assign("v0", "torch.select", "torch.select({0}, 0, 0)", (Ref("x0"),), TensorType((), "float32")),),
                   ("v0",), ("s0",))
    case = dataclasses.replace(generate(0), program=prog, calls=(Call((3,), 0),))
    key = BucketKey("aliasing", "autograd", "alias meta of output tensor N: eager='requires_grad=True leaf=False")
    for backend, want in (("cloning:clone_outputs", 1), ("eager", 0)):
        text = render_repro(case.with_compile(backend=backend), key, "alias meta of output tensor 0: ...")
        assert is_short(text) and "def meta(f, xs):" in text, text
        rc, out = _exit_of(tmp_path / f"meta_{want}.py", text, env)
        assert rc == want, out


def test_short_zero_sign_repro_compares_sign_bits(tmp_path):
    """A 'zero sign' bucket (-0.0 back as +0.0): same() cannot see it, so the short file also
    compares the sign of every zero and infinity; it shows the planted flip and is silent on a
    correct backend (the campaign wrote a long form that said OK in every fresh process)."""
    prog = Program((Input("x0", F32),),
                   (Assign("v0", "torch.mul", "torch.mul({0}, -0.0)", (Ref("x0"),), F32),), ("v0",), ("s0",))
    case = dataclasses.replace(generate(0), program=prog, calls=(Call((3,), 0),))
    key = BucketKey("numeric", "inductor", "output zero sign")
    for backend, want in (("fuzzcomp.planted:flip_negative_zero", 1), ("eager", 0)):
        text = render_repro(case.with_compile(backend=backend), key, "output[0]: 1 zeros change sign")
        assert is_short(text) and "signbit" in text, text
        rc, out = _exit_of(tmp_path / f"zero_{want}.py", text)
        assert rc == want, out
        if want:
            assert "BUG: compiled gives 0.0 where eager gives -0.0" in out, out


def test_a_long_title_is_cut_at_a_word_boundary():
    from fuzzcomp.render.repro import clip
    text = "alias meta of output tensor 0: eager='requires_grad=True leaf=False inference=False view=True' " \
           "compiled='requires_grad=True leaf=False inference=False view=False'"
    cut = clip(text)
    assert cut.endswith(" ...") and len(cut) <= 124 and text.startswith(cut[:-4]) and text[len(cut) - 4] == " "
    assert clip("short detail") == "short detail"
    assert clip("x" * 200) == "x" * 120 + " ..."  # no space to cut at: the plain cut, marked


def test_the_callers_input_write_lands_where_the_campaign_makes_it(tmp_path):
    """The campaign writes the first float tensor input between forward and backward; an alias
    has its base's dtype, so an int8 base and its view are passed over. The short file writes the
    same input (here x2, which x2 * x2 saves, so eager itself then fails in backward, as in the
    campaign); where that input is one the program never reads, there is no write at all."""
    i8 = TensorType(("s0",), "int8")
    inputs = (Input("x0", i8), Input("x1", i8, kind="alias", alias_of="x0", view="same"),
              Input("x2", F32, requires_grad=True))
    prog = Program(inputs, (Assign("v0", "torch.mul", "torch.mul({0}, {0}) + {1}", (Ref("x2"), Ref("x1")), F32),),
                   ("v0",), ("s0",))
    case = dataclasses.replace(generate(0), program=prog, calls=(Call((3,), 0, caller=("mutate_input",)),))
    key = BucketKey("runtime-crash", "runtime", "RuntimeError: planted fault")
    text = render_repro(case.with_compile(backend="eager"), key, "d")
    assert is_short(text) and "xs[2].mul_(2)" in text, text
    code, out = _exit_of(tmp_path / "write.py", text)
    assert code == 1 and "modified by an inplace operation" in out, out
    unread = dataclasses.replace(prog, body=(Assign("v0", "torch.exp", "torch.exp({0}.float())", (Ref("x1"),), F32),))
    text = render_repro(dataclasses.replace(case, program=unread).with_compile(backend="eager"), key, "d")
    assert is_short(text) and "mul_(2)" not in text and "x2" not in text.split("# fuzzcomp-case")[0], text


@pytest.mark.slow
@pytest.mark.parametrize("form", ["short", "long"])
def test_a_mark_dynamic_the_program_specialises_is_no_bug_in_a_repro(tmp_path, form):
    """H200 seed 1309: the repro of an InductorError bucket stopped at its first call, where
    Dynamo refused a ``mark_dynamic`` the program specialises (ConstraintViolationError, which the
    campaign's judge ignores by design), and printed that as the bug. On the CPU the same case
    has no crash: the repro skips the refusal as the judge does and says OK; without the skip
    it said BUG."""
    from fuzzcomp.base.repro_runner import last_line, run_repro_file
    data = json.loads((Path(__file__).parent / "data" / "mark_dynamic_refused_case.json").read_text())
    case = case_from_json(data["case"])
    text = render_repro(case, BucketKey("compile-crash", "inductor", "InductorError: AssertionError:"),
                        "compiled raised InductorError: AssertionError:", form=form)
    assert is_short(text) is (form == "short") and "ConstraintViolationError" in text
    repro = tmp_path / "repro.py"
    repro.write_text(text)
    run = run_repro_file(repro, 300)
    assert run.code == 0 and last_line(run).startswith("OK"), last_line(run)


@pytest.mark.slow
def test_the_long_form_shows_a_lost_nan_and_not_a_gradient_at_a_nan_input(tmp_path):
    """CPU seed 1401's softshrink bucket (eager NaN, compiled 0.0: the exact special-value rule's
    finding) was 'reproduced' by its long form through the gradient at that NaN input, a number
    eager's own kernel leaves arbitrary (#195075). The long form now judges the lost NaN and leaves
    gradients at NaN inputs unjudged; with a correct compile it says OK."""
    import dataclasses
    from fuzzcomp.base.repro_runner import last_line, run_repro_file
    case = case_from_json(json.loads((Path(__file__).parent / "data" / "softshrink_nan_case.json").read_text())["case"])
    key = BucketKey("numeric", "inductor", "output values | culprit op: torch.nn.functional.softshrink")
    for backend, code, says in (("inductor", 1, "are NaN are not compiled"), ("aot_eager", 0, "OK")):
        c = dataclasses.replace(case, compile=dataclasses.replace(case.compile, backend=backend))
        repro = tmp_path / f"{backend}.py"
        repro.write_text(render_repro(c, key, "x", form="long"))
        run = run_repro_file(repro, 300)
        assert run.code == code and says in last_line(run), last_line(run)
