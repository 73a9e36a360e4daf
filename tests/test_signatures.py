"""Crash signatures (``oracles.verdict.error_signature`` over ``runtime._error`` messages): one bug,
one bucket, whatever program exposed it; two bugs, two buckets."""
from __future__ import annotations

from fuzzcomp.oracles import error_signature
from fuzzcomp.run.runtime import _error


def _msg(exc: Exception) -> str:
    try:
        raise exc
    except Exception as e:
        return _error(e)[1]


class CompilationError(Exception):
    pass


def _triton(cause: str, kernel: str) -> Exception:
    return CompilationError(f"at 8:4:\ndef {kernel}(in_ptr0, XBLOCK : tl.constexpr):\n"
                            f"    xoffset = tl.program_id(0)\n    tl.atomic_add(out_ptr0, tmp2, xmask)\n    ^\n{cause}")


def test_triton_compile_errors_are_told_apart_by_their_cause():
    a = error_signature("InductorError", "CompilationError: " + _msg(_triton("ValueError('no int8')", "k1")))
    b = error_signature("InductorError", "CompilationError: " + _msg(_triton("ValueError('no int8')", "k2")))
    c = error_signature("InductorError", "CompilationError: " + _msg(_triton("TypeError('bad cast')", "k1")))
    assert a == b and a != c and "no intN" in a


def test_program_details_do_not_split_a_bucket():
    inplace = ("one of the variables needed for gradient computation has been modified by an inplace "
               "operation: [{}], which is output 0 of AsStridedBackward0")
    sigs = {error_signature("RuntimeError", inplace.format(t))
            for t in ("torch.cuda.HalfTensor [3, 4]", "CUDABFloat16Type [2]", "torch.FloatTensor [5]")}
    assert len(sigs) == 1
    copy = "n=copy_, n.args[0]=permute_{}, placeholders={{{}}}, graph=graph():"
    sigs = {error_signature("AssertionError", copy.format(i, p))
            for i, p in ((1, "arg0_1"), (2, "primals_1, tangents_2"), (3, "arg3_1, arg1_1, arg2_1"))}
    assert len(sigs) == 1
    assert error_signature("AssertionError", copy.format(1, "x").replace("permute", "empty")) not in sigs


# ---- message variants of one bug seen in campaigns: each family is one signature ----------------
def _one(type_name, messages):
    return {error_signature(type_name, m) for m in messages}


def test_dtype_names_do_not_split_a_bucket():
    loop = ("CompilationError: at 14:8: | AssertionError: Loop-carried variable tmp3 has initial type "
            "<['1024'], {}> but is re-assigned to <['1024'], int32> in loop! Please make sure that the "
            "type stays consistent.")
    assert len(_one("InductorError", [loop.format(d) for d in ("int8", "int16", "uint8", "tl.int1")])) == 1
    promo = "Cannot promote {} to fp32 in tl.where: i{} vs u{}"
    assert len(_one("CompilationError", [promo.format(a, b, b) for a, b in (("int8", 8), ("uint8", 16))])) == 1
    assert error_signature("InductorError", loop.format("int8")) != error_signature(
        "InductorError", loop.format("int8").replace("Loop-carried", "Block-carried"))


def test_sympy_classes_do_not_split_a_bucket():
    msgs = ["LoweringException: TypeError: unsupported operand type(s) for *: '{}' and 'Integer'".format(c)
            for c in ("BooleanTrue", "StrictGreaterThan", "BooleanFalse", "StrictLessThan")]
    assert len(_one("InductorError", msgs)) == 1
    assert "SYMPY" in error_signature("InductorError", msgs[0])


def test_generated_names_do_not_split_a_bucket():
    assert len(_one("InductorError", [f"KeyError: 'buf{n}'" for n in (3, 12, 0)])) == 1
    dd = "Could not guard on data-dependent expression Eq({0}, 1) (unhinted: Eq({0}, 1)).  (Size-like symbols: {0})"
    assert len(_one("GuardOnDataDependentSymNode", [dd.format(u) for u in ("u0", "u3", "u12")])) == 1
    sym = "Expected size {} to be static, got {}*{}"
    assert len(_one("AssertionError", [sym.format(a, a, b) for a, b in (("s0", "s1"), ("s7", "s12"))])) == 1
    var = "name 'v{}' is not defined"
    assert len(_one("NameError", [var.format(n) for n in (1, 12, 130)])) == 1
    ph = "mismatch in arg0_1 and primals_2 vs tangents_1"
    assert len(_one("AssertionError", [ph, ph.replace("arg0_1", "primals_7")])) == 1


