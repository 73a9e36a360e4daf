"""Symbolic sizes: dims are ints or small arithmetic expressions over symbols.

Contract: a Dim is an ``int`` or a string such as ``"s0"``, ``"s0*s1"`` or
``"((s1)+(s1))"``. Two dims are statically equal when their text is equal.
``dim_value`` evaluates a dim for concrete symbol values with a tiny AST walker
(no ``eval``); ``broadcast`` applies PyTorch's broadcasting rule statically.
"""
from __future__ import annotations

import ast
import operator
from typing import Mapping

from .ir import Dim

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv}


def dim_value(dim: Dim, sizes: Mapping[str, int]) -> int:
    if isinstance(dim, int):
        return dim
    return _eval(ast.parse(dim, mode="eval").body, sizes)


def _eval(node: ast.AST, sizes: Mapping[str, int]) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        return sizes[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, sizes)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, sizes), _eval(node.right, sizes))
    raise ValueError(f"unsupported dim expression: {ast.dump(node)}")


def add(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return f"({a})+({b})"


def mul(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if a == 1:
        return b
    if b == 1:
        return a
    return f"({a})*({b})"


def ceil_div(a: Dim, k: int) -> Dim:
    if isinstance(a, int):
        return -(-a // k)
    return f"(({a})+{k - 1})//{k}"


def numel(shape: tuple[Dim, ...]) -> Dim:
    out: Dim = 1
    for d in shape:
        out = mul(out, d)
    return out


def broadcast(a: tuple[Dim, ...], b: tuple[Dim, ...]) -> tuple[Dim, ...] | None:
    """The broadcast shape, or None when equality can't be proven statically."""
    out: list[Dim] = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(reversed(out))
