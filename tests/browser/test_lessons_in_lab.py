"""The first lesson as a student meets it (the Binder badge opens it): JupyterLab 4, Run All Cells.

The cells that teach an error are tagged ``raises-exception``: JupyterLab must run on past them to
the last cell, and the widget must show where the lesson calls ``gradviz.animate``.
"""

import re

import nbformat

from browser.conftest import settle, visible_nodes
from test_notebooks import NOTEBOOKS

LESSON = NOTEBOOKS / "01_variables_and_gradients.ipynb"

CELLS_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.model.sharedModel.cells.map(c => c.toJSON());
}"""


def test_run_all_in_jupyterlab_reaches_the_end(jupyterlab, lab_page, artifacts):
    page = lab_page
    name = jupyterlab.copy_notebook(LESSON)
    jupyterlab.open(page, name)
    jupyterlab.run_all(page)
    code = [c for c in nbformat.read(LESSON, as_version=4).cells if c.cell_type == "code"]
    page.wait_for_function(
        f"""() => {{ const cells = ({CELLS_JS})().filter(c => c.cell_type === 'code');
                     return cells.length === {len(code)} && cells.every(c => c.execution_count); }}""",
        timeout=120000)
    jupyterlab.wait_idle(page)
    cells = [c for c in page.evaluate(CELLS_JS) if c["cell_type"] == "code"]

    def text(cell):
        return "\n".join("".join(o.get("data", {}).get("text/plain", "")) + "".join(o.get("text", ""))
                         for o in cell["outputs"])

    for cell, source in zip(cells, code):
        errors = [o for o in cell["outputs"] if o["output_type"] == "error"]
        assert bool(errors) == ("raises-exception" in source.metadata.get("tags", [])), source.source
    assert text(cells[-1]) == "tensor([10., 10.])"
    assert re.search(r"tensor\(20\., grad_fn=<MulBackward0>\)", "\n".join(map(text, cells)))

    widget = page.locator('.jp-OutputArea-output .gv-widget[data-gv-ready="1"]:not(.gv-practicing)').first
    widget.scroll_into_view_if_needed()
    settle(page)              # (a notebook still laying out would move the button away under the click)
    assert visible_nodes(widget) >= 6
    widget.locator('[data-gv="to-backward"]').click()
    from playwright.sync_api import expect
    expect(widget.locator('[data-gv="phase"]')).to_contain_text("Backward")
    page.screenshot(path=str(artifacts / "lab-lesson-01.png"))
    # the practice cell before it asks x.grad before its backward pass (tests/browser/test_practice_browser.py)
    asks = page.locator('.jp-OutputArea-output .gv-widget.gv-practicing[data-gv-ready="1"]').first
    asks.locator('[data-gv="to-backward"]').click()
    assert asks.locator('[data-gv="question"]').inner_text() == "Predict x.grad after o.backward():"
    assert page.gv_errors == [] and page.gv_blocked == []
