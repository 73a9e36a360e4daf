"""Rerunnable table of bad inputs: each row is one command as a user types it, its exit code and
the first line of its message (stderr's last line when it fails, else stdout's first line).

    python benchmarks/bad_inputs.py            # prints a Markdown table, exits 1 if a row breaks the rules

The rules checked per row: the exit code is the one expected from the shared table (0 clean,
1 bug/findings, 2 usage, 3 harness or environment broken) and fuzzcomp itself printed no traceback.
Fixtures (broken repros, damaged campaign folders) are built in a temporary folder. A row may
carry options: a signal sent after some seconds (the interrupt rows), and a check of what it
printed or left on disk (a string naming what is wrong, or None). The rows of the user walk at the
edges (recovery, lookup, reports) compile a few cases: the bisect row, the interrupted campaign
and its resume, the minimisation stopped by SIGTERM and the all-hang campaign take a few minutes
between them.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def fixtures(d: Path) -> dict:
    f = {}
    f["syntax"] = d / "syntax_repro.py"
    f["syntax"].write_text("def fn(:\n    pass\n")
    f["nomod"] = d / "nomod_repro.py"
    f["nomod"].write_text("import my_missing_backend\n")
    f["cuda"] = d / "cuda_repro.py"
    f["cuda"].write_text("import torch\nDEVICE = 'cuda'\ntorch.ones(1, device=DEVICE)\nprint('BUG: x')\nraise SystemExit(1)\n")
    f["crash"] = d / "crash_repro.py"
    f["crash"].write_text("raise RuntimeError('harness bug')\n")
    f["bug"] = d / "bug_repro.py"
    f["bug"].write_text("print('BUG: output 0 differs')\nraise SystemExit(1)\n")
    f["ok"] = d / "ok_repro.py"
    f["ok"].write_text("print('OK: compiled matches eager on every call')\n")
    f["exit3"] = d / "exit3_repro.py"
    f["exit3"].write_text("print('BUG: but cannot run')\nraise SystemExit(3)\n")
    camp = d / "camp"
    (camp / "findings" / "0000000001-s1").mkdir(parents=True)
    (camp / "campaign.json").write_text(json.dumps({"config": {"jobs": 1}, "versions": {}}))
    cases = [json.dumps({"t": 1.0 + i, "event": "case", "index": i, "valid": True}) for i in range(3)]
    (camp / "events.jsonl").write_text("\n".join(cases + ["garbage", '{"torn']) + "\n")
    (camp / "findings" / "0000000001-s1" / "finding.json").write_text('{"id": "0000000001-s1", "bu')
    f["damaged"] = camp
    clean = d / "clean"
    clean.mkdir()
    (clean / "campaign.json").write_text(json.dumps({"config": {"jobs": 1}, "versions": {}}))
    (clean / "events.jsonl").write_text("\n".join(cases) + "\n")
    f["clean"] = clean
    f["notcamp"] = d / "empty"
    f["notcamp"].mkdir()
    f["badjson"] = d / "badfinding"
    f["badjson"].mkdir()
    (f["badjson"] / "finding.json").write_text("{ not json")
    f["toml_ops"] = d / "ops.toml"
    f["toml_ops"].write_text('cases = 1\n[ops]\nonly = ["torch.ad"]\n')
    f["toml_weights"] = d / "weights.toml"
    f["toml_weights"].write_text("cases = 1\n[ops]\n'torch.add' = 3\n")
    f["toml_tol"] = d / "tol.toml"
    f["toml_tol"].write_text("cases = 1\n[tolerances]\nrtol = 0.1\n")
    f["file"] = d / "a_file"
    f["file"].write_text("x")
    (d / "mybackend.py").write_text("def backend(gm, example_inputs):\n    return gm\n")
    # the user walk at the edges
    cache = d / "cache" / "fuzzcomp"
    cache.mkdir(parents=True)
    (cache / "campaigns").write_bytes(b"/no/such/caf\xe9\n")  # a path with a byte that is not UTF-8
    generated = REPO / "tests" / "data" / "rerender" / "runtime_crash_6229301901-s0.short.py"
    f["gen_syntax"] = d / "gen_syntax_repro.py"
    f["gen_syntax"].write_text("def fn(:\n" + generated.read_text())
    f["gen_edited"] = d / "gen_edited_repro.py"
    f["gen_edited"].write_text("print('OK: edited by hand')\nraise SystemExit(0)\n" + generated.read_text())
    emptied = d / "emptied"
    emptied.mkdir()
    (emptied / "campaign.json").write_text(json.dumps({"config": {"jobs": 1}, "versions": {}}))
    (emptied / "events.jsonl").write_text("")
    f["emptied"] = emptied
    f["binary"] = d / "blob.bin"
    f["binary"].write_bytes(bytes(range(256)))
    f["toml_ops_key"] = d / "ops_key.toml"
    f["toml_ops_key"].write_text('cases = 1\nbackend = "eager"\nminimize = false\n[ops]\nops = ["torch.add"]\n')
    f["spaced"] = d / "with space"
    f["finding"] = _finding(f["spaced"])
    f["sigterm_finding"] = _finding(d / "sigterm")
    return f


def _finding(root: Path) -> Path:
    """A campaign folder holding one finding (a generated case, a crash verdict) and no repro yet."""
    from fuzzcomp.findings.store import Store
    from fuzzcomp.findings.triage import bucket_of
    from fuzzcomp.generators import generate
    from fuzzcomp.workers.isolation_verdicts import crash_verdict
    root.mkdir(parents=True)
    store = Store(root)
    store.create({"config": {"jobs": 1}, "versions": {}})
    store.event("start", config={})
    v = crash_verdict("died", "worker died with exit code -6")
    return root / "findings" / store.record_finding(generate(2), [v], bucket_of(v), origin="case 2")


def _has(text: str):
    """A check: the output (stdout and stderr) holds ``text``."""
    return lambda p, d: None if text in (p.stdout + p.stderr) else f"no {text!r} in the output"


def _lacks(text: str):
    return lambda p, d: f"{text!r} in the output" if text in (p.stdout + p.stderr) else None


def _registry_unchanged(p, d):
    got = (d / "cache" / "fuzzcomp" / "campaigns").read_bytes()
    return None if got == b"/no/such/caf\xe9\n" else f"the recent-campaigns list changed: {got!r}"


def _resumed_reports(p, d):
    """After the resume: every finding minimised, no harness error, and report.md in a maintainer's words."""
    if "harness errors 0" not in p.stdout or "ImportError" in p.stdout + p.stderr:
        return "a minimisation failed on resume"
    for f in sorted((d / "pc" / "findings").iterdir()):
        status = json.loads((f / "status.json").read_text()) if (f / "status.json").exists() else {}
        if "error" in status:
            return f"{f.name}: {status['error']}"
        if (f / "report.md").exists():
            text = (f / "report.md").read_text()
            title, body = text.splitlines()[0], text
            if "rmse" in title or "..." in title or "Next step:" not in body or body.count("Repro status") != 1:
                return f"{f.name}/report.md: title {title!r} or its status/next step lines"
    return None


