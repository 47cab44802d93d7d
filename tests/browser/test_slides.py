"""A slide deck from ``python -m gradviz slides`` in Chromium with the network cut: the slides turn,
the formulas are drawn, a widget on a slide steps and plays, and nothing asks for the network.

Screenshots go to tests/artifacts/slides-*.png: look at them (a test passing on a blank page is a bug).
"""

import re

import pytest

from browser.conftest import settle, visible_nodes
from browser.test_widget_fit import WIDE_MATH
from test_notebooks import NOTEBOOKS
from test_slides import deck

LESSON = NOTEBOOKS / "02_autograd_tutorial.ipynb"
ANIMATION = ".gv-fit:not([data-gv-practice])"      # a widget that plays (not a practice one, which asks first)


@pytest.fixture(scope="module")
def deck_files(tmp_path_factory):
    """Write a lesson's deck once per module: ``deck_files(name)`` is its path."""
    folder, paths = tmp_path_factory.mktemp("decks"), {}

    def path(name):
        if name not in paths:
            paths[name] = folder / f"{name}.html"
            paths[name].write_text(deck(NOTEBOOKS / f"{name}.ipynb"), encoding="utf-8")
        return paths[name]
    return path


@pytest.fixture
def open_deck(offline_page, deck_files):
    """``open_deck(lesson_name)``: that lesson's deck in the offline tab, reveal.js ready."""
    page = offline_page
    page.set_viewport_size({"width": 1280, "height": 720})

    def go(name=LESSON.stem):
        page.goto(deck_files(name).as_uri())
        page.wait_for_function("() => window.gradvizDeck && window.gradvizDeck.isReady()")
        return page
    yield go
    assert page.gv_blocked == [], "the deck asked for the network"
    assert page.gv_errors == [], "the deck logged errors"


@pytest.fixture
def slides(open_deck):
    return open_deck()


def indices(page):
    return page.evaluate("() => window.gradvizDeck.getIndices()")


def go_to(page, selector, nth=0):
    """Show the slide that holds the ``nth`` match of ``selector`` (a CSS selector in the light DOM)."""
    page.evaluate("""([sel, nth]) => { const d = window.gradvizDeck;
                         const i = d.getIndices(document.querySelectorAll(sel)[nth].closest('section'));
                         d.slide(i.h, i.v); }""", [selector, nth])
    settle(page)


def shown_widget(page):
    """The widget on the slide shown now (the deck holds others, hidden)."""
    shown = '.reveal .slides section.present:not(.stack) .gv-widget[data-gv-ready="1"]'
    page.wait_for_selector(shown + " >> visible=true")
    return page.locator(shown + " >> visible=true").first


def present(page):
    return page.locator(".reveal .slides section.present section.present, "
                        ".reveal .slides > section.present:not(.stack)").first


def test_slides_turn_and_show_their_content(slides, artifacts):
    page = slides
    title = present(page).locator("h1")
    assert title.is_visible() and title.inner_text().startswith("Lesson 2 · Autograd")
    assert title.bounding_box()["height"] > 30
    assert present(page).locator(".jp-CodeCell .highlight").first.is_visible()   # code, highlighted
    page.screenshot(path=str(artifacts / "slides-title.png"))

    seen = [indices(page)]
    for _ in range(6):                              # Space: next fragment, subslide or slide
        page.keyboard.press("Space")
        settle(page)
        seen.append(indices(page))
    assert len({(i["h"], i["v"], i.get("f")) for i in seen}) == len(seen)    # moved every time
    assert seen[-1]["h"] >= 2
    heading = present(page).locator("h2, h3").first
    assert heading.is_visible() and heading.inner_text().strip()
    page.screenshot(path=str(artifacts / "slides-after-six-steps.png"))
    page.keyboard.press("ArrowLeft")
    settle(page)
    assert indices(page)["h"] < seen[-1]["h"] or indices(page)["v"] != seen[-1]["v"]


def test_formulas_are_drawn(slides, artifacts):
    page = slides
    go_to(page, "#Gradients-in-action")
    maths = present(page).locator('math[display="block"]')
    assert maths.count() == 2
    for i in range(2):
        box = maths.nth(i).bounding_box()
        assert box["width"] > 200 and box["height"] > 30        # drawn, not an empty element
    assert "4.5" in present(page).inner_text()
    page.screenshot(path=str(artifacts / "slides-formulas.png"))


