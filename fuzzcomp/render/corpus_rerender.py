"""Long-form corpus files re-rendered as short repros, keeping their metadata line.

Contract: ``spec_from_long(text, meta)`` reads a long-form repro's program, INPUTS, CALLS and
COMPILE back into the short renderer's ``Spec``; ``rerender(text)`` is the whole corpus file in
the short form with the same ``# fuzzcomp-corpus:`` line, or None where the short form cannot
say the case.
"""
from __future__ import annotations

import ast
import re

from fuzzcomp.findings.corpus import CorpusError, format_meta, parse_meta
from fuzzcomp.base import symptoms
from fuzzcomp.render.repro import headline
from fuzzcomp.render.shortrepro import Spec, render_short


def spec_from_long(text: str, meta: dict):
    """The short renderer's Spec from a long-form repro (its program, INPUTS, CALLS, COMPILE...)."""
    tree = ast.parse(text)
    consts: dict = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name == "COMPILE" and isinstance(node.value, ast.Call):
                consts[name] = {k.arg: ast.literal_eval(k.value) for k in node.value.keywords}
            elif name.isupper():
                try:
                    consts[name] = ast.literal_eval(node.value)
                except ValueError:
                    pass
    lines = text.splitlines()
    end = next(i for i, ln in enumerate(lines) if ln.startswith("# (name, shape"))
    start = max(i for i, ln in enumerate(lines[:end]) if ln.startswith((
        "torch._inductor.config.fallback_random", "torch.set_num_threads", "from ", "import ")))
    fn_src = "\n".join(lines[start + 1:end]).strip() + "\n"
    doc = ast.get_docstring(tree) or ""
    detail = next((ln for ln in doc.splitlines()[2:] if ln.strip()), "")
    detail = headline(detail)
    comp = consts.get("COMPILE", {})
    sym = meta.get("symptom")  # corpus titles have always named the two crash kinds only
    kind = symptoms.title_kind(sym) if sym in symptoms.CRASHES else symptoms.DIVERGENCE
    seed = re.search(r"seed: (\d+)", doc)
    what = symptoms.title_phrase(meta.get("symptom"))
    title = (f"[Fuzzer][{kind}] torch.compile ({comp.get('backend', 'inductor')}, {meta.get('device', 'cpu')}) "
             f"{what}: {detail[:120]}\n\nFound by fuzzcomp"
             + (f" (seed {seed.group(1)})" if seed else "") + f"; bucket {meta.get('bucket')}.")
    return Spec(fn_src=fn_src, inputs=consts.get("INPUTS", []), calls=consts.get("CALLS", []),
                symbols=tuple(consts.get("SYMBOLS", ())), symptom=meta.get("symptom", ""), title=title,
                compile=comp, device=consts.get("DEVICE", "cpu"), requires_grad=consts.get("REQUIRES_GRAD", []),
                floor_eps=consts.get("FLOOR_EPS", 0.0) or 0.0, reduce_n=consts.get("REDUCE_N", 1) or 1,
                state=consts.get("STATE", []))


def rerender(text: str) -> str | None:
    """A long-form corpus file as the short form with the same metadata line (None: cannot)."""
    meta = parse_meta(text)
    if meta is None:
        raise CorpusError("no metadata line")
    short = render_short(spec_from_long(text, meta))
    return None if short is None else format_meta(meta) + "\n" + short
