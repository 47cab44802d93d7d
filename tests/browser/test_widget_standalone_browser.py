"""The saved page in a real Chromium with the network cut: it plays, steps, listens to keys, shows the math.

Screenshots go to tests/artifacts/ (look at them: a test that passes on a blank page is a bug).
"""

import re

import pytest

from browser.conftest import caption, open_saved, step_through, visible_nodes, wait_ready
from gradviz.widget import AutogradWidget, standalone_html
from widget_lessons import LESSONS


@pytest.fixture(scope="module")
def seed_page(tmp_path_factory):
    root, names, _ = LESSONS["seed"]()
    w = AutogradWidget(root, names=names, derivation=[r"o = \frac12 \sum_i 5(x_i+1)^2"],
                       expected={"x": lambda x: 5 * (x + 1)})
    path = tmp_path_factory.mktemp("saved") / "seed.html"
    w.save_html(path)
    return w, path


def count(widget):
    return widget.locator('[data-gv="count"]').inner_text().strip()


def leaf_grad(widget, node_id):
    """The text of a node's gradient slot, '' while it is hidden."""
    return widget.evaluate("""(w, id) => { const s = w.querySelector(`[data-gv-id="${id}"] .gv-grad`);
        return !s || s.classList.contains('gv-hidden') ? ''
          : [...s.querySelectorAll('text')].map(t => t.textContent).join('\\n').trim(); }""", node_id)


def test_saved_page_plays_offline(offline_page, seed_page, artifacts):
    w, path = seed_page
    page = offline_page
    widget = open_saved(page, w, path)
    assert count(widget) == f"Step 1 / {len(w.frames)}"
    page.screenshot(path=str(artifacts / "standalone-start.png"), full_page=True)

    # step through both passes with the button: every caption is the Python caption
    step_through(widget, w)
    x = next(n["id"] for n in w.graph["nodes"] if n["name"] == "x")
    assert leaf_grad(widget, x) == ".grad [10., 10.]"
    check = widget.locator('[data-gv="check-x"]')
    assert "✓" in check.inner_text() and "[10., 10.]" in check.inner_text()
    page.screenshot(path=str(artifacts / "standalone-end.png"), full_page=True)

    # back, jumps, scrubber
    widget.locator('[data-gv="back"]').click()
    assert caption(widget) == w.caption(len(w.frames) - 2)
    widget.locator('[data-gv="to-forward"]').click()
    assert caption(widget) == w.caption(1)
    widget.locator('[data-gv="to-backward"]').click()
    seed = next(i for i, f in enumerate(w.frames) if f["kind"] == "seed")
    assert caption(widget) == w.caption(seed)
    assert leaf_grad(widget, x) == ""                       # before accumulation: no .grad yet
    widget.locator('[data-gv="scrub"]').fill("4")
    assert caption(widget) == w.caption(4)

    # keyboard, when the widget has focus
    widget.focus()
    page.keyboard.press("ArrowRight")
    assert caption(widget) == w.caption(5)
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert caption(widget) == w.caption(3)
    page.keyboard.press("End")
    assert caption(widget) == w.caption(len(w.frames) - 1)
    page.keyboard.press("Home")
    assert caption(widget) == w.caption(0)

    # play (fast), then pause with Space
    widget.locator('[data-gv="speed"]').select_option("8")
    widget.focus()
    page.keyboard.press(" ")
    page.wait_for_function("""() => document.querySelector('[data-gv="scrub"]').value >= 4""", timeout=5000)
    page.keyboard.press(" ")
    paused = widget.locator('[data-gv="scrub"]').input_value()
    page.wait_for_timeout(400)
    assert widget.locator('[data-gv="scrub"]').input_value() == paused
    widget.locator('[data-gv="play"]').click()
    page.wait_for_function(f"""() => document.querySelector('[data-gv="scrub"]').value == {len(w.frames) - 1}""",
                           timeout=10000)
    assert widget.locator('[data-gv="play"]').get_attribute("aria-pressed") == "false"   # stops at the end

    assert page.gv_blocked == [] and page.gv_errors == []