def test_optional_clauses_do_not_split_a_bucket():
    base = "Unsupported: call_method UserDefinedObjectVariable(Foo) bar [] {}"
    variants = [base, base + "\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this "
                "especially if you're reporting a bug to PyTorch).",
                base + " Hint: avoid calling this method. Developer debug context: x",
                base + ". You can suppress this exception and fall back to eager by setting: "
                "import torch._dynamo; torch._dynamo.config.suppress_errors = True"]
    assert len(_one("Unsupported", [_msg(RuntimeError(v)) for v in variants])) == 1


def test_distinct_bugs_stay_distinct():
    sigs = _one("InductorError", ["KeyError: 'buf3'", "IndexError: list index out of range",
                                  "AssertionError: Loop-carried variable tmp3 has initial type int8",
                                  "LoweringException: TypeError: cannot determine truth value of Relational"])
    assert len(sigs) == 4


def test_version_counter_failure_is_one_bucket_whichever_op_made_the_tensor():
    """Autograd adds "which is output 0 of LerpBackward0" only for a tensor an op produced: the
    same saved-tensor version failure, one bucket; another autograd failure stays apart."""
    head = "one of the variables needed for gradient computation has been modified by an inplace operation: "
    a = error_signature("RuntimeError", head + "[torch.FloatTensor [1]] is at version 1; expected version 0 instead.")
    b = error_signature("RuntimeError", head + "[torch.FloatTensor []], which is output 0 of LerpBackward0, is at "
                        "version 2; expected version 1 instead. Hint: enable anomaly detection")
    d = error_signature("RuntimeError", head + "[torch.FloatTensor []], which is output 0 of "
                        "torch::autograd::CopyBackwards, is at version 2; expected version 1 instead.")
    c = error_signature("RuntimeError", "element 0 of tensors does not require grad and does not have a grad_fn")
    assert a == b == d != c
    # an output of the compiled graph is another cause (the partitioner saved an output the caller
    # wrote): CPU 1508 and 1509 had it in one bucket with an input rematerialised after its write
    e = error_signature("RuntimeError", head + "[torch.FloatTensor [9, 9]], which is output 2 of CompiledFunction, "
                        "is at version 1; expected version 0 instead. Hint: enable anomaly detection")
    f = error_signature("RuntimeError", head + "[torch.FloatTensor [3]], which is output 0 of CompiledFunctionBackward, "
                        "is at version 2; expected version 1 instead.")
    assert e == f != a and e.endswith("a graph output")


class LoweringException(Exception):
    pass


def _lowering(target: str, arg: str) -> Exception:
    return LoweringException(f"AssertionError: \n  target: {target}\n  args[0]: {arg}")


def test_an_empty_lowering_assertion_is_told_apart_by_its_target():
    """CPU 1506: max_pool2d's backward and a nested region raised the same empty lowering
    assertion and shared a bucket; the target names the lowering that failed."""
    pool = [error_signature("InductorError", "LoweringException: " + _msg(_lowering(
        "aten.max_pool2d_with_indices_backward.default", f"TensorBox(StorageBox(buf{i}))"))) for i in (1, 7)]
    region = error_signature("InductorError", "LoweringException: " + _msg(_lowering(
        "invoke_subgraph", "Subgraph(name='repeated_subgraph0', graph=<obj at 0x7f8fbcf4c950>)")))
    assert pool[0] == pool[1] and pool[0] != region
    assert region == "InductorError: LoweringException: AssertionError: target: invoke_subgraph"
    # a message that says something keeps its own words, not the target
    said = error_signature("InductorError", "LoweringException: AssertionError: device is None | target: x")
    assert said == "InductorError: LoweringException: AssertionError: device is None"


