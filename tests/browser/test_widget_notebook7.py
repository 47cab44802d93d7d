"""The widget in Jupyter Notebook 7 (the classic one-notebook-a-page interface, rebuilt on JupyterLab):
it renders, plays, draws its MathML and its buttons reach the kernel.

Screenshot: tests/artifacts/notebook7.png (look at it: a passing test on a blank page is a bug).
"""

from browser.conftest import visible_nodes, wait_ready

CELLS = ["import gradviz\nimport gradviz as torch",
         "x = torch.ones(2, requires_grad=True)\ny = 5 * (x + 1) ** 2\no = (1/2) * torch.sum(y)\nw = gradviz.animate(o)\nw"]


def notebook7_own_errors(nb, page):
    """What Notebook 7 logs by itself on a plain notebook (this version: a TypeError reading 'schema')."""
    nb.open(page, nb.new_notebook("plain.ipynb", ["1 + 1"]))
    nb.command(page, "notebook:run-all-cells")
    page.wait_for_timeout(2000)
    return set(page.gv_errors)


def test_widget_in_notebook7(notebook7, notebook7_page, artifacts):
    page, nb = notebook7_page, notebook7
    baseline = notebook7_own_errors(nb, page)
    page.gv_errors.clear()
    name = nb.new_notebook("notebook7.ipynb", CELLS)
    nb.open(page, name)
    nb.command(page, "notebook:run-all-cells")
    widget = wait_ready(page, timeout=60000)
    assert visible_nodes(widget) == 15
    widget.focus()
    widget.press("End")                                     # the end of the backward pass
    caption = widget.locator('[data-gv="caption"]')
    assert caption.inner_text().startswith("animate()'s backward() is done (x.grad = [10., 10.])")
    assert widget.locator("math").count() >= 5               # the derivation, as MathML
    assert "✓" in widget.locator('[data-gv="check-x"]').inner_text()
    # the live buttons run the real engine: animate() left x.grad as it was (None), so two presses
    # with retain_graph give 10, then 20 (accumulation)
    widget.locator('[data-gv="retain"]').check()
    for call, grad in ((1, "[10., 10.]"), (2, "[20., 20.]")):
        widget.locator('[data-gv="backward"]').click()
        page.wait_for_function("([w, c]) => w.querySelector('[data-gv=\"count\"]') && "
                               "w.querySelector('[data-gv=\"caption\"]').textContent.includes(`call ${c}`)",
                               arg=[widget.element_handle(), call], timeout=30000)
        widget.press("End")
        assert caption.inner_text() == f"backward() call {call} is done: x.grad = {grad}"
    page.screenshot(path=str(artifacts / "notebook7.png"))
    assert page.gv_blocked == []
    assert set(page.gv_errors) <= baseline, "the widget logged errors of its own"
