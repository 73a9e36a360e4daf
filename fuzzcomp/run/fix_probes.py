"""Fix probes: a candidate fix of one registered root cause, applied for one probe in a worker.

Contract: ``apply(name)`` returns a context manager that patches the running torch with the fix
named ``name`` (a key of ``PROBES``) and restores every patched attribute on exit. It raises
``FixProbeUnavailable`` where this torch lacks what the fix replaces (private APIs move between
releases). ``NAMES`` lists the probes a registry entry may name (``fix_probe``).

Why: ARCHITECTURE's identity rule is "two findings share a bucket exactly when one fix would
close both". A registry rule (symptom, message, op globs) only approximates that, and a root
cause that comes back through another op or symptom slips past it (H200 seed 1503: #195451 as an
input-shape mutation, the symbolic-one expand through a broadcasting add). A fix probe asks the
question itself: the finding's program is run again with the entry's fix in place, and a bug
that goes away (and still shows without the fix) is that entry's bug.

Each fix is our own few lines, written from the diagnosis in its registry entry; it changes only
what the diagnosis names. A fix that disables a whole pass (``no_noop_removal``) closes every bug
of that pass: entries naming it say so, and where several probes close a finding the caller
treats it as ambiguous.
"""
from __future__ import annotations

import contextlib
import importlib


class FixProbeUnavailable(RuntimeError):
    """The running torch lacks what the fix replaces."""


def _resolve(path: str):
    """(owner object, attribute) for ``package.module:Attr.sub`` (raises FixProbeUnavailable)."""
    mod_name, _, attr_path = path.partition(":")
    try:
        owner = importlib.import_module(mod_name)
    except ImportError as e:
        raise FixProbeUnavailable(f"{mod_name}: {e}") from None
    parts = attr_path.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
        if owner is None:
            raise FixProbeUnavailable(f"{path}: no {part}")
    if not hasattr(owner, parts[-1]):
        raise FixProbeUnavailable(f"{path}: no {parts[-1]}")
    return owner, parts[-1]


@contextlib.contextmanager
def _patched(replacements: dict, optional=()):
    """Set each ``path -> factory(original)`` for the block; restore the originals after. A path
    in ``optional`` that this torch lacks is skipped; any other raises FixProbeUnavailable."""
    saved = []
    try:
        for path, factory in replacements.items():
            try:
                owner, attr = _resolve(path)
            except FixProbeUnavailable:
                if path in optional:
                    continue
                raise
            original = getattr(owner, attr)
            saved.append((owner, attr, original))
            setattr(owner, attr, factory(original))
        yield
    finally:
        for owner, attr, original in reversed(saved):
            setattr(owner, attr, original)


def _expand_reindex_provably_one():
    """expand-symbolic-one-reindex: ``ExpandView.make_reindexer`` zeroes the index of a source
    dim only when its size is literally 1; a symbolic size equal to 1 ((2*s - 1)//s, from
    embedding_bag's offsets or arange(0, n, n)) keeps the index, and reads past the buffer. The
    fix zeroes every dim the size variables prove to be 1."""
    import sympy
    sizevars = importlib.import_module("torch._inductor.sizevars")
    if not hasattr(getattr(sizevars, "SizeVarAllocator", None), "is_size_one_or_false"):
        raise FixProbeUnavailable("torch._inductor.sizevars.SizeVarAllocator.is_size_one_or_false")

    def factory(original):
        def make_reindexer(self):
            from torch._inductor.virtualized import V
            target, actual = self.get_size(), self.data.get_size()
            skip = len(target) - len(actual)
            one = V.graph.sizevars.is_size_one_or_false

            def reindex(index):
                index = list(index[skip:])
                for i in range(len(actual)):
                    if one(actual[i]):
                        index[i] = sympy.S.Zero
                return index
            return reindex
        return make_reindexer
    return _patched({"torch._inductor.ir:ExpandView.make_reindexer": factory})