def _fake_call(target: str, args: str, inner: Exception) -> str:
    """Dynamo's wrapper as torch words it (torch/_dynamo/utils.py, get_fake_value)."""
    wrapped = RuntimeError("RuntimeError when making fake tensor call\n\nExplanation: Dynamo failed to run FX "
                           f"node with fake tensors: call_function {target}(*({args},), **{{}}): got {inner!r}\n"
                           "Hint: this is a Dynamo bug\n\nDeveloper debug context: ...")
    return _msg(wrapped)


def test_dynamos_fake_tensor_wrapper_is_told_apart_by_the_error_it_wraps():
    """CPU 1510's compile-crash-capture-22bba8fc held two root causes under Dynamo's one wrapper
    message (a fake view replay after an in-place view op; a cond's branch strides): the wrapped
    error splits them, whatever the FX node's arguments, however long, and the registry's rules
    that name the wrapper still read it."""
    many = ", ".join(f"FakeTensor(..., size=(s{i}, 1, s7{i}, 1), requires_grad=True)" for i in range(12))
    view = RuntimeError("Expected cond to be true, but got false. (Could this error message be improved?)")
    cond = RuntimeError("The sorted order of strides of the two branches' output doesn't match.this indicates "
                        "the output stride order of one branch is not consistent with the other")
    a = error_signature("TorchRuntimeError", _fake_call("<built-in method clone>", "FakeTensor(...)", view))
    b = error_signature("TorchRuntimeError", _fake_call("<built-in method clone>", many, view))
    c = error_signature("TorchRuntimeError", _fake_call("cond", many, cond))
    assert a == b and a != c
    assert c.startswith("TorchRuntimeError: RuntimeError when making fake tensor call: RuntimeError: The sorted ")
    assert "The sorted order of strides of the two branches' output doesn't match" in c
    assert "Expected cond to be true" in a


def _cpp_error(first_error: str, path: str) -> str:
    """Inductor's C++ compile error as torch words it: the command, then the compiler's output."""
    return _msg(RuntimeError(
        f"C++ compile error\n\nCommand:\ng++ {path}/c2c6uc.main.cpp -D TORCH_INDUCTOR_CPP_WRAPPER -O3 -o {path}/c2c6uc.so\n\n"
        f"Output:\n{path}/c2c6uc.main.cpp: In function 'void kernel(const int16_t*, int16_t*)':\n"
        f"{path}/c2c6uc.main.cpp:21:48: error: {first_error}\n   21 |  auto tmp3 = max_propagate_nan(tmp1, tmp0);\n"))


def test_cpp_compile_errors_are_told_apart_by_the_compilers_first_error():
    """CPU 1512: a bare 'CppCompileError: C++ compile error' was one bucket for every C++ failure
    (an int8/int16 sign/abs min/max took the identity of a bool view's alias bug)."""
    a = error_signature("CppCompileError", _cpp_error("no matching function for call to "
                                                      "'max_propagate_nan(int&, short int&)'", "/tmp/a/2c"))
    b = error_signature("CppCompileError", _cpp_error("no matching function for call to "
                                                      "'max_propagate_nan(int&, short int&)'", "/tmp/b/9f"))
    c = error_signature("CppCompileError", _cpp_error("'bool_view' was not declared in this scope", "/tmp/a/2c"))
    assert a == b and a != c
    assert a.startswith("CppCompileError: C++ compile error: error: no matching function for call to 'max_propagate_nan")


def test_an_empty_first_line_takes_the_message_from_the_next_lines():
    """CPU 1603: sympy's TypeError puts its message on the lines after "TypeError:", and the
    bucket said only "InductorError: TypeError:", which every empty-headed TypeError shares. The
    first sentence of the next lines names the bug; hints and a lowering's target are as before."""
    msg = ("TypeError: | A Boolean argument can only be used in Eq and Ne; all other | relationals expect real "
           "expressions. | Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace")
    assert error_signature("InductorError", msg) == (
        "InductorError: TypeError: A Boolean argument can only be used in Eq and Ne; all other relationals "
        "expect real expressions")
    assert error_signature("InductorError", "AssertionError: | Set TORCHDYNAMO_VERBOSE=1 for the internal stack "
                                            "trace") == "InductorError: AssertionError:"
    assert error_signature("InductorError", "LoweringException: AssertionError: | target: aten.foo.default | "
                                            "args[0]: TensorBox") == \
        "InductorError: LoweringException: AssertionError: target: aten.foo.default"
