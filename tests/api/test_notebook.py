"""``sample_programs/notebook.ipynb`` runs top to bottom in a real Jupyter kernel (nbclient
and ipykernel; no browser): it stages a function, displays the report, a view and a diff,
and asserts with :mod:`jxinspect.testing`. The outputs are what a person would see."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import REPO

NOTEBOOK = REPO / "sample_programs" / "notebook.ipynb"


def _outputs(cell: dict[str, Any]) -> tuple[str, list[str]]:
    """(printed text, HTML displayed) of one executed cell."""
    printed, shown = [], []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            printed.append("".join(output["text"]))
        data = output.get("data", {})
        if "text/html" in data:
            shown.append("".join(data["text/html"]))
    return "".join(printed), shown


def test_the_notebook_runs_top_to_bottom() -> None:
    nbformat = pytest.importorskip("nbformat", reason="pip install -e '.[test]' brings nbformat")
    nbclient = pytest.importorskip("nbclient", reason="pip install -e '.[test]' brings nbclient")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )  # fmt: skip
    client.execute()  # raises CellExecutionError, with the cell's traceback, on any error
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    by_source = {cell.source.splitlines()[-1]: _outputs(cell) for cell in code}

    _, report_html = by_source["report"]
    assert len(report_html) == 1 and report_html[0].startswith('<iframe srcdoc="')
    assert "params[&amp;#x27;layers&amp;#x27;][0][&amp;#x27;w&amp;#x27;]" in report_html[0]

    printed, view_html = by_source['report.show("sharding")']  # HTML, in a kernel
    assert printed.startswith("<Report predict · jit → lowered · JAX ")
    assert len(view_html) == 1 and "no sharding recorded" in view_html[0]

    printed, diff_html = by_source["diff"]
    assert printed.startswith("<DiffReport predict → predict_v2 · 1 target · ok: ")
    assert "renamed" in diff_html[0] and "probabilities" in diff_html[0]

    printed, _ = by_source['print("ok:", repr(checked))']
    assert printed.startswith("ok: <Report predict · jit → lowered")

    failing = _outputs(code[-1])[0]
    assert "x" in failing and "inputs" in failing  # the expected and the carried name
