"""The widget in a live JupyterLab 4: run the notebook in the UI, play both passes, press its buttons.

The server is the ``jupyterlab`` fixture (tests/browser/conftest.py); the notebook is written into
its root dir.  The backward() and zero_() buttons reach the kernel and the widget shows what the
engine did: x.grad goes None -> 10 -> 20 -> 0, and the freed graph's error is shown as a message.
"""

import re

import pytest

from browser.conftest import settle, visible_nodes, wait_ready

CELLS = [
    "import gradviz\nimport gradviz as torch",
    "x = torch.ones(2, requires_grad=True)\ny = 5 * (x + 1) ** 2\no = (1/2) * torch.sum(y)\n"
    "w = gradviz.animate(o, speed=8)\nw",
    "x.grad",
]


def caption(widget):
    return widget.locator('[data-gv="caption"]').inner_text().strip()


def step_number(widget):
    return int(widget.locator('[data-gv="scrub"]').input_value())


def frame_count(widget):
    return int(widget.locator('[data-gv="scrub"]').get_attribute("max")) + 1


def grad_text(widget, node_id="n0"):
    return widget.evaluate("""(w, id) => { const s = w.querySelector(`[data-gv-id="${id}"] .gv-grad`);
        return !s || s.classList.contains('gv-hidden') ? ''
          : [...s.querySelectorAll('text')].map(t => t.textContent).join(' ').trim(); }""", node_id)


def press_and_wait(widget, button, before):
    """Press a live button; wait for the kernel's new frames; go to the last one."""
    widget.locator(f'[data-gv="{button}"]').click()
    widget.page.wait_for_function(
        """([el, n]) => +el.querySelector('[data-gv="scrub"]').max + 1 > n""",
        arg=[widget.element_handle(), before], timeout=30000)
    widget.focus()
    widget.page.keyboard.press("End")
    return frame_count(widget)


@pytest.fixture(scope="module")
def notebook(jupyterlab):
    return jupyterlab.new_notebook("animate.ipynb", CELLS)


def test_widget_in_jupyterlab(jupyterlab, lab_page, notebook, artifacts):
    page = lab_page
    jupyterlab.run_notebook(page, notebook)
    try:
        widget = wait_ready(page, ".jp-OutputArea-output", timeout=90000)
    except Exception:
        page.screenshot(path=str(artifacts / "lab-not-ready.png"))
        raise AssertionError(f"no widget; console: {page.gv_errors}; blocked: {page.gv_blocked}")
    assert visible_nodes(widget) >= 10
    assert caption(widget).startswith("The computation graph of o.")
    n = frame_count(widget)
    assert n == 19
    page.screenshot(path=str(artifacts / "lab-start.png"))

    # the forward pass, then the backward pass, with the step button
    for i in range(1, n):
        widget.locator('[data-gv="step"]').click()
        assert step_number(widget) == i
        if i == 10:
            assert caption(widget).startswith("o = 0.5 c = 20.")
            assert grad_text(widget) == ""
    assert caption(widget) == ("animate()'s backward() is done (x.grad = [10., 10.]); it wrote no .grad and ran "
                               "none of your hooks.")
    assert grad_text(widget) == ".grad [10., 10.]"
    assert "✓" in widget.locator('[data-gv="check-x"]').inner_text()
    page.screenshot(path=str(artifacts / "lab-backward.png"))

    # the kernel's x.grad is untouched by animate(): the third cell printed None... (empty output)
    cells = page.locator(".jp-NotebookPanel").filter(visible=True).locator(".jp-Notebook .jp-Cell")
    out = cells.nth(2).locator(".jp-OutputArea").inner_text().strip()
    assert out == ""

    # live buttons: None -> 10 (retain_graph on) -> 20 -> zero -> 0 -> a freed graph's error
    widget.locator('[data-gv="retain"]').check()
    n = press_and_wait(widget, "backward", n)
    assert grad_text(widget) == ".grad [10., 10.]"
    n = press_and_wait(widget, "backward", n)
    assert grad_text(widget) == ".grad [20., 20.]"
    check = widget.locator('[data-gv="check-x"]')
    # what this call added agrees with the chain rule; the .grad holds two calls' worth: accumulation
    assert check.inner_text() == ("engine: this backward() added [10., 10.] to x.grad (now [20., 20.]) ✓ agrees; "
                                  "x.grad = 2 × the chain rule: 2 backward() calls added up in .grad")
    assert "gv-ok" in check.get_attribute("class")
    n = press_and_wait(widget, "zero", n)
    assert grad_text(widget) == ".grad [0., 0.]"
    assert "zero_() cleared it" in check.inner_text()
    assert caption(widget) == "x.grad.zero_(): [20., 20.] → [0., 0.]"
    widget.locator('[data-gv="retain"]').uncheck()
    n = press_and_wait(widget, "backward", n)
    assert grad_text(widget) == ".grad [10., 10.]"
    widget.locator('[data-gv="forward-again"]').uncheck()     # on, the graph would be built again
    n = press_and_wait(widget, "backward", n)
    assert "Trying to backward through the graph a second time" in caption(widget)
    cap = widget.locator('[data-gv="caption"]')
    assert "gv-caption-error" in cap.get_attribute("class") and cap.get_attribute("aria-live") == "assertive"
    assert "retain_graph=True if you need to backward" in cap.inner_text()
    assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    page.screenshot(path=str(artifacts / "lab-error.png"))

    # the kernel saw it all: x.grad really is 10 now
    last = cells.nth(2)
    last.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    try:
        last.locator(".jp-OutputArea-output").filter(has_text="tensor([10., 10.])").wait_for(timeout=30000)
    finally:
        page.screenshot(path=str(artifacts / "lab-rerun.png"))
    assert not [e for e in page.gv_errors if "gradviz" in e or "gv-" in e]
    assert not page.gv_blocked, page.gv_blocked


