"""Bad input gets one line on stderr and exit code 2, never a traceback."""
from __future__ import annotations

import pytest


def _one_line_error(p):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fuzzcomp: error:"), p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("args", [
    ["run", "--minutes", "-5"],
    ["run", "--minutes", "abc"],
    ["run", "--cases", "0"],
    ["run", "--jobs", "0", "--cases", "1"],
    ["run"],
    ["run", "--cases", "1", "--backend", "no_such_backend"],
    ["run", "--cases", "1", "--backend", "no_such_module_xyz:fn"],
    ["run", "--cases", "1", "--backend", "fuzzcomp.planted:no_such_fn"],
    ["run", "--cases", "1", "--device", "tpu"],
    ["run", "--cases", "1", "--bogus-flag"],
    ["replay", "/no/such/finding"],
    ["replay", "/no/such/repro.py"],
    ["minimize", "/no/such/finding"],
    ["report", "/no/such/folder"],
    ["frobnicate"],
])
def test_bad_values_exit_2_with_one_line(cli, args):
    _one_line_error(cli(*args))


def test_cuda_without_gpu_is_a_clear_error(cli):
    import torch
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the error path cannot be exercised here")
    _one_line_error(cli("run", "--cases", "1", "--device", "cuda"))


def test_broken_finding_file_is_a_clear_error(cli, tmp_path):
    d = tmp_path / "f"
    d.mkdir()
    (d / "finding.json").write_text("{ not json")
    _one_line_error(cli("replay", str(d)))
    _one_line_error(cli("minimize", str(d)))


def test_report_on_non_campaign_folder(cli, tmp_path):
    _one_line_error(cli("report", str(tmp_path)))


def test_existing_campaign_needs_resume(cli, tmp_path):
    (tmp_path / "campaign.json").write_text("{}")
    _one_line_error(cli("run", "--cases", "1", "--out", str(tmp_path)))


def test_help_lists_subcommands(cli):
    p = cli("--help")
    assert p.returncode == 0
    for sub in ("run", "replay", "minimize", "report", "show"):
        assert sub in p.stdout
    p = cli("run", "--help")
    for flag in ("--hours", "--minutes", "--cases", "--seed", "--jobs", "--device", "--backend", "--out"):
        assert flag in p.stdout


def test_show_prints_program_and_schedule(cli):
    p = cli("show", "3")
    assert p.returncode == 0 and "def fn(" in p.stdout and "call 0:" in p.stdout


def test_show_names_an_aliased_inputs_base_and_view():
    """CPU 1513 9ccc943b: x2, a transposed view of x0, was shown as a plain contiguous input, and
    the judge had to read finding.json to see the alias its bug needs."""
    from fuzzcomp.cli.commands import _input_kind
    from fuzzcomp.generators.ir import Input, TensorType
    t = TensorType(("s0", 3), "float32")
    assert _input_kind(Input("x2", t, kind="alias", alias_of="x0", view="transposed")) == \
        "transposed view of x0, shape ('s0', 3) float32"
    assert "non-leaf copy" in _input_kind(Input("x3", t, kind="alias", alias_of="x0", view="nonleaf:offset"))
    assert _input_kind(Input("x0", t, requires_grad=True)) == "shape ('s0', 3) float32 contiguous requires grad"
