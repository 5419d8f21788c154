"""The research notebooks: each committed with its outputs, opening with a question and ending with an
answer printed from its own measurements; and each runs from top to bottom (nbclient, a fresh kernel, on
this machine's OpenCL device) at the small sizes ``LIFTPY_NOTEBOOK_SMALL`` selects, a cell that raises
failing the test.  ``python examples/notebooks/make_notebooks.py`` writes and runs them at their own sizes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.notebook

FOLDER = Path(__file__).resolve().parents[1] / "examples" / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))
HELPERS = [p for p in FOLDER.glob("*.py") if p.name != "make_notebooks.py"]  # what the notebooks import


def _execute(path: Path, cwd: Path):
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def _code(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def _printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def test_the_notebooks_are_those_make_notebooks_writes():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_notebooks", FOLDER / "make_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert {p.stem for p in NOTEBOOKS} == set(module.NOTEBOOKS)
    for path in NOTEBOOKS:
        committed = [(c.cell_type, c.source) for c in nbformat.read(path, as_version=4).cells]
        written = [(c.cell_type, c.source) for c in module.build(module.NOTEBOOKS[path.stem]).cells]
        assert committed == written, f"{path.name} differs from make_notebooks.py's cells: run it again"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_with_a_question_and_a_computed_answer(path):
    nb = nbformat.read(path, as_version=4)
    title = nb.cells[0].source.splitlines()[0]
    assert nb.cells[0].cell_type == "markdown" and title.startswith("# ") and title.endswith("?"), title
    empty = [c.source.splitlines()[0] for c in _code(nb) if not c.get("outputs")]
    assert not empty, f"{path.name} is committed without the outputs of: {empty}"
    errors = [o for c in _code(nb) for o in c.outputs if o.get("output_type") == "error"]
    assert not errors, f"{path.name} is committed with an error: {errors[0].get('ename')}"
    assert _printed(_code(nb)[-1]).strip(), f"{path.name} ends without an answer printed from its measurements"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_at_small_sizes(path, tmp_path, monkeypatch):
    for helper in HELPERS:
        shutil.copy(helper, tmp_path)
    copy = tmp_path / path.name
    shutil.copy(path, copy)  # what the notebook writes (results stores) lands in tmp_path
    monkeypatch.setenv("LIFTPY_NOTEBOOK_SMALL", "1")
    nb = _execute(copy, tmp_path)
    errors = [o for c in _code(nb) for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert _printed(_code(nb)[-1]).strip()


@pytest.mark.slow
def test_a_failing_cell_fails(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from liftpy.operators import parse_spec\nparse_spec('jacobi9d')")]
    path = tmp_path / "bad.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="jacobi9d"):
        _execute(path, tmp_path)
