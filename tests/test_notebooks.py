"""The example notebooks run from top to bottom (nbclient, a fresh kernel, their small sizes on this
machine's OpenCL device); a cell that raises fails the test.  They are committed with their outputs
(``python examples/notebooks/make_notebooks.py`` writes and runs them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "examples" / "notebooks").glob("*.ipynb"))


def _execute(path: Path, cwd: Path):
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def test_there_are_notebooks():
    assert {p.stem for p in NOTEBOOKS} >= {"explore_an_operator", "device_roofline"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
@pytest.mark.notebook
@pytest.mark.slow
def test_notebook_runs(path, tmp_path):
    copy = tmp_path / path.name
    shutil.copy(path, copy)  # what the notebook writes (a results store, plots) lands in tmp_path
    nb = _execute(copy, tmp_path)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    committed = nbformat.read(path, as_version=4)
    assert all(c.get("outputs") for c in committed.cells if c.cell_type == "code"), f"{path.name} is committed without outputs"


@pytest.mark.notebook
@pytest.mark.slow
def test_a_failing_cell_fails(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from liftpy.operators import parse_spec\nparse_spec('jacobi9d')")]
    path = tmp_path / "bad.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="jacobi9d"):
        _execute(path, tmp_path)
