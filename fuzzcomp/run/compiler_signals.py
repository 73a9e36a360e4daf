"""Compiler signals of one case: which compiler paths it exercised, read from what torch counts.

Contract: ``install()`` (once per worker process, idempotent) hooks three cheap
observation points where this torch has them; ``begin()`` starts a case;
``collect()`` returns the case's signals as a sorted list of short strings.
Nothing here ever raises into a case: a hook that fails is dropped for the
rest of the process, and a torch without some hook simply yields fewer
signals. Signals are coarse on purpose (names normalised, counts bucketed on a
log2 scale) so "new signal" means "a compiler path not yet exercised", not
"another number".

What is read (every source is detected at run time; torch 2.11 to 2.13):
- ``torch._dynamo.utils.counters`` (the compiled pass clears it first):
  Dynamo ``stats``/``frames``, graph-break and unimplemented reasons (first
  line, names and numbers stripped, plus the graph-break id ``gbNNNN`` when
  the message links one), AOTAutograd, Inductor (pattern-matcher counts,
  extern calls, named passes such as ``removed_pointless_view_pair``),
  ``aten_mm_info`` (op names, sizes dropped);
- guard kinds: the leaf-guard and accessor class names of every guard tree
  Dynamo builds (``CheckFunctionManager``), e.g. ``guard:TENSOR_MATCH``;
- Inductor's pattern-matcher hits by handler (``PatternEntry.apply``);
- Inductor's output code (``GraphLowering.save_output_code``): kernel kinds
  with their fused-op count, each lowered op (with, on CPU, whether its
  kernel's loops are vectorised), extern kernels, aten fallbacks,
  templates, and per CPU kernel whether its loops are vectorised (and for
  which element types) or scalar, reductions, masked tails;
- ``torch._inductor.metrics`` counters that are non-zero.

Cost: a few regex passes over the generated source and a walk of the guard
trees: milliseconds against a compile of seconds.
"""
from __future__ import annotations

import math
import re
import time

_state: dict = {"installed": False, "codes": [], "guards": set(), "patterns": set(), "broken": set()}

#: counters that say nothing about compiler paths (caches, bookkeeping)
_NOISE = re.compile(r"cache|bundler|lookup_write|async_compile|^resumes$|^ok$|^total$")
_GB_ID = re.compile(r"\b(gb\d{4})\b")
_QUOTED = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"")
_NUM = re.compile(r"\d+")
_KERNEL_DEF = re.compile(r"^(cpp_fused|cpp_kernel|triton_(?:poi|red|per|tem|for|mm|bmm)?_?fused|triton_\w+?_fused)"
                         r"_(\w*?)_\d+ = async_compile\.(\w+)\(", re.M)
_TRITON_DEF = re.compile(r"^def (triton_(?:poi|red|per|tem|for)\w*?)_fused_(\w*?)_\d+\(", re.M)
_EXTERN = re.compile(r"\bextern_kernels\.(\w+)\(")
_FALLBACK = re.compile(r"\b(?:torch\.ops\.)?(aten|prims|_quantized|inductor_ops)\.(\w+)\.(\w+)\(")
_TEMPLATE = re.compile(r"\b(cpp_template|triton_tem|cutlass|ck_)\w*")
_VEC_TYPE = re.compile(r"Vectorized<([\w:]+)>")
_AOT_ID = re.compile(r"# AOT ID: \['\d+_(\w+)'\]")
_KNOWN_OPS = None


def _norm(text: str, limit: int = 80) -> str:
    """A reason's identity: its first line, quoted names and numbers replaced."""
    text = str(text).strip()
    gb = _GB_ID.search(text)
    first = text.splitlines()[0] if text else ""
    first = _NUM.sub("N", _QUOTED.sub("_", first)).strip()[:limit]
    return f"{first} [{gb.group(1)}]" if gb else first


def _bucket(n) -> str:
    """AFL-style hit-count bucket: 1, 2, 3, 4-7, 8-15, ..."""
    n = int(n)
    if n <= 3:
        return str(n)
    lo = 1 << int(math.log2(n))
    return f"{lo}+"


