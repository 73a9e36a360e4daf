"""Small hand-built IR cases the oracle tests run through the real execute path."""
from fuzzcomp.generators.ir import (Assign, Call, Case, CompileSpec, Input, Lit, Mutate, Program, Ref,
                                    TensorType)

SQ = TensorType(("s0", "s0"), "float32")


def case(program, backend, sizes=((4,), (5,)), dynamic=None):
    calls = tuple(Call(s, 11 + k) for k, s in enumerate(sizes))
    return Case(program, calls, CompileSpec(backend=backend, dynamic=dynamic), 0, "test")


def mul_relu(dtype="float32"):
    """w = relu(x * y) + y; returns (w, x): one input returned as is."""
    t = TensorType(("s0", "s0"), dtype)
    return Program((Input("x", t), Input("y", t)),
                   (Assign("z", "mul", "torch.mul({}, {})", (Ref("x"), Ref("y")), t),
                    Assign("r", "relu", "torch.relu({})", (Ref("z"),), t),
                    Assign("w", "add", "torch.add({}, {})", (Ref("r"), Ref("y")), t)),
                   ("w", "x"), ("s0",))


def mutate_input(layout="transposed"):
    """x.mul_(2) on an input with the given layout, then return x + 1."""
    return Program((Input("x", SQ, layout),),
                   (Mutate("x", "mul_", "{}.mul_({})", (Ref("x"), Lit(2.0))),
                    Assign("y", "add", "torch.add({}, {})", (Ref("x"), Lit(1.0)), SQ)),
                   ("y",), ("s0",))


def transpose_out():
    """Returns a view of its input: the output aliases x."""
    return Program((Input("x", SQ, "transposed"),),
                   (Assign("v", "t", "{}.t()", (Ref("x"),), SQ),), ("v",), ("s0",))


def inplace_on_saved(requires_grad=True):
    """y = exp(x); y.add_(1): exp saved its output, so eager's backward refuses."""
    return Program((Input("x", SQ, "contiguous", requires_grad),),
                   (Assign("y", "exp", "torch.exp({})", (Ref("x"),), SQ),
                    Mutate("y", "add_", "{}.add_({})", (Ref("y"), Lit(1.0)))),
                   ("y",), ("s0",))


def unused_input():
    """y never reaches the output: its grad is None in eager."""
    return Program((Input("x", SQ), Input("y", SQ)),
                   (Assign("z", "sin", "torch.sin({})", (Ref("x"),), SQ),), ("z",), ("s0",))