def test_widget_on_a_slide_steps_and_plays(slides, artifacts):
    page = slides
    go_to(page, ANIMATION)
    widget = shown_widget(page)
    v = indices(page)["v"]
    frames = int(widget.locator('[data-gv="count"]').inner_text().split("/")[1])
    assert visible_nodes(widget) >= 6
    assert widget.locator('[data-gv="live"]').is_hidden()       # no kernel behind a deck
    # the whole widget fits on the slide (scaled down if it has to)
    slide_box = present(page).bounding_box()
    widget_box = widget.bounding_box()
    assert widget_box["height"] > 300
    assert widget_box["y"] + widget_box["height"] <= slide_box["y"] + 720 * page.evaluate(
        "() => window.gradvizDeck.getScale()") + 2
    caption = widget.locator('[data-gv="caption"]')
    first = caption.inner_text()
    page.screenshot(path=str(artifacts / "slides-widget-start.png"))

    widget.locator('[data-gv="step"]').click()
    assert widget.locator('[data-gv="count"]').inner_text().startswith("Step 2 /")
    assert caption.inner_text() != first
    assert indices(page)["v"] == v                              # clicking the widget kept the slide

    widget.locator('[data-gv="speed"]').select_option("8")
    widget.locator('[data-gv="play"]').click()
    scrub = widget.locator('[data-gv="scrub"]')
    page.wait_for_function("el => +el.value >= 6", arg=scrub.element_handle(), timeout=10000)
    page.screenshot(path=str(artifacts / "slides-widget-playing.png"))
    page.wait_for_function(f"el => +el.value === {frames - 1}", arg=scrub.element_handle(), timeout=20000)
    assert "4.5" in widget.locator('[data-gv="derivation"]').inner_text()
    page.screenshot(path=str(artifacts / "slides-widget-end.png"))

    # the clicker's keys step the widget, focused or not, until its end; then they move the deck
    widget.locator('[data-gv="to-forward"]').click()
    at = scrub.input_value()
    widget.locator('[data-gv="graph"]').click()
    page.keyboard.press("ArrowRight")
    assert int(scrub.input_value()) == int(at) + 1 and indices(page)["v"] == v
    present(page).locator("h3").first.click()
    page.keyboard.press("PageDown")
    assert int(scrub.input_value()) == int(at) + 2 and indices(page)["v"] == v
    page.keyboard.press("PageUp")
    assert int(scrub.input_value()) == int(at) + 1 and indices(page)["v"] == v
    widget.locator('[data-gv="scrub"]').evaluate(
        "(s, n) => { s.value = n; s.dispatchEvent(new Event('input')); }", frames - 1)
    was = indices(page)
    page.keyboard.press("ArrowRight")
    settle(page)
    now = indices(page)
    assert (now["h"], now["v"]) > (was["h"], was["v"])          # at its end: the deck moved on


def test_korean_deck_speaks_korean(open_deck, artifacts):
    page = open_deck("04_variables_and_gradients_ko")
    assert page.evaluate("() => document.documentElement.lang") == "ko"
    assert "변수와 그라디언트" in present(page).locator("h1").inner_text()
    go_to(page, ANIMATION)
    widget = shown_widget(page)
    for _ in range(3):
        widget.locator('[data-gv="step"]').click()
    assert re.search(r"[가-힣]", widget.locator('[data-gv="caption"]').inner_text())
    assert re.search(r"[가-힣]", widget.locator('[data-gv="derivation"]').inner_text())
    assert visible_nodes(widget) >= 6
    page.screenshot(path=str(artifacts / "slides-korean-widget.png"))


