"""The short repro's pruning drops the dead code minimised programs kept: an unread value in a
loop body, a loop variable nobody reads, a statement after a return, an input returned untouched
(kept where an aliasing or mutation check reads it); live code stays."""
from __future__ import annotations

from fuzzcomp.render.prune import prune

SRC = """def fn(v0, x2):
    v1 = torch.sin(v0)
    for v4 in (v0, v0):
        v2 = torch.norm(v1)
        v1 = v1 * 0.5 + torch.tanh(v0) * 0.5
    v3 = torch.cos(v1)
    return (x2, v3)
    return (x2,)
"""


def test_dead_code_goes():
    out = prune(SRC, keep_inputs=False)
    assert "torch.norm" not in out                   # a value nobody reads, inside a loop
    assert "for _ in range(2):" in out and "v4" not in out
    assert out.count("return") == 1 and "return (v3,)" in out
    assert "x2" not in out.split("return")[1]
    compile(out, "<pruned>", "exec")


def test_live_code_and_needed_inputs_stay():
    out = prune(SRC, keep_inputs=True)
    assert "return (x2, v3)" in out                  # an aliasing or mutation check reads x2
    assert "v1 = v1 * 0.5" in out and "v3 = torch.cos(v1)" in out
    used_loop = "def fn(v0):\n    for v4 in (v0, v0):\n        v0 = v0 + v4\n    return (v0,)\n"
    assert prune(used_loop) == used_loop            # the loop variable is read
    mutated = "def fn(v0, x2):\n    x2.add_(1)\n    v1 = torch.sin(v0)\n    return (x2, v1)\n"
    assert "return (x2, v1)" in prune(mutated, keep_inputs=False)  # x2 is written: not untouched


def test_double_return_of_the_minimiser():
    src = "def fn(v0):\n    v8 = torch.sin(v0)\n    return (v8,)\n    return (v8,)\n"
    assert prune(src) == "def fn(v0):\n    v8 = torch.sin(v0)\n    return (v8,)\n"