def rows(f: dict, d: Path) -> list[tuple[list[str], int]]:
    o = str(d / "out")
    return [
        (["--version"], 0),
        (["frobnicate"], 2),
        (["run"], 2),
        (["run", "--minutes", "-5"], 2),
        (["run", "--minutes", "abc"], 2),
        (["run", "--cases", "0"], 2),
        (["run", "--jobs", "0", "--cases", "1"], 2),
        (["run", "--cases", "1", "--bogus-flag"], 2),
        (["run", "--cases", "1", "--device", "tpu"], 2),
        (["run", "--cases", "1", "--backend", "no_such_backend"], 2),
        (["run", "--cases", "1", "--backend", "no_such_module_xyz:fn"], 2),
        (["run", "--cases", "1", "--backend", "fuzzcomp.planted:no_such_fn"], 2),
        (["run", "--cases", "1", "--backend", "os:getcwd", "--out", o], 2),
        (["run", "--cases", "1", "--backend", "builtins:len", "--out", o], 2),
        (["run", "--cases", "1", "--backend", "mybackend:backend", "--out", o], 2),
        (["run", "--cases", "1", "--ops", "torch.ad", "--out", o], 2),
        (["run", "--cases", "1", "--families", "veiw", "--out", o], 2),
        (["run", "--cases", "1", "--exclude", "nosuchop", "--out", o], 2),
        (["run", "--cases", "1", "--ops", ",", "--out", o], 2),
        (["run", "--cases", "1", "--families", "view,shape,sort,indexing,cast,comparison,copy,creation,inplace,"
          "logical,matmul,nn,out,pointwise,reduction", "--exclude", "view,shape,sort,indexing,cast,comparison,"
          "copy,creation,inplace,logical,matmul,nn,out,pointwise,reduction", "--out", o], 2),
        (["run", "--config", str(f["toml_ops"]), "--out", o], 2),
        (["run", "--config", str(f["toml_weights"]), "--out", o], 2),
        (["run", "--config", str(f["toml_tol"]), "--out", o], 2),
        (["run", "--cases", "1", "--out", str(f["file"])], 2),
        (["run", "--cases", "1", "--junit-xml", "/proc/nope/j.xml", "--out", o], 2),
        (["run", "--resume", str(f["notcamp"])], 2),
        (["run", "--cases", "1", "--device", "cuda", "--out", o], 2),
        (["replay", "/no/such/finding"], 2),
        (["replay", "/no/such/repro.py"], 2),
        (["replay", "1234567890-s7", "--campaign", str(f["notcamp"])], 2),
        (["replay", str(f["badjson"])], 2),
        (["replay", str(f["syntax"])], 3),
        (["replay", str(f["nomod"])], 3),
        (["replay", str(f["cuda"])], 3),
        (["replay", str(f["crash"])], 3),
        (["replay", str(f["exit3"])], 3),
        (["replay", str(f["bug"])], 1),
        (["replay", str(f["ok"])], 0),
        (["show", "1234567890-s7", "--campaign", str(f["notcamp"])], 2),
        (["show", "notaseed"], 2),
        (["minimize", "/no/such/finding"], 2),
        (["minimize", str(f["badjson"])], 2),
        (["report", "/no/such/folder"], 2),
        (["report", str(f["notcamp"])], 2),
        (["report", str(f["damaged"])], 3),
        (["report", str(f["clean"])], 0),
        (["promote", "/no/such/finding"], 2),
        (["promote", str(f["badjson"]), "--corpus", "/no/such/corpus"], 2),
        (["bench", "--seeds", "1", "--json", "/no/such/dir/b.json"], 2),
        (["bench", "--seeds", "1", "--recall", "bogus"], 2),
        (["bisect", "/no/such/repro.py"], 2),
        (["bisect", str(f["syntax"])], 3),
        (["doctor", "--backend", "os:getcwd"], 3),
        # the user walk at the edges: recovery, lookup and reports
        (["run", "--cases", "1", "--out", os.fsdecode(b"caf\xe9")], 2, {"check": _registry_unchanged}),
        (["show", "1234567890-s7"], 2, {"check": _lacks("UnicodeDecodeError")}),
        (["run", "--cases", "1", "--backend", "no_such_backend", "--out", o], 2, {"check": _registry_unchanged}),
        (["minimize", str(f["sigterm_finding"])], 130, {"signal": signal.SIGTERM, "after": 10,
                                                        "check": _lacks("BrokenPipeError")}),
        (["bisect", str(REPO / "corpus" / "compile_crash_inductor_1de55c3f_2e5dcc.py"), "--max-probes", "4"], 1,
         {"check": _has("bisect: not narrowed after 4 probes")}),
        (["run", "--cases", "10", "--jobs", "2", "--backend", "fuzzcomp.planted:perturb_add", "--minimize-budget",
          "5", "--out", str(d / "pc")], 130, {"signal": signal.SIGINT, "when": _minimising}),
        (["run", "--resume", str(d / "pc")], 1, {"check": _resumed_reports}),
        (["run", "--minutes", "0.01", "--backend", "eager", "--out", str(d / "tiny")], 2),
        (["run", "--cases", "1", "--mode", "reduce-overhead", "--backend", "eager", "--out", o], 2),
        (["replay", str(f["gen_syntax"])], 3),
        (["replay", str(f["gen_edited"])], 0, {"check": _has("passes as it stands")}),
        (["report", str(f["emptied"])], 3, {"check": _has("events.jsonl is empty")}),
        (["run", "--cases", "2", "--backend", "builtins:print", "--out", o], 2),
        (["run", "--cases", "12", "--jobs", "2", "--compile-timeout", "1", "--no-minimize", "--out",
          str(d / "hang")], 2, {"check": _has("each of the first 5 cases hung")}),
        (["run", "--resume", str(d / "pc"), "--cases", "11"], 1,
         {"before": lambda d: _stamp_version(d / "pc"), "check": _has("made by fuzzcomp 0.0.1-old")}),
        (["run", "--cases", "1", "--families", "pointwise,viw", "--out", o], 2, {"check": _has("did you mean view")}),
        (["run", "--help"], 0, {"check": _lacks("unary")}),
        (["run", "--config", str(f["toml_ops_key"]), "--out", str(d / "toml")], 0),
        (["replay", str(f["binary"])], 2, {"check": _has("neither a fuzzcomp repro")}),
        (["promote", str(f["finding"]), "--corpus", "/no/such/corpus"], 2, {"check": _has("no such folder")}),
        (["bisect", str(f["finding"])], 2, {"check": _has("fuzzcomp minimize '")}),
    ]


