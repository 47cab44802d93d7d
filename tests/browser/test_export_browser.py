"""A notebook exported with plain ``jupyter nbconvert --to html`` still animates, offline.

JupyterLab does not save widget state by default, and nbconvert then shows each output's
``text/html`` instead of the widget view: for gradviz that is the self-contained widget, so the
exported page plays with no kernel and no network.  (With widget state saved, nbconvert's page
loads the widget manager from a CDN instead; that needs the network and is not gradviz's code.)
"""

import nbclient
import nbformat
import pytest
from nbconvert import HTMLExporter

from browser.conftest import visible_nodes, wait_ready

CELLS = ["import gradviz\nimport gradviz as torch",
         "x = torch.ones(2, requires_grad=True)\ny = 5 * (x + 1) ** 2\no = (1/2) * torch.sum(y)",
         "gradviz.animate(o)"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", store_widget_state=False).execute()
    assert "widgets" not in nb.metadata                     # as JupyterLab saves it by default
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    path = tmp_path_factory.mktemp("export") / "lesson.html"
    path.write_text(html, encoding="utf-8")
    return path


def test_exported_notebook_plays_offline(offline_page, exported, artifacts):
    page = offline_page
    page.goto(exported.as_uri())
    widget = wait_ready(page)
    assert visible_nodes(widget) == 15                       # the seed lesson's graph, all of it
    caption = widget.locator('[data-gv="caption"]')
    first = caption.inner_text()
    widget.focus()
    widget.press("End")                                      # the end of the backward pass
    assert "x.grad = [10., 10.]" in caption.inner_text() and caption.inner_text() != first
    assert "✓" in widget.locator('[data-gv="check-x"]').inner_text()
    page.screenshot(path=str(artifacts / "nbconvert-export.png"), full_page=True)
    # the only failures are nbconvert's own CDN scripts (MathJax, require.js), blocked here
    ours = [e for e in page.gv_errors if "net::ERR_FAILED" not in e and "Failed to load resource" not in e]
    assert ours == [], ours
