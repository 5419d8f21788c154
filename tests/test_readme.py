"""The README is a guide a newcomer can follow: short, its Python runs as written, its command table names
the real commands, its links lead somewhere; benchmarks/results/README.md names every file there in short
lines; and ``from liftpy import *`` does not hide Python's builtins."""

from __future__ import annotations

import argparse
import fnmatch
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RESULTS = ROOT / "benchmarks" / "results"
MAX_WORDS = 1500
MAX_RESULTS_LINE = 300


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def _run_block(code: str, name: str) -> dict:
    namespace = {"__name__": "__main__"}  # the README's blocks guard their calls as a script must
    exec(compile(code, name, "exec"), namespace)
    return namespace


def test_readme_is_at_most_1500_words_code_included():
    words = len(README.read_text().split())
    assert words <= MAX_WORDS, f"README.md has {words} words; move detail to docs/ (at most {MAX_WORDS})"


def _local_links(page: Path) -> list[Path]:
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", page.read_text()) if "://" not in t]
    return [page.parent / t for t in targets if t]


def test_readme_and_docs_links_lead_to_files():
    assert any(t.parent.name == "docs" for t in _local_links(README)), "the README links to no page of docs/"
    pages = [README, RESULTS / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    missing = [f"{p.relative_to(ROOT)} -> {t}" for p in pages for t in _local_links(p) if not t.exists()]
    assert not missing, missing


def test_readme_command_table_names_every_command():
    from liftpy.cli import build_parser

    parser = build_parser()
    commands = {name for action in parser._actions if isinstance(action, argparse._SubParsersAction)
                for name in action.choices}
    table = re.findall(r"^\| `liftpy (\w+)", README.read_text(), re.M)
    assert set(table) == commands, (sorted(set(table) - commands), sorted(commands - set(table)))


def test_readme_program_block_runs(tmp_path, monkeypatch):
    """The first Python block (the programs) runs as written: its checks against numpy pass."""
    monkeypatch.chdir(tmp_path)
    code = _blocks(README.read_text(), "python")[0]
    namespace = _run_block(code, "README.md: writing a program")
    assert {"normalize", "row_sums"} <= set(namespace)


@pytest.mark.slow
def test_readme_explore_and_read_back(tmp_path, monkeypatch):
    """The README's path end to end, at small sizes: the program saved as normalize.py, explored as
    ``normalize.py:normalize`` into results.sqlite, and the store read back by the last Python block."""
    from liftpy.explore import explore_program

    monkeypatch.chdir(tmp_path)
    program_block, *rest = _blocks(README.read_text(), "python")
    assert rest, "the README has no Python block reading the results"
    (tmp_path / "normalize.py").write_text(program_block)
    ex = explore_program("normalize.py:normalize", {"N": 8, "M": 8}, samples=2, db="results.sqlite",
                         progress=False, repeat=1)
    assert ex.best is not None, [(r.status, r.error) for r in ex.records]
    for i, code in enumerate(rest):
        _run_block(code, f"README.md: python block {i + 2}")


def _results_files() -> list[str]:
    """Every file under benchmarks/results/ but its README, relative to it."""
    return sorted(str(p.relative_to(RESULTS)) for p in RESULTS.rglob("*") if p.is_file() and p.name != "README.md")


def test_results_readme_names_every_file():
    text = (RESULTS / "README.md").read_text()
    names = set(re.findall(r"`([^`\s]+)`", text))
    unnamed = []
    for path in _results_files():
        folder = path.split(os.sep)[0] + "/" if os.sep in path else None
        if not any(fnmatch.fnmatch(path, n) or n == folder for n in names):
            unnamed.append(path)
    assert not unnamed, f"benchmarks/results/README.md does not name: {unnamed}"


def test_results_readme_lines_are_short():
    long = [line[:80] for line in (RESULTS / "README.md").read_text().splitlines() if len(line) > MAX_RESULTS_LINE]
    assert not long, f"lines over {MAX_RESULTS_LINE} characters (the history belongs in docs/): {long}"


def test_star_import_does_not_hide_builtins():
    import liftpy

    namespace: dict = {}
    exec("from liftpy import *", namespace)
    for name in ("map", "zip", "id", "compile"):
        assert name not in namespace, f"from liftpy import * binds {name}, hiding Python's"
    for name in ("program", "sizes", "Array", "Float", "reduce", "let", "at", "join", "evaluate", "typecheck",
                 "userfun", "LiftError"):
        assert name in namespace, f"from liftpy import * does not bind {name}"
    assert all(hasattr(liftpy, name) for name in liftpy.__all__)
    import builtins

    assert not [n for n in liftpy.__all__ if hasattr(builtins, n)]
    from liftpy import compile, id, map, zip  # noqa: A004 - Lift's names stay importable by name

    assert map is liftpy.map and zip is liftpy.zip and id is liftpy.id and compile is liftpy.compile
