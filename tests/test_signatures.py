"""Crash signatures (``oracles.verdict.error_signature`` over ``runtime._error`` messages): one bug,
one bucket, whatever program exposed it; two bugs, two buckets."""
from __future__ import annotations

from fuzzcomp.oracles import error_signature
from fuzzcomp.runtime import _error


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