# ---- hooks (installed once per process) -------------------------------------------------
def install() -> None:
    if _state["installed"]:
        return
    _state["installed"] = True
    for hook in (_hook_output_code, _hook_guards, _hook_patterns):
        try:
            hook()
        except Exception:  # this torch lacks the point: fewer signals, never a broken worker
            _state["broken"].add(hook.__name__)


def _hook_output_code() -> None:
    from torch._inductor.graph import GraphLowering
    if not hasattr(GraphLowering, "save_output_code"):
        raise AttributeError("no GraphLowering.save_output_code")
    previous = GraphLowering.save_output_code

    def save(code: str) -> None:
        if len(_state["codes"]) < 64:
            _state["codes"].append(code)
        if previous is not None:
            previous(code)
    GraphLowering.save_output_code = staticmethod(save)


def _walk_guards(manager, out: set, depth: int = 0) -> None:
    if depth > 40:
        return
    for g in manager.get_leaf_guards():
        out.add("guard:" + type(g).__name__)
    for g in getattr(manager, "get_epilogue_lambda_guards", lambda: [])():
        out.add("guard:" + type(g).__name__)
    accessors = getattr(manager, "get_accessors", lambda: [])()
    for a in accessors:
        out.add("guard-access:" + type(a).__name__.replace("GuardAccessor", ""))
    for child in manager.get_child_managers():
        _walk_guards(child, out, depth + 1)


def _hook_guards() -> None:
    from torch._dynamo import guards
    cls = guards.CheckFunctionManager
    original = cls.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if "guards" in _state["broken"]:
            return
        try:
            _walk_guards(self.guard_manager.root, _state["guards"])
        except Exception:
            _state["broken"].add("guards")
    cls.__init__ = init


def _hook_patterns() -> None:
    from torch._inductor import pattern_matcher as pm
    for name in ("LoweringPatternEntry", "GraphPatternEntry", "ReplacementPatternEntry"):
        cls = getattr(pm, name, None)
        if cls is None or "apply" not in cls.__dict__:
            continue
        cls.apply = _wrap_apply(cls.__dict__["apply"], name.replace("PatternEntry", "").lower())


def _wrap_apply(original, kind: str):
    def apply(self, match, graph, node):
        try:
            handler = getattr(self, "handler", None)
            what = getattr(handler, "__name__", None) or str(getattr(node, "target", "?"))
            _state["patterns"].add(f"pattern:{kind}:{_NUM.sub('N', str(what))[:60]}")
        except Exception:
            pass
        return original(self, match, graph, node)
    return apply


# ---- one case ------------------------------------------------------------------------------
def begin() -> None:
    """Forget the previous case's code, guards, pattern hits and Inductor metrics."""
    _state["codes"].clear()
    _state["guards"].clear()
    _state["patterns"].clear()
    try:
        from torch._inductor import metrics
        metrics.reset()
    except Exception:
        pass


def collect() -> list[str]:
    """This case's signals (sorted, de-duplicated). Call after the compiled pass."""
    out: set[str] = set()
    for reader in (_from_counters, _from_metrics):
        try:
            reader(out)
        except Exception:
            out.add(f"signals:unreadable:{reader.__name__}")
    out |= _state["guards"] | _state["patterns"]
    for code in _state["codes"]:
        try:
            out |= code_signals(code)
        except Exception:
            out.add("signals:unreadable:code")
    return sorted(out)


def _from_counters(out: set) -> None:
    from torch._dynamo.utils import counters
    for group, table in list(counters.items()):
        for key, value in list(table.items()):
            if not value:
                continue
            if group in ("graph_break", "unimplemented"):
                out.add(f"{group}:{_norm(key)}")
            elif group == "aten_mm_info":
                out.add("mm:" + str(key).split("_")[0])
            elif group == "stats":
                out.add(f"dynamo:{key}:{_bucket(value)}")
            elif group == "resumes":
                out.add("dynamo:resume")
            elif not _NOISE.search(str(key)):
                out.add(f"{group}:{_NUM.sub('N', str(key))[:60]}:{_bucket(value)}")