def test_derivation_and_caption_are_there_for_everyone(offline_page, seed_page):
    w, path = seed_page
    page = offline_page
    page.goto(path.as_uri())
    widget = wait_ready(page)
    maths = widget.locator(".gv-deriv math")
    assert maths.count() >= 8
    box = maths.first.bounding_box()
    assert box["width"] > 10 and box["height"] > 5          # MathML drawn by the browser, no MathJax
    assert widget.locator(".gv-deriv").inner_text().count("∂") >= 2
    cap = widget.locator('[data-gv="caption"]')
    assert cap.get_attribute("aria-live") == "polite" and cap.get_attribute("role") == "status"
    assert widget.get_attribute("aria-label") == "Autograd animation of o"
    assert widget.locator('[data-gv="live"]').is_hidden()   # no kernel behind a saved page
    for name in ("to-forward", "back", "play", "step", "to-backward"):
        assert widget.locator(f'[data-gv="{name}"]').get_attribute("aria-label")
    assert page.gv_errors == []


def test_two_widgets_on_one_page_are_independent(offline_page, tmp_path):
    ra, na, _ = LESSONS["seed"]()
    rb, nb, _ = LESSONS["neuron"]()
    a, b = AutogradWidget(ra, names=na), AutogradWidget(rb, names=nb, lang="ko")
    page_html = ("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
                 + standalone_html(a, full_page=False) + standalone_html(b, full_page=False) + "</body></html>")
    path = tmp_path / "two.html"
    path.write_text(page_html, encoding="utf-8")
    page = offline_page
    page.goto(path.as_uri())
    page.wait_for_function("document.querySelectorAll('.gv-widget[data-gv-ready=\"1\"]').length === 2")
    first, second = page.locator(".gv-widget").nth(0), page.locator(".gv-widget").nth(1)
    for _ in range(3):
        first.locator('[data-gv="step"]').click()
    assert caption(first) == a.caption(3)
    assert caption(second) == b.caption(0) and re.search(r"[가-힣]", caption(second))
    ids = page.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)")
    assert len(ids) == len(set(ids))                         # no id is shared between the two
    assert visible_nodes(first) > 0 and visible_nodes(second) > 0
    assert page.gv_errors == []


def test_dark_scheme_standalone(browser_context, seed_page, artifacts, tmp_path):
    w, _ = seed_page
    page = browser_context.new_page()
    try:
        page.emulate_media(color_scheme="dark")
        path = tmp_path / "dark.html"
        path.write_text(standalone_html(w, frame=16), encoding="utf-8")
        page.goto(path.as_uri())
        widget = wait_ready(page)
        bg = widget.evaluate("w => getComputedStyle(w).backgroundColor")
        assert bg == "rgb(27, 28, 30)"
        assert widget.evaluate("w => w.querySelector('svg.gv-svg').classList.contains('gv-dark')")
        text_fill = widget.evaluate("w => getComputedStyle(w.querySelector('svg .gv-name text')).fill")
        assert text_fill == "rgb(230, 230, 230)"
        assert visible_nodes(widget) == len(w.graph["nodes"])
        page.screenshot(path=str(artifacts / "standalone-dark.png"), full_page=True)
    finally:
        page.close()


def test_presenter_has_larger_type(offline_page, seed_page, tmp_path):
    w, _ = seed_page
    path = tmp_path / "presenter.html"
    path.write_text(standalone_html(w, presenter=True), encoding="utf-8")
    offline_page.goto(path.as_uri())
    widget = wait_ready(offline_page)
    size = widget.evaluate("w => parseFloat(getComputedStyle(w.querySelector('[data-gv=caption]')).fontSize)")
    assert size >= 20


def test_cannot_render_says_why(offline_page, tmp_path):
    state = {"svg": "", "frames": [], "error": "cannot draw the graph: the Graphviz command 'dot' was not found",
             "root_name": "o"}
    path = tmp_path / "broken.html"
    path.write_text(standalone_html(state), encoding="utf-8")
    offline_page.goto(path.as_uri())
    widget = wait_ready(offline_page)
    fatal = widget.locator('[data-gv="fatal"]')
    assert fatal.is_visible() and "was not found" in fatal.inner_text()
    assert offline_page.gv_errors == []