def _no_noop_removal():
    """The noop-removal family (#195451, #197893, #198131): Inductor's post-grad pass drops a
    clone or copy it takes for a no-op, and the joint-graph pass drops identity arithmetic
    (``x - 0``), and the result is the graph input itself. The probe turns both passes off: it
    closes every bug of them, so it is shared by those entries (CPU 1513 a9cbade6, ``x1 -
    zeros_like(...)``, is the joint-graph form, which the post-grad patch alone left open)."""
    joint = "torch._inductor.fx_passes.joint_graph:remove_no_ops"
    return _patched({"torch._inductor.fx_passes.post_grad:remove_noop_ops": lambda original: lambda graph: None,
                     joint: lambda original: lambda gm, zeros, ones: None}, optional=(joint,))


def _subgraph_no_inherited_donation():
    """cond-scatter-add-grad's nested-region form (what PR #193960 does): a subgraph lowering keeps
    no donated backward buffers, so no subgraph input is lowered as a DonatedBuffer that a later
    kernel may overwrite while backward still reads it."""
    def factory(original):
        def __init__(self, *args, **kwargs):
            original(self, *args, **kwargs)
            self.bw_donated_idxs = None
        return __init__
    return _patched({"torch._inductor.graph:SubgraphLowering.__init__": factory})


def _invoke_subgraph_alias_no_reuse():
    """invoke-subgraph-operand-alias-reuse: an operand that the region's forward returns as one of
    its outputs (a saved activation) is never handed to a later kernel's buffer while that output
    lives. The two nested-region gradient bugs need the same ops; only their fixes tell them apart
    (CPU 1513's judge: each fix closes its own bucket and not the other's)."""
    def factory(original):  # the bound classmethod InvokeSubgraph.create
        def create(subgraph, *operands):
            outs = original(subgraph, *operands)
            from torch._inductor import ir
            from torch._inductor.virtualized import V
            node = next((o.inputs[0] for o in outs if isinstance(o, ir.MultiOutput)), None)
            g = subgraph.graph
            if node is None or g is None:
                return outs
            names = list(g.graph_input_names)
            for out in g.graph_outputs:
                try:
                    name = out.get_name()
                except (AttributeError, NotImplementedError):
                    continue
                if name in names:
                    try:
                        V.graph.never_reuse_buffers.add(node.inputs[names.index(name)].get_name())
                    except (AttributeError, NotImplementedError, IndexError):
                        pass
            return outs
        return staticmethod(create)
    return _patched({"torch._inductor.ir:InvokeSubgraph.create": factory})


PROBES = {
    "expand_reindex_provably_one": _expand_reindex_provably_one,
    "no_noop_removal": _no_noop_removal,
    "subgraph_no_inherited_donation": _subgraph_no_inherited_donation,
    "invoke_subgraph_alias_no_reuse": _invoke_subgraph_alias_no_reuse,
}
NAMES = frozenset(PROBES)
#: the stage each fix patches: it can only close a finding the backend ladder puts there (or one
#: whose stage the ladder could not tell)
STAGES = {"expand_reindex_provably_one": "inductor", "no_noop_removal": "inductor",
          "subgraph_no_inherited_donation": "inductor", "invoke_subgraph_alias_no_reuse": "inductor"}


def could_close(name: str, stage: str) -> bool:
    """Could fix ``name`` close a finding of this stage?"""
    return stage in (STAGES.get(name), "unknown", "runtime")


@contextlib.contextmanager
def _no_compile_caches():
    """A cached graph was compiled without the fix: with the FX-graph or AOT autograd cache on, a
    probe would replay the buggy code and never see the fix (measured: the pytest process, whose
    caches are on, kept the bug under the fix; workers run with both caches off anyway)."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    with contextlib.ExitStack() as stack:
        if hasattr(inductor_config, "fx_graph_cache"):
            stack.enter_context(inductor_config.patch(fx_graph_cache=False))
        if hasattr(functorch_config, "enable_autograd_cache"):
            stack.enter_context(functorch_config.patch(enable_autograd_cache=False))
        yield


@contextlib.contextmanager
def apply(name: str):
    """The context manager of fix ``name`` (KeyError for a name no probe has), compile caches off."""
    probe = PROBES[name]
    with _no_compile_caches(), probe():
        yield