def _from_metrics(out: set) -> None:
    from torch._inductor import metrics
    for name in ("generated_cpp_vec_kernel_count", "cpp_to_dtype_count", "parallel_reduction_count",
                 "num_loop_reordering", "codegen_nested_reduction", "codegen_mix_order_reduction",
                 "num_comprehensive_padding", "num_matches_for_scatter_upon_const_tensor",
                 "num_auto_chunking", "rejected_mix_order_reduction_fusion"):
        value = getattr(metrics, name, None)
        if isinstance(value, (int, float)) and value > 0:
            out.add(f"metric:{name}")
    inner = getattr(metrics, "cpp_outer_loop_fused_inner_counts", None)
    if inner:
        out.add("metric:cpp_outer_loop_fused")


def _fused_ops(names: str) -> list[str]:
    """``_to_copy_add_mul_relu_sum`` -> the op names a fused kernel was named after (best effort:
    op names contain underscores, so unknown runs are kept as one piece)."""
    global _KNOWN_OPS
    if _KNOWN_OPS is None:
        try:
            import torch
            _KNOWN_OPS = {n for n in dir(torch.ops.aten)}
        except Exception:
            _KNOWN_OPS = set()
    parts, ops, i = names.split("_"), [], 0
    while i < len(parts):
        for j in range(min(len(parts), i + 4), i, -1):  # longest known op name first
            cand = "_".join(parts[i:j])
            if cand in _KNOWN_OPS or j == i + 1:
                if cand:
                    ops.append(cand)
                i = j
                break
    return ops


def code_signals(code: str) -> set[str]:
    """Signals from one Inductor output module (the Python wrapper with its kernels inlined)."""
    out: set[str] = set()
    aot = _AOT_ID.search(code)
    if aot:
        out.add("aot:" + aot.group(1))
    kernels = [(m.group(1), m.group(2), m.start()) for m in _KERNEL_DEF.finditer(code)]
    kernels += [(m.group(1), m.group(2), m.start()) for m in _TRITON_DEF.finditer(code)]
    starts = sorted(k[2] for k in kernels) + [len(code)]
    for kind, names, start in kernels:
        # the fused op set itself is nearly unique per program (a new "signal" every case, which
        # would keep every program); its size and each op's lowering are the reusable paths
        ops = sorted(set(_fused_ops(names)))
        out.add(f"kernel:{kind}:ops:{_bucket(len(ops))}")
        loop = ""
        if kind.startswith("cpp"):
            cpp = _cpp_loop_signals(code[start:starts[starts.index(start) + 1]])
            out |= cpp
            loop = ":vec" if "cpp:vec" in cpp else ":scalar"
        out.update(f"lowered:{op}{loop}" for op in ops)
    out.update(f"extern:{m.group(1)}" for m in _EXTERN.finditer(code))
    for m in _FALLBACK.finditer(code):
        if m.group(2) not in ("empty_strided", "as_strided"):
            out.add(f"fallback:{m.group(1)}.{m.group(2)}")
    out.update(f"template:{m.group(1)}" for m in _TEMPLATE.finditer(code))
    return out


def _cpp_loop_signals(body: str) -> set[str]:
    out = set()
    vec_types = set(_VEC_TYPE.findall(body))
    out.add("cpp:vec" if vec_types else "cpp:scalar")
    out.update(f"cpp:vec:{t.split('::')[-1]}" for t in vec_types)
    if "tmp_acc" in body:
        out.add("cpp:reduction" + (":vec" if "tmp_acc0_vec" in body else ":scalar"))
    if "welford" in body.lower():
        out.add("cpp:welford")
    if "C10_UNLIKELY" in body:
        out.add("cpp:masked-tail")
    if "#pragma omp" in body:
        out.add("cpp:omp")
    if "VecMask" in body or "masked(" in body:
        out.add("cpp:masked-load")
    if "convert<" in body:
        out.add("cpp:convert")
    return out


def checked(check, case, *args):
    """``check(case)`` with the case's signals added to ``obs.stats["signals"]`` (only when the
    compiled pass ran: an eager-invalid case never compiles, and the counters still hold the
    previous case's)."""
    install()
    begin()
    obs, verdicts = check(case, *args)
    if obs.eager_valid:
        t0 = time.perf_counter()
        obs.stats["signals"] = collect()
        obs.timings["signals"] = time.perf_counter() - t0  # the case event shows what this costs
    return obs, verdicts
