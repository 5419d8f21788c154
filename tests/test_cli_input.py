"""Every command refuses bad input with an error a user can act on: a nonzero exit, no traceback, and one
message of liftpy's own (``liftpy CMD: error: ...``, where a syntax or type error may add the offending
line; argparse's usage errors end with one such line)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import liftpy_here

ROOT = Path(__file__).resolve().parents[1]
MATMUL = str(ROOT / "examples" / "programs" / "matmul_highlevel.lift")
STENCIL = str(ROOT / "examples" / "programs" / "stencil_highlevel.lift")
PIPELINE = str(ROOT / "examples" / "programs" / "conv_pipeline.lift")


def _bad_files(tmp: Path) -> dict:
    (tmp / "broken.lift").write_text("def f(x: [float]N) = map(fun(a) => , x)")
    (tmp / "illtyped.lift").write_text("def f(x: [float]N, y: [float]M) = zip(x, y, 3)")
    (tmp / "notsqlite.sqlite").write_text("not a database" * 50)
    (tmp / "binary.lift").write_bytes(b"\xff\xfe\x00\x81" * 20)
    # well-formed programs that are ill-typed at any sizes (a tuple where a float goes), or at some (K != N)
    (tmp / "badcall.lift").write_text("def f(x: [float]N) = map(fun(p) => add(p, p._1), zip(x, x))")
    (tmp / "zipped.lift").write_text("def f(x: [float]N, y: [float]K) = map(fun(p) => add(p._0, p._1), zip(x, y))")
    (tmp / "plain.py").write_text("def area(w, h):\n    return w * h\n")
    (tmp / "addint.lift").write_text("def f(x: [float]N) =\n  map(fun(a) => add(a, 1), x)\n")
    (tmp / "split3.lift").write_text("def f(x: [float]N) =\n  map(fun(a) => neg(a), split(3, x))\n")
    (tmp / "reversed.lift").write_text("def f(x: [int]N) =\n  mapGlb(0, fun(v) => add(v, 1), reorder(reverse, x))\n")
    return {"broken": str(tmp / "broken.lift"), "illtyped": str(tmp / "illtyped.lift"),
            "badcall": str(tmp / "badcall.lift"), "addint": str(tmp / "addint.lift"), "split3": str(tmp / "split3.lift"),
            "reversed": str(tmp / "reversed.lift"), "zipped": str(tmp / "zipped.lift"), "plain": str(tmp / "plain.py"),
            "junkdb": str(tmp / "notsqlite.sqlite"), "binary": str(tmp / "binary.lift"),
            "missing": str(tmp / "nowhere.lift"), "dir": str(tmp)}


CASES = [
    # (command line with {placeholders}, words the error must contain)
    ("compile {missing}", "nowhere.lift"),
    ("compile {broken}", "broken.lift"),
    ("compile {binary}", "binary.lift"),
    ("compile {dir}", "directory"),
    ("compile {illtyped}", "zip"),
    ("compile {MATMUL} --size M=-4", "integer, got -4"),
    ("compile {PIPELINE} --size C=4", "without a value: H, W"),
    ("compile {MATMUL} --size M=4,N=4,K=4", "high-level program"),  # was the emitter's error (a traceback in Python)
    ("run {STENCIL} --size H=8,W=8", "liftpy variants"),
    ("space {MATMUL} --size M=4,N=4,K=4", "cannot have a tuning space"),  # was "Parameters (0)", exit 0
    ("variants {plain}", "defines no programs"),
    ("compile {plain}:nothere --size N=4", "has no nothere"),
    ("run nosuchmodule_xyz:f --size N=4", "cannot import nosuchmodule_xyz"),
    ("compile {MATMUL} --size m=4,N=4,K=4", "no size m"),
    ("run {STENCIL} --size n=4", "no size n"),
    ("compile {PIPELINE} --size C=oops", "oops"),
    ("run {missing}", "nowhere.lift"),
    ("run {PIPELINE} --size C=0", "length 0"),
    ("run {PIPELINE} --device 97", "device"),
    ("variants {broken}", "broken.lift"),
    ("variants {addint}", "add: parameters"),  # was "0 distinct lowered variants", exit 0
    ("variants {split3} --size N=8", "divisible by 3"),
    ("variants {STENCIL} --size H=8,W=8,Q=3", "no size Q"),
    ("compile {reversed} --size N=4294967296", "32-bit ints"),  # was a kernel whose indices overflow
    ("explore jacobi2d:boundary -s H=16,W=16 --db {tmp}/a.sqlite", "boundary needs a value"),
    ("variants {MATMUL} --size M=2.5", "2.5"),
    ("variants {MATMUL} --depth -1", "non-negative"),
    ("space {missing}", "nowhere.lift"),
    ("space {PIPELINE} --size M=-3", "positive"),
    ("space {PIPELINE} --samples -5", "non-negative"),
    ("space {STENCIL} --size n=16", "no size n"),
    ("space {PIPELINE} --size C=8", "no value for the sizes H, M, W"),  # they were tuning parameters of 1..3
    ("variants {MATMUL} --size M=16", "no value for the sizes K, N"),
    ("explore {MATMUL} -s M=-3,N=4,K=4 --db {tmp}/a.sqlite", "positive"),
    ("explore {MATMUL} -s M=4 --db {tmp}/a.sqlite", "N"),
    ("explore {MATMUL} -s M=4,N=4,K=4,Q=2 --db {tmp}/a.sqlite", "no size Q"),
    ("explore {MATMUL} -s M=4,N=4,K=4 --samples 0 --db {tmp}/a.sqlite", "samples"),
    ("explore {MATMUL} -s M=4,N=4,K=4 --db {junkdb}", "notsqlite.sqlite"),
    ("explore {MATMUL} -s M=4,N=4,K=4 --db {tmp}/a.sqlite --device 97", "device"),
    ("explore {MATMUL} -s M=4,N=4,K=4 --db {tmp}/a.sqlite --budget soon", "soon"),
    ("explore {MATMUL} -s M=4,N=4,K=4 --db {tmp}/a.sqlite --rules noSuchRule", "noSuchRule"),
    ("explore conv --layer 3,3 --db {tmp}/a.sqlite", "3,3"),
    ("explore conv --layer vgg16:5 -s N=4 --db {tmp}/a.sqlite", "sizes from --layer"),  # -s was ignored
    ("explore conv --layer vgg16:5 --spatial 8 --db {tmp}/a.sqlite", "add --reduced"),  # was ignored
    ("explore {MATMUL} -s M=4,N=4,K=4 --reduced --db {tmp}/a.sqlite", "--reduced is for conv"),  # was ignored
    ("explore {MATMUL} -s M=4,N=4,K=4 --relu --db {tmp}/a.sqlite", "relu"),
    ("explore conv --layer vgg99:1 --db {tmp}/a.sqlite", "vgg99"),
    ("explore {missing} -s M=4 --db {tmp}/a.sqlite", "nowhere.lift"),
    ("explore {badcall} -s N=4 --db {tmp}/a.sqlite", "add: parameter"),
    ("explore {zipped} -s N=4,K=8 --db {tmp}/a.sqlite", "zip"),
    ("explore {plain}:area -s N=4 --db {tmp}/a.sqlite", "takes arguments"),
    ("explore {MATMUL} -s m=4,N=4,K=4 --db {tmp}/a.sqlite", "no size m"),
    ("explore {MATMUL} -s M=16,N=16,K=16,M=32 --db {tmp}/a.sqlite", "given twice, as 16 and 32"),
    ("explore maxpool -s C=4,H=8,W=8 --db {tmp}/a.sqlite", "did you mean the library's maxpool2d"),
    ("explore {MATMUL} -s M=4,N=4,K=4 --abort-factor 0.5 --db {tmp}/a.sqlite", "at least 1"),
    ("pareto --db {tmp}/nothing-here.sqlite", "no results store"),
    ("show --db {tmp}/nothing-here.sqlite", "no results store"),
    ("pareto conv --layer vgg16:7 --db {junkdb}", "notsqlite.sqlite"),
    ("pareto conv --layer vgg16:7 --db {tmp}/missing.sqlite", "missing.sqlite"),
    ("pareto {MATMUL} -s M=x --db {tmp}/a.sqlite", "got 'x'"),
    ("show --db {junkdb}", "notsqlite.sqlite"),
    ("show --db {tmp}/a.sqlite --device 1", "unrecognized arguments: --device"),  # was taken as --device-key
    ("explore {STENCIL} -s H=8,W=8 --db {tmp}/p.sqlite --plot {tmp}/f.svg", "ending in .png"),  # was checked after exploring
    ("explore {STENCIL} -s H=8,W=8 --db {tmp}/p.sqlite --plot {junkdb}/f.png", "not a writable folder"),
    ("show conv --layer 1,2,3 --db {tmp}/a.sqlite", "1,2,3"),
    ("probe --device 97 --out {tmp}/p.json", "device"),
]


def _names(tmp: Path) -> dict:
    return {**_bad_files(tmp), "tmp": str(tmp), "MATMUL": MATMUL, "STENCIL": STENCIL, "PIPELINE": PIPELINE}


@pytest.fixture(scope="module")
def cli_folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def outcomes(cli_folder):
    """Every case run as ``python -m liftpy`` runs it, in this process (``liftpy_here``: sixty interpreters took
    a minute of CPU); ``test_commands_say_the_same_in_a_fresh_interpreter`` starts real ones for a few."""
    names = _names(cli_folder)
    return {line: liftpy_here(line.format(**names).split(), cwd=cli_folder) for line, _ in CASES}


@pytest.mark.parametrize("line,words", CASES, ids=[c[0].split(" {tmp}")[0] for c in CASES])
def test_bad_input_is_one_message_and_a_nonzero_exit(outcomes, line, words):
    code, out, err = outcomes[line]
    assert code != 0, (line, out[-1000:])
    assert "Traceback" not in err and "Traceback" not in out, err[-3000:]
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert lines, (line, out[-1000:])
    last = lines[-1]
    if lines[0].startswith("usage:"):  # argparse: usage, then one error line
        assert "error:" in last
    else:
        assert lines[0].startswith("liftpy") and "error:" in lines[0], err
        assert sum("error:" in x for x in lines) == 1 and len(lines) <= 4, err
    assert words.lower() in err.lower(), (words, err)


def test_reading_a_store_that_is_not_there_leaves_none_behind(outcomes, tmp_path_factory):
    assert not any(Path(p).name == "nothing-here.sqlite" for p in Path(tmp_path_factory.getbasetemp()).rglob("*.sqlite"))


# One case of each command and kind of error (argparse's usage errors, liftpy's own, a file, a size, a store).
IN_PROCESSES = ["compile {missing}", "compile {illtyped}", "run {PIPELINE} --size C=0", "variants {split3} --size N=8",
                "explore {MATMUL} -s M=4,N=4,K=4 --db {tmp}/a.sqlite --budget soon", "explore conv --layer vgg99:1 --db {tmp}/a.sqlite",
                "pareto conv --layer vgg16:7 --db {junkdb}", "show --db {tmp}/a.sqlite --device 1", "space {PIPELINE} --size M=-3",
                "probe --device 97 --out {tmp}/p.json"]


@pytest.mark.slow
def test_commands_say_the_same_in_a_fresh_interpreter(outcomes, cli_folder, tmp_path):
    """The cases above run in the test's process; a few of them, each in an interpreter of its own as a user
    runs them (in another folder of the same files), exit with the same status and say the same."""
    names = _names(tmp_path)
    procs = {line: subprocess.Popen([sys.executable, "-m", "liftpy", *line.format(**names).split()], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, cwd=tmp_path) for line in IN_PROCESSES}
    for line, p in procs.items():
        out, err = p.communicate(timeout=600)
        code, out_here, err_here = outcomes[line]
        assert (p.returncode, out, err.replace(str(tmp_path), "TMP")) == (code, out_here, err_here.replace(str(cli_folder), "TMP")), line
