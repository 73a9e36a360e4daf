"""Verdicts: what an oracle concluded about one case.

Contract: a ``Verdict`` is a frozen record naming the symptom, the compiler
stage it is attributed to, the oracle that raised it, a one-line detail and a
normalised ``signature`` (error type and message with numbers and addresses
masked) that triage uses for bucketing. ``SYMPTOMS`` and ``STAGES`` are the
closed vocabularies.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SYMPTOMS = ("numeric", "gradient", "mutation", "aliasing", "recompile", "compile-crash",
            "runtime-crash", "error-parity", "hang", "segfault")
# the backend ladder's rungs name the stage: capture (eager backend), autograd (aot_eager),
# decomposition (aot_eager_decomp_partition), inductor, cudagraphs (inductor with CUDA graphs on,
# when the same inductor without them is clean), backend (a custom backend past aot_eager);
# cache: only a second process served from the FX-graph/AOTAutograd caches shows it
STAGES = ("capture", "autograd", "decomposition", "inductor", "cudagraphs", "runtime", "backend",
          "cache", "unknown")

# Severity order used to pick a case's primary verdict.
SEVERITY = {s: i for i, s in enumerate(("segfault", "hang", "compile-crash", "runtime-crash",
                                        "numeric", "mutation", "gradient", "aliasing",
                                        "recompile", "error-parity"))}


@dataclass(frozen=True)
class Verdict:
    symptom: str
    stage: str
    oracle: str
    detail: str
    call: int = -1
    label: str = ""
    signature: str = ""

    def __post_init__(self):
        if self.symptom not in SYMPTOMS:
            raise ValueError(f"unknown symptom {self.symptom!r}")
        if self.stage not in STAGES:
            raise ValueError(f"unknown stage {self.stage!r}")


_INNER = re.compile(r"raised:\s*(?:\|\s*)?([A-Za-z_][\w.]*):\s*(.*)")


# sympy classes name one value's form, not the bug: a guard that folded to True and one that
# stayed symbolic fail the same way ("BooleanTrue" vs "StrictGreaterThan")
_SYMPY = re.compile(r"\b(?:BooleanTrue|BooleanFalse|BooleanAtom|StrictGreaterThan|StrictLessThan|"
                    r"GreaterThan|LessThan|Equality|Unequality|Relational|Integer|NegativeOne|"
                    r"IntegerConstant|Symbol|FloorDiv|CeilDiv|ModularIndexing|PythonMod|"
                    r"FloatTrueDiv|IntTrueDiv|TruncToInt|Piecewise|Rational)\b")
# a dtype names the program's choice, not the bug: int8/int16/uint8, tl.int1, i8/u16, fp16/bf16
_DTYPES = [(re.compile(r"\b(?:torch\.|tl\.)?u?int(?:1|8|16|32|64)\b"), "intN"),
           (re.compile(r"\b[iu](?:1|8|16|32|64)\b"), "intN"),
           (re.compile(r"\b(?:torch\.|tl\.)?(?:b?float(?:8\w*|16|32|64)|half|double|bfloat16)\b"),
            "floatN"),
           (re.compile(r"\b(?:fp|bf)(?:8|16|32|64)\b"), "floatN")]
# generated names: graph placeholders, Inductor buffers/temporaries/pointers, symbolic sizes,
# the program's own variables (v12, x0)
_GENERATED = [(re.compile(r"\b(?:arg\d+_\d+|primals_\d+|tangents_\d+|L_\w+_)\b"), "ARG"),
              (re.compile(r"\b(?:buf|tmp|in_ptr|out_ptr|in_out_ptr|ks|arg|v|x|y|t|acc)\d+\b"), "NAME"),
              (re.compile(r"\b[sud]\d+\b"), "SYM")]
# clauses some message variants carry and others don't: hints, logging advice, fallbacks
_OPTIONAL = re.compile(r"(?:\s*[.;,]?\s*(?:Hint:|Set TORCH_LOGS|Set TORCHDYNAMO_VERBOSE|You can suppress "
                       r"this exception|For more information|Developer debug context:|While executing|"
                       r"Original traceback:|from user code:|Explanation:|\(this may be|"
                       r"To avoid this|Please report).*)$", re.IGNORECASE)


def normalise_message(text: str) -> str:
    """A message with everything that names the program rather than the bug masked."""
    text = _OPTIONAL.sub("", text)
    text = re.sub(r"0x[0-9a-fA-F]+", "ADDR", text)
    text = re.sub(r"/[^\s:'\"]+", "PATH", text)
    # a tensor's type and shape in autograd's messages ("[torch.cuda.HalfTensor [3, 4]]",
    # "[CUDABFloat16Type [2]]") and the graph's placeholder sets name the program, not the bug
    text = re.sub(r"\[(?:torch\.[\w.]*Tensor|\w+Type)\s*\[[^\]]*\]\]", "[TENSOR]", text)
    # autograd names the op that made the overwritten tensor only when it has one: the same
    # version-counter failure, whichever op of the program produced the tensor
    # ... but an output of the compiled graph is a cause of its own (the partitioner saved an
    # output the caller then wrote, or Inductor returned the saved tensor as an output): CPU 1508
    # and 1509 held those and an input rematerialised after its write in one bucket
    text = re.sub(r",\s*which is output \d+ of CompiledFunction\w*,", ", a graph output,", text)
    text = re.sub(r",\s*which is output \d+ of [\w:]+,", "", text)
    text = re.sub(r"\{[^{}]*\}", "{...}", text)
    for rx, sub in _DTYPES:
        text = rx.sub(sub, text)
    text = _SYMPY.sub("SYMPY", text)
    for rx, sub in _GENERATED:
        text = rx.sub(sub, text)
    text = re.sub(r"(?<![A-Za-z])-?\d+(?:\.\d+)?(?:e-?\d+)?", "N", text)
    text = re.sub(r"\d+", "N", text)
    text = re.sub(r"(?<=[A-Za-z_])_N\b", "", text)  # generated node names: permute_1, copy__2
    text = re.sub(r"\bN(?:\s*,\s*N)+\b", "N", text)  # a list of sizes, however long
    return re.sub(r"\s+", " ", text).strip().rstrip(".")


def error_signature(type_name: str, message: str) -> str:
    """``Type: message`` with the wrapped inner error unwrapped and volatile parts masked."""
    m = _INNER.search(message)
    if m:
        type_name, message = m.group(1).split(".")[-1], m.group(2)
    parts = message.split(" | ")
    text, keep = parts[0], 120
    if re.search(r"\bat \d+:\d+:$", text) and len(parts) > 1:  # Triton compile error: add its cause
        text = f"{text} {parts[1]}"
    elif text.endswith("when making fake tensor call") and len(parts) > 1 and parts[1].startswith("got "):
        # Dynamo's wrapper is one message for every error fake-tensor propagation meets (CPU 1510:
        # a fake view replay and a cond's branch strides in one bucket): the wrapped error names
        # the bug; the wrapper stays in front, so the registry's rules on it still read it
        inner = re.match(r"got ([\w.]+)\((['\"])(.*?)(?:\2\))?$", parts[1].strip())
        if inner:
            text, keep = f"{text}: {inner.group(1).split('.')[-1]}: {inner.group(3)}", 120 + len(text)
    elif text.endswith("C++ compile error") and len(parts) > 1 and parts[1].startswith("error: "):
        # one message for every C++ compile failure (CPU 1512: an int8/int16 sign/abs min/max took
        # the identity of a bool view's alias): the compiler's first error names the bug
        text, keep = f"{text}: {parts[1]}", 120 + len(text)
    elif re.search(r"Error:\s*$", text):
        # an empty message says nothing of the bug: a lowering's target does (CPU 1506: one
        # bucket held the empty assertions of max_pool2d's backward and of invoke_subgraph)
        target = next((p.strip() for p in parts[1:] if p.strip().startswith("target:")), None)
        if target:
            text = f"{text.rstrip()} {target}"
        else:
            # the message starts on the next lines (CPU 1603: sympy's "TypeError:" then "A Boolean
            # argument can only be used in Eq and Ne; all other | relationals expect real
            # expressions."): its first sentence, up to three lines, names the bug
            said = []
            for p in parts[1:4]:
                said.append(p.strip())
                if p.rstrip().endswith("."):
                    break
            cont = " ".join(said)
            if normalise_message(cont):  # not a hint alone
                text = f"{text.rstrip()} {cont}"
    return f"{type_name}: {normalise_message(text)[:keep]}"


def primary(verdicts: list[Verdict]) -> Verdict:
    # a torch global (default dtype, deterministic mode, grad mode) left wrong explains the
    # values computed after it: one fix closes both, so the global is the case's identity
    globals_ = [v for v in verdicts if v.label.startswith("state torch globals")]
    return min(globals_ or verdicts, key=lambda v: (SEVERITY[v.symptom], v.call))
