"""Resolve a ``--backend`` value into something ``torch.compile`` accepts.

Contract: ``resolve_backend(spec)`` returns the registered name (a str) or the
imported callable for ``module:attr``; it compiles nothing, and anything wrong
raises ``BackendError`` with a one-line reason.
"""
from __future__ import annotations

import importlib


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
            raise BackendError(f"cannot import backend module {mod_name!r}: {type(e).__name__}: {e}") from None
        obj = mod
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise BackendError(f"module {mod_name!r} has no attribute {attr!r}")
            obj = getattr(obj, part)
        if not callable(obj):
            raise BackendError(f"backend {spec!r} is not callable")
        return obj
    names = registered_backends()
    if spec not in names:
        raise BackendError(f"unknown backend {spec!r}; registered: {', '.join(names)}; "
                           "or give module:function for your own")
    return spec