def test_a_tall_widget_gets_a_slide_of_its_own_and_shows_its_whole_graph(open_deck, artifacts):
    page = open_deck("06_neuron_and_mlp")
    go_to(page, ANIMATION, nth=1)                 # the network's training step: a tall graph
    widget = shown_widget(page)
    box = present(page).locator(ANIMATION)
    assert present(page).evaluate("s => s.classList.contains('gv-own-slide')")   # too little room below the code
    assert "One training step" in present(page).locator(".gv-own-title").inner_text()
    transform, whole = box.evaluate("""b => { const h = b.shadowRoot.querySelector('.gv-host');
        return [h.style.transform || '', b.shadowRoot.querySelector('.gv-widget').gvControl.wholeGraph()]; }""")
    assert transform == "" and whole               # never scaled down; the whole graph in its box
    assert widget.evaluate(SMALLEST_TEXT) >= 11
    slide = present(page).bounding_box()
    b = box.bounding_box()
    assert b["y"] + b["height"] <= slide["y"] + 720 * page.evaluate("() => window.gradvizDeck.getScale()") + 2
    assert visible_nodes(widget) >= 8
    page.screenshot(path=str(artifacts / "slides-mlp-widget-start.png"))
    widget.locator('[data-gv="to-backward"]').click()
    assert "Backward" in widget.locator('[data-gv="phase"]').inner_text()
    for _ in range(3):
        widget.locator('[data-gv="step"]').click()
    settle(page)
    in_view = widget.evaluate("""w => { const g = w.querySelector('.gv-graph').getBoundingClientRect();
        const f = [...w.querySelectorAll('.gv-focus')].map(e => e.getBoundingClientRect());
        return f.length > 0 && f.every(r => r.top >= g.top - 1 && r.bottom <= g.bottom + 1); }""")
    assert in_view                                  # the node the caption talks about is on screen
    assert widget.evaluate(WIDE_MATH) == []          # δ named once: no formula scrolls sideways
    page.screenshot(path=str(artifacts / "slides-mlp-widget.png"))


# --- issue 8: → alone reaches the widget, which fits its slide with the ✓ in view -----------------

SMALLEST_TEXT = """w => { let min = Infinity;
    for (const t of w.querySelectorAll('svg.gv-svg text')) {
      if (t.closest('.gv-hidden') || !t.textContent.trim()) continue;
      const r = t.getBoundingClientRect();
      const box = w.querySelector('div.gv-graph').getBoundingClientRect();
      if (r.width === 0 || r.bottom < box.top || r.top > box.bottom || r.right < box.left || r.left > box.right) continue;
      min = Math.min(min, parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a);
    }
    return min; }"""


def walk_to_widget(page, nth=0, presses=60):
    """Press → (nothing else) until the slide shown holds a widget (the nth one met); return it."""
    met = 0
    for _ in range(presses):
        on = page.evaluate("""() => { const s = [...document.querySelectorAll('.reveal .slides section.present')].pop();
                                      return !!(s && s.querySelector('.gv-fit:not([data-gv-practice])')); }""")
        if on:
            if met == nth:
                settle(page)
                return page.locator(".reveal .slides section.present:not(.stack) " + ANIMATION).first.locator(".gv-widget")
            met += 1
        page.keyboard.press("ArrowRight")
        settle(page)
    raise AssertionError(f"→ pressed {presses} times never showed widget #{nth + 1}")


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)], ids=["1280x720", "1920x1080"])
def test_arrow_right_reaches_the_widget_which_fits_with_the_check_in_view(open_deck, artifacts, size):
    page = open_deck()
    page.set_viewport_size({"width": size[0], "height": size[1]})
    settle(page)
    widget = walk_to_widget(page)
    assert widget.get_attribute("data-gv-ready") == "1"
    widget.locator('[data-gv="graph"]').click()
    page.keyboard.press("End")                                   # the end of the animation
    settle(page)
    box = widget.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= size[1]       # on screen, no scrolling
    assert page.evaluate("() => document.scrollingElement.scrollTop") == 0
    check = widget.locator(".gv-check.gv-ok").first
    assert "✓" in check.inner_text()
    c, d = check.bounding_box(), widget.locator('[data-gv="derivation"]').bounding_box()
    assert d["y"] - 1 <= c["y"] and c["y"] + c["height"] <= d["y"] + d["height"] + 1   # in the panel's view
    assert c["y"] + c["height"] <= size[1]
    smallest = widget.evaluate(SMALLEST_TEXT)
    assert smallest >= 11, smallest                              # readable from the back of the room
    page.screenshot(path=str(artifacts / f"slides-widget-{size[0]}x{size[1]}.png"))
