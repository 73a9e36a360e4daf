"""Campaign settings from a file: ``fuzzcomp.toml`` or ``[tool.fuzzcomp]`` in pyproject.toml.

Contract: ``load_settings(path=None)`` returns ``(settings, source)``: a plain
dict of run options with their values checked for type, and the file they came
from (``None`` when there is none). Without ``path`` it looks in the current
folder for ``fuzzcomp.toml`` (the whole file) and then ``pyproject.toml`` (the
``[tool.fuzzcomp]`` table). Any problem (unreadable TOML, unknown key, wrong
type) raises ``ConfigError`` with one line naming the file and the key. The
command line overrides the file; the file overrides the defaults.

Supported keys (the file's names match the command-line flags)::

    jobs = 2                  backend = "inductor"     device = "cpu"
    mode = "default"          seed = 0                 out = "reports/nightly"
    hours = 2.0  / minutes = 30.0  / cases = 1000
    case_timeout = 300.0      # seconds per case (eager + fp64 + compile + compiled runs)
    compile_timeout = 150.0   # seconds per compilation     run_timeout = 60.0  # seconds per run
    minimize = true           minimize_budget = 120.0  minimize_share = 0.25
    max_minimize_per_bucket = 2
    memory_mb = 4096          recycle_every = 200
    [generator]               # features: any GenConfig field, e.g.
    max_stmts = 10            max_calls = 4   p_struct = 0.3   max_rank = 5
    [ops]                     # which ops to draw (like --ops/--families/--exclude)
    only = ["torch.add", "Tensor.mul_"]   families = ["view"]   exclude = ["sort"]

Deliberately not configurable: op *weights* (the registry's weights are part
of the generator version: a seed must mean one program; the ``[ops]`` filter
is recorded with the campaign's generator settings instead) and
``[tolerances]`` (the fp64 rule and the perturbation size decide what is a
bug; loosening them would hide findings silently). Both give a clear error.
"""
from __future__ import annotations

from pathlib import Path

from fuzzcomp.base.config import check_generator, ConfigError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    try:
        import tomli as tomllib  # type: ignore[no-redef]
    except ModuleNotFoundError:
        tomllib = None

_NUM = (int, float)
KEYS: dict[str, tuple] = {
    "jobs": (int,), "backend": (str,), "device": (str,), "mode": (str,), "seed": (int,), "out": (str,),
    "hours": _NUM, "minutes": _NUM, "cases": (int,), "case_timeout": _NUM,
    "compile_timeout": _NUM, "run_timeout": _NUM,
    "minimize": (bool,), "minimize_budget": _NUM, "minimize_share": _NUM,
    "max_minimize_per_bucket": (int,), "memory_mb": (int,), "recycle_every": (int,),
    "generator": (dict,), "feedback": (str,), "novelty": (str,), "ops": (dict,),
}
OPS_KEYS = {"only": "ops", "ops": "ops", "families": "families", "exclude": "exclude"}  # ops: as --ops says it
REFUSED = {
    "tolerances": "tolerances are not configurable: the fp64 rule and the perturbation size decide "
                  "what counts as a bug, and loosening them would hide findings",
}


def _read(path: Path) -> dict:
    if tomllib is None:
        raise ConfigError(f"{path}: reading TOML needs Python 3.11+ or the 'tomli' package")
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None


def check(table: dict, source: str) -> dict:
    for key, value in table.items():
        if key in REFUSED:
            raise ConfigError(f"{source}: [{key}]: {REFUSED[key]}")
        if key not in KEYS:
            raise ConfigError(f"{source}: unknown setting {key!r}; known: {', '.join(sorted(KEYS))}")
        types = KEYS[key]
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            want = " or ".join(t.__name__ for t in types)
            raise ConfigError(f"{source}: {key} must be a {want}, got {value!r}")
    for key in table.get("ops", {}):
        if key not in OPS_KEYS:
            raise ConfigError(f"{source}: [ops]: unknown key {key!r}; known: {', '.join(OPS_KEYS)} "
                              "(op weights are not configurable: they are part of the generator version)")
    if "ops" in table:
        try:
            check_generator(ops_as_generator(table["ops"]))
        except ConfigError as e:
            raise ConfigError(f"{source}: [ops]: {e}") from None
    if "generator" in table:
        try:
            check_generator(table["generator"])
        except ConfigError as e:
            raise ConfigError(f"{source}: {e}") from None
    return dict(table)


def load_settings(path: str | None = None, folder: str = ".") -> tuple[dict, str | None]:
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"--config {path}: no such file")
        data = _read(p)
        if p.name == "pyproject.toml":
            data = data.get("tool", {}).get("fuzzcomp", {})
        return check(data, str(p)), str(p)
    own = Path(folder) / "fuzzcomp.toml"
    if own.is_file():
        return check(_read(own), str(own)), str(own)
    pyproject = Path(folder) / "pyproject.toml"
    if pyproject.is_file():
        table = _read(pyproject).get("tool", {}).get("fuzzcomp")
        if table is not None:
            if not isinstance(table, dict):
                raise ConfigError(f"{pyproject}: [tool.fuzzcomp] must be a table")
            return check(table, f"{pyproject} [tool.fuzzcomp]"), str(pyproject)
    return {}, None


def ops_as_generator(ops_table: dict) -> dict:
    """The [ops] table as GenConfig overrides (ops / families / exclude)."""
    return {OPS_KEYS[k]: list(v) if isinstance(v, (list, tuple)) else v for k, v in ops_table.items()}
