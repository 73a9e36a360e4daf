"""Rerunnable table of bad inputs: each row is one command as a user types it, its exit code and
the first line of its message (stderr's last line when it fails, else stdout's first line).

    python benchmarks/bad_inputs.py            # prints a Markdown table, exits 1 if a row breaks the rules

The rules checked per row: the exit code is the one expected from the shared table (0 clean,
1 bug/findings, 2 usage, 3 harness or environment broken) and fuzzcomp itself printed no traceback.
Fixtures (broken repros, damaged campaign folders) are built in a temporary folder; nothing here
compiles with Inductor, so the whole table takes a few minutes of interpreter start-ups.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


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
    return f


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
    ]


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
        for n, (args, want) in enumerate(rows(f, d), 1):
            p = subprocess.run(exe + args, capture_output=True, text=True, cwd=tmp, env=env, timeout=600)
            err = p.stderr.strip().splitlines()
            line = (err[-1] if p.returncode and err else (p.stdout.strip().splitlines() or [""])[0])
            own_trace = "fuzzcomp/cli.py" in p.stderr or "fuzzcomp/commands.py" in p.stderr
            bad = p.returncode != want or own_trace
            broken += bad
            shown = " ".join(a.replace(tmp, "$T") for a in args)
            print(f"| {n} | `fuzzcomp {shown}` | {p.returncode} | {want}{' **BROKEN**' if bad else ''} | "
                  f"{line.replace(tmp, '$T').replace('|', '/')[:150]} |", flush=True)
    print(f"\n{n} rows, {broken} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