def test_dark_theme_in_jupyterlab(jupyterlab, lab_page, notebook, artifacts):
    page = lab_page
    jupyterlab.open(page, notebook)
    jupyterlab.set_theme(page, "JupyterLab Dark")
    try:
        jupyterlab.run_all(page)
        jupyterlab.wait_executed(page)
        widget = wait_ready(page, ".jp-OutputArea-output", timeout=90000)
        for _ in range(16):
            widget.locator('[data-gv="step"]').click()
        settle(page)
        bg = widget.evaluate("w => getComputedStyle(w).backgroundColor")
        assert bg != "rgb(255, 255, 255)"
        rgb = [int(v) for v in re.findall(r"\d+", bg)[:3]]
        assert sum(rgb) < 3 * 80                      # JupyterLab Dark's layout colour, not white
        text = widget.evaluate("w => getComputedStyle(w.querySelector('svg.gv-svg .gv-name text')).fill")
        assert sum(int(v) for v in re.findall(r"\d+", text)[:3]) > 3 * 150   # light text on dark
        assert visible_nodes(widget) >= 10
        widget.screenshot(path=str(artifacts / "lab-dark.png"))
    finally:
        jupyterlab.set_theme(page, "JupyterLab Light")


LESSON_FLOW = [
    "import gradviz\nimport gradviz as torch",
    "x = torch.ones(2, requires_grad=True)\ny = 5 * (x + 1) ** 2\no = (1/2) * torch.sum(y)\n"
    "w = gradviz.animate(o, speed=8)\nw",
    "o.backward()          # the lesson's own call: it frees the graph",
    "x.grad",
]


def test_after_run_all_two_presses_show_accumulation(jupyterlab, lab_page, artifacts):
    """A lesson's flow (animate, then its own o.backward(), Run All): a student who knows nothing
    about retain_graph presses backward() twice and sees ✓ for what each call added, and the .grad
    as k × the chain rule, not an error."""
    page = lab_page
    jupyterlab.run_notebook(page, jupyterlab.new_notebook("run-all-accumulate.ipynb", LESSON_FLOW))
    widget = wait_ready(page, ".jp-OutputArea-output", timeout=90000)
    widget.scroll_into_view_if_needed()
    settle(page)
    n = frame_count(widget)
    check = widget.locator('[data-gv="check-x"]')
    seen = []
    for _ in range(2):
        n = press_and_wait(widget, "backward", n)
        cap = widget.locator('[data-gv="caption"]')
        assert "gv-caption-error" not in (cap.get_attribute("class") or ""), caption(widget)
        seen.append(check.inner_text())
    assert any(re.search(r"✓ agrees; x\.grad = [2-9] × the chain rule", s) for s in seen), seen
    assert "gv-ok" in check.get_attribute("class")
    assert re.search(r"\.grad \[(20|30)\., (20|30)\.\]", grad_text(widget))
    page.screenshot(path=str(artifacts / "lab-run-all-accumulate.png"))
    assert not page.gv_blocked