def _stamp_version(folder: Path) -> None:
    """Make the campaign look as if another fuzzcomp version had made it."""
    meta = json.loads((folder / "campaign.json").read_text())
    meta["fuzzcomp"] = "0.0.1-old"
    (folder / "campaign.json").write_text(json.dumps(meta))


def _minimising(d: Path) -> bool:
    """The campaign in $T/pc ran all its cases and minimises: the moment for the Ctrl-C."""
    log = d / "pc" / "events.jsonl"
    text = log.read_text() if log.exists() else ""
    return text.count('"event": "case"') >= 10 and '"minimize-start"' in text


def _run(cmd: list[str], cwd: str, env: dict, opts: dict) -> subprocess.CompletedProcess:
    if not opts.get("signal"):
        return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
    if opts.get("when"):  # poll for the moment (the phase), not a fixed delay: machines differ in speed
        until = time.monotonic() + 300
        while proc.poll() is None and not opts["when"](Path(cwd)) and time.monotonic() < until:
            time.sleep(0.2)
    else:
        time.sleep(opts["after"])
    proc.send_signal(opts["signal"])
    out, err = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def main() -> int:
    broken = 0
    with tempfile.TemporaryDirectory(prefix="fuzzcomp-bad-inputs-") as tmp:
        d = Path(tmp)
        f = fixtures(d)
        env = dict(os.environ, XDG_CACHE_HOME=str(d / "cache"))
        env.pop("PYTHONPATH", None)
        console = Path(sys.executable).parent / "fuzzcomp"
        exe = [str(console)] if console.exists() else [sys.executable, "-m", "fuzzcomp"]
        print("| # | command | exit | expected | first line |\n|---|---|---|---|---|")
        for n, (args, want, *more) in enumerate(rows(f, d), 1):
            opts = more[0] if more else {}
            if opts.get("before"):
                opts["before"](d)
            p = _run(exe + args, tmp, env, opts)
            err = p.stderr.strip().splitlines()
            line = (err[-1] if p.returncode and err else (p.stdout.strip().splitlines() or [""])[0])
            own_trace = "fuzzcomp/cli/parser.py" in p.stderr or "fuzzcomp/cli/commands.py" in p.stderr
            why = opts["check"](p, d) if opts.get("check") else None
            if why:
                line = f"{why}; {line}"
            bad = p.returncode != want or own_trace or bool(why)
            broken += bad
            shown = " ".join(ascii(a)[1:-1].replace(tmp, "$T") for a in args)
            when = f"after {opts['after']} s" if "after" in opts else "once it minimises"
            shown = f"`fuzzcomp {shown}`" + (f" + {signal.Signals(opts['signal']).name} {when}"
                                             if opts.get("signal") else "")
            print(f"| {n} | {shown} | {p.returncode} | {want}{' **BROKEN**' if bad else ''} | "
                  f"{line.replace(tmp, '$T').replace('|', '/')[:150]} |", flush=True)
    print(f"\n{n} rows, {broken} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
