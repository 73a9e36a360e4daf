"""Which compiler stage an error came from, read off its type and message.

Contract: ``stage_of_error(type_name, message, backend)`` returns one of
``verdict.STAGES``. It is a first guess from the exception alone; the backend
ladder (re-running on eager, aot_eager, ...) overrides it when it has run.
"""
from __future__ import annotations

_CAPTURE = ("Unsupported", "InternalTorchDynamoError", "TorchRuntimeError", "UserError",
            "RestartAnalysis", "GuardOnDataDependentSymNode", "ObservedException")
_INDUCTOR = ("LoweringException", "CppCompileError", "InductorError", "CompilationError",
             "MissingOperatorWithoutDecomp", "MissingOperatorWithDecomp")


def stage_of_error(type_name: str, message: str, backend: str) -> str:
    if type_name in _CAPTURE:
        return "capture"
    if any(t in message for t in _INDUCTOR) or type_name in _INDUCTOR:
        return "inductor"
    if type_name == "BackendCompilerFailed":
        if "aot_autograd" in message or "functionaliz" in message.lower():
            return "autograd"
        return "inductor" if backend == "inductor" else "backend"
    return "runtime"


def is_compile_time(type_name: str, message: str) -> bool:
    """True for errors raised while compiling rather than while running compiled code."""
    return type_name in _CAPTURE or type_name in _INDUCTOR or type_name == "BackendCompilerFailed" \
        or any(t in message for t in _INDUCTOR)
