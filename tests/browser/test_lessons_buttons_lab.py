"""Every lesson in JupyterLab 4 at 1366×768 after Run All Cells, then the live buttons (issue 21, item 4).

A student runs the whole lesson (training loops included), then presses backward(), zero_(),
backward() on every widget. The widget runs the forward pass again from the leaves as they are
now when it must (lesson 7's collapse=model op by op, its 'Shifted' module although PyTorch kept
no 2.0), redraws every value, and checks what each call added against the derivation worked out
at those values with the widget's own ``gradient=``: never ✗, and ✓ on every leaf at the end.
(Only a custom autograd.Function, whose forward is the user's code, ends on a note in words; no
lesson has one: tests/widget/test_torch_widget.py holds that case.)

Screenshots: tests/artifacts/lab-buttons-<lesson>-<widget>.png.
"""

import time

import nbformat
import pytest

from browser.conftest import settle
from test_notebooks import NOTEBOOKS

LESSONS = [pytest.param(p.stem, marks=[pytest.mark.torch] if p.stem.startswith("07") else [], id=p.stem[:2])
           for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))]


def frame_count(widget):
    return int(widget.locator('[data-gv="scrub"]').get_attribute("max")) + 1


def press_and_wait(widget, button):
    """Press a live button, wait for the kernel's new frames, show the last one."""
    page = widget.page
    settle(page)              # (a notebook still laying out would move the button away under the click)
    before = frame_count(widget)
    widget.locator(f'[data-gv="{button}"]').click()
    deadline = time.monotonic() + 90
    while frame_count(widget) <= before:
        if time.monotonic() > deadline:
            state = widget.evaluate("""w => ({busy: w.querySelector('[data-gv="backward"]').disabled,
                caption: w.querySelector('[data-gv="caption"]').textContent, steps: +w.querySelector('[data-gv="scrub"]').max + 1,
                kernel: (document.querySelector('.jp-Notebook-ExecutionIndicator') || {}).title || ''})""")
            raise AssertionError(f"{button}(): no new frames from the kernel in 90 s ({before} steps before): {state}")
        page.wait_for_timeout(100)
    widget.focus()
    page.keyboard.press("End")
    settle(page)


@pytest.mark.parametrize("lesson", LESSONS)
def test_after_run_all_the_buttons_never_show_a_cross(jupyterlab, lab_page, lesson, artifacts):
    if lesson.startswith("07"):
        pytest.importorskip("torch", reason="lesson 7 runs real PyTorch")
    page = lab_page
    page.set_viewport_size({"width": 1366, "height": 768})
    path = NOTEBOOKS / f"{lesson}.ipynb"
    # the widgets in the notebook's order: animate()'s, and practice()'s (which ask before they show:
    # their own tests play them)
    kinds = [k for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
             for k in ("animate", "practice") if f"gradviz.{k}(" in c.source]
    animates = len(kinds)
    name = jupyterlab.copy_notebook(path, name=f"buttons-{lesson}.ipynb")
    jupyterlab.run_notebook(page, name, timeout=240000)
    jupyterlab.wait_idle(page)
    widgets = jupyterlab.wait_widgets(page, animates)
    assert widgets.count() == animates
    for k in range(animates):
        if kinds[k] != "animate":
            continue
        widget = widgets.nth(k)
        widget.scroll_into_view_if_needed()
        settle(page)
        box = widget.bounding_box()
        assert box["width"] <= 1366 and box["height"] <= 768, f"{lesson} widget {k + 1} does not fit 1366x768"
        for button in ("backward", "zero", "backward"):
            press_and_wait(widget, button)
            bad = widget.locator(".gv-check.gv-bad")
            assert bad.count() == 0, f"{lesson} widget {k + 1} after {button}: {bad.first.inner_text()}"
        widget.scroll_into_view_if_needed()
        settle(page)
        page.screenshot(path=str(artifacts / f"lab-buttons-{lesson[:2]}-{k}.png"))
        leaves = widget.locator(".gv-dleaf").count()
        ok = widget.locator(".gv-check.gv-ok").count()
        assert widget.locator('[data-gv="caption"].gv-caption-error').count() == 0, \
            f"{lesson} widget {k + 1} ends on an error: {widget.locator('[data-gv=caption]').inner_text()}"
        unchecked = widget.locator('[data-gv="caption"][data-gv-unchecked]')
        assert unchecked.count() == 0, f"{lesson} widget {k + 1} ends unchecked: {unchecked.inner_text()}"
        assert leaves and ok == leaves, f"{lesson} widget {k + 1}: {ok} ✓ for {leaves} leaves at the end"
    assert page.gv_errors == [] and page.gv_blocked == []
