"""Resolve a ``--backend`` value into something ``torch.compile`` accepts.

Contract: ``resolve_backend(spec)`` returns the registered name (a str) or the
imported callable for ``module:attr``; it compiles nothing, and anything wrong
raises ``BackendError`` with a one-line reason. A ``module:attr`` that is not
shaped like a backend (it must take ``(graph_module, example_inputs)``) is
refused here, before a campaign starts, so that ``--backend os:getcwd`` is a
usage error rather than a campaign full of "compile crashes". A module that
sits in the current folder but is not importable gets a PYTHONPATH hint.
"""
from __future__ import annotations

import importlib
import inspect
from pathlib import Path


class BackendError(ValueError):
    pass


def registered_backends() -> list[str]:
    import torch._dynamo
    try:
        return sorted(torch._dynamo.list_backends(exclude_tags=()))
    except TypeError:  # older signature
        return sorted(torch._dynamo.list_backends())


def resolve_backend(spec: str):
    if ":" in spec:
        mod_name, _, attr = spec.partition(":")
        try:
            mod = importlib.import_module(mod_name)
        except Exception as e:  # ImportError, or the module itself failing
            raise BackendError(f"cannot import backend module {mod_name!r}: {type(e).__name__}: {e}"
                               + _pythonpath_hint(mod_name, e)) from None
        obj = mod
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise BackendError(f"module {mod_name!r} has no attribute {attr!r}")
            obj = getattr(obj, part)
        if not callable(obj):
            raise BackendError(f"backend {spec!r} is not callable")
        check_signature(spec, obj)
        return obj
    names = registered_backends()
    if spec not in names:
        raise BackendError(f"unknown backend {spec!r}; registered: {', '.join(names)}; "
                           "or give module:function for your own")
    return spec




def _pythonpath_hint(mod_name: str, error: Exception) -> str:
    top = mod_name.split(".")[0]
    if not isinstance(error, ModuleNotFoundError) or error.name not in (top, mod_name):
        return ""
    here = Path.cwd()
    if (here / f"{top}.py").is_file() or (here / top / "__init__.py").is_file():
        return (f" ({top} is in the current folder, which the `fuzzcomp` command does not import from: "
                f"run it as PYTHONPATH=. fuzzcomp ...)")
    return ""


def check_signature(spec: str, obj) -> None:
    """A torch.compile backend is called as backend(graph_module, example_inputs)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):  # some builtins and C callables have none: let them through
        return
    try:
        sig.bind(object(), [])
    except TypeError:
        raise BackendError(f"{spec!r} is not a torch.compile backend: it must take (graph_module, "
                           f"example_inputs), and its signature is {sig}") from None
