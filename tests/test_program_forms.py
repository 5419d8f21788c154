"""One program form for every command (issue 55): ``variants``, ``compile``, ``run``, ``space`` and ``explore``
take a program as a text file (``.lift``, or ``-``), as ``file.py:function`` and as ``module:function``, all
read by ``liftpy.cli_args.read_program``; a high-level program given where a lowered one is needed (compile,
run, space, ``Program.compile``) is one line saying so and pointing to ``liftpy variants`` and ``liftpy
explore``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import liftpy as L
from liftpy.cli import main
from liftpy.cli_args import read_program
from liftpy.errors import CodegenError, InputError

LOWERED_TEXT = "def scale(x: [float]N) =\n  mapGlb(0, fun(v) => mult(v, 2.0f), x)\n"
HIGH_TEXT = "def total(x: [float]N) =\n  map(fun(v) => mult(v, v), x)\n"

PYTHON = '''
import liftpy as L

N, = L.sizes("N")


@L.program
def scale(x: L.Array(L.Float, N)):
    return L.mapGlb(0, lambda v: v * 2.0, x)


@L.program
def total(x: L.Array(L.Float, N)):
    return L.map(lambda v: v * v, x)


def made():
    """A function of no arguments returning a program."""
    return scale
'''


@pytest.fixture(scope="module")
def forms(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("forms")
    (tmp / "scale.lift").write_text(LOWERED_TEXT)
    (tmp / "total.lift").write_text(HIGH_TEXT)
    (tmp / "progs.py").write_text(PYTHON)
    (tmp / "formsmod_55.py").write_text(PYTHON)  # importable by name once tmp is on the path
    sys.path.insert(0, str(tmp))
    yield tmp
    sys.path.remove(str(tmp))


def _specs(tmp: Path, name: str) -> list[str]:
    return [str(tmp / f"{name}.lift"), f"{tmp / 'progs.py'}:{name}", f"formsmod_55:{name}"]


def test_the_three_forms_read_the_same_program(forms):
    for name in ("scale", "total"):
        programs = [read_program(spec) for spec in _specs(forms, name)]
        assert programs[0] == programs[1] == programs[2], [str(p) for p in programs]
    assert read_program(f"{forms / 'progs.py'}:made") == read_program(str(forms / "scale.lift"))


def test_a_python_file_without_a_name_gives_its_one_program_or_says_which(forms, tmp_path):
    one = tmp_path / "one.py"
    one.write_text(PYTHON.split("@L.program\ndef total")[0])
    assert read_program(str(one)) == read_program(str(forms / "scale.lift"))
    with pytest.raises(InputError, match=r"defines 2 programs: scale, total; name one"):
        read_program(str(forms / "progs.py"))


@pytest.mark.parametrize("form", [0, 1, 2], ids=["lift", "file.py:function", "module:function"])
def test_every_command_takes_every_form(forms, form, capsys):
    scale, total = _specs(forms, "scale")[form], _specs(forms, "total")[form]
    assert main(["variants", total, "--max", "1"]) == 0
    assert "distinct lowered variants" in capsys.readouterr().out
    assert main(["compile", scale, "-s", "N=16"]) == 0
    assert "kernel void scale(" in capsys.readouterr().out
    assert main(["run", scale, "-s", "N=16"]) == 0
    assert "-> OK" in capsys.readouterr().out
    assert main(["space", scale, "-s", "N=16", "--no-device"]) == 0
    assert "scale with N = 16" in capsys.readouterr().out


@pytest.mark.slow
def test_explore_takes_every_form(forms, tmp_path):
    for k, spec in enumerate(_specs(forms, "total")):
        r = subprocess.run([sys.executable, "-m", "liftpy", "explore", spec, "-s", "N=16", "--samples", "1",
                            "--no-references", "--jobs", "1", "--db", str(tmp_path / f"r{k}.sqlite")],
                           capture_output=True, text=True, timeout=600, cwd=forms,
                           env={**__import__("os").environ, "PYTHONPATH": f"{forms}:{Path(L.__file__).parents[1]}"})
        assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.parametrize("command", ["compile", "run", "space"])
def test_a_high_level_program_where_a_lowered_one_is_needed_is_one_line(forms, command, capsys):
    spec = _specs(forms, "total")[1]
    assert main([command, spec, "-s", "N=16"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err, err
    assert "total is a high-level program" in err and f"liftpy variants {spec} --full" in err
    assert "liftpy explore" in err


def test_program_compile_of_a_high_level_program_is_one_line(forms):
    total = read_program(str(forms / "total.lift"))
    with pytest.raises(CodegenError) as info:
        total.compile({"N": 16})
    message = str(info.value)
    assert "\n" not in message and "high-level program" in message and "explore_all" in message
    assert len(info.traceback) <= 3  # raised where compile starts, not in the emitter
    scale = read_program(str(forms / "scale.lift"))
    x = np.arange(16, dtype=np.float32)
    np.testing.assert_array_equal(scale.compile({"N": 16}).run(x).output, 2 * x)


def test_standard_input_is_a_text_program(forms):
    r = subprocess.run([sys.executable, "-m", "liftpy", "compile", "-", "-s", "N=8"], input=LOWERED_TEXT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "kernel void scale(" in r.stdout, r.stderr
