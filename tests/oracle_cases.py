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


def saved_overwritten_across_break():
    """v = sqrt(|x| + 0.25) is saved for backward, overwritten by v.copy_(x), and live across a
    graph break (read after it only through a comparison): eager's loss over the outputs never
    reaches sqrt, a loss over every intermediate does."""
    b = TensorType(("s0", "s0"), "bool")
    return Program((Input("x", SQ),),
                   (Assign("v", "torch.sqrt", "torch.sqrt(torch.abs({}) + 0.25)", (Ref("x"),), SQ),
                    Mutate("v", "Tensor.copy_", "{}.copy_({})", (Ref("v"), Ref("x"))),
                    Assign("g", "graph_break", "(torch._dynamo.graph_break(), {})[1]", (Ref("x"),), SQ),
                    Assign("y", "torch.mul", "torch.mul({}, 2.0)", (Ref("g"),), SQ),
                    Assign("t", "torch.gt", "torch.gt({}, 0)", (Ref("v"),), b)),
                   ("y", "t"), ("s0",))


def write_row_of(layout="expanded"):
    """x[0].mul_(2.0) on an input with the given layout, then x + 1: on an expanded input the
    row is every row (its elements overlap in memory)."""
    return Program((Input("x", SQ, layout),),
                   (Mutate("x", "Tensor.mul_", "{}[0].mul_({})", (Ref("x"), Lit(2.0))),
                    Assign("y", "torch.add", "torch.add({}, 1.0)", (Ref("x"),), SQ)),
                   ("y",), ("s0",))


def inplace_error_backend(gm, example_inputs):
    """A planted fault: every compile fails with autograd's in-place message."""
    raise RuntimeError("one of the variables needed for gradient computation has been modified by an "
                       "inplace operation: [torch.FloatTensor [4, 4]], which is output 0 of MulBackward0")
