"""Every lesson's deck at 1280×720, as a lecturer projects it (issue 21, item 7).

- Every widget shows its whole graph (every node inside the graph's box) at the first and at the
  last frame, its smallest text (the graph's and the HTML's: caption, derivation, MathML scripts)
  at 11 px or more, its caption whole or visibly scrolling, and the widget inside its slide.
- A clicker alone (→ and PageDown, nothing else) plays every widget to its end (one in a fragment only once the
  fragment is shown), its check ✓ where
  the widget writes a derivation and never ✗, and reaches the last slide.

Screenshots: tests/artifacts/deck-<lesson>-<widget>-{first,last}.png (look at them).
"""

import pytest

from browser.conftest import settle
from browser.test_slides import SMALLEST_TEXT
from test_notebooks import NOTEBOOKS
from test_slides import deck

LESSONS = [pytest.param(p.stem, marks=[pytest.mark.torch] if p.stem.startswith("07") else [], id=p.stem[:2])
           for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))]

# Where every widget stands: its nodes outside the graph's box, its smallest HTML text (px on
# screen), whether its caption is cut without saying so, and whether the widget leaves its slide.
MEASURE = """(box) => {
  const w = box.shadowRoot.querySelector('.gv-widget');
  const g = w.querySelector('div.gv-graph').getBoundingClientRect();
  const outside = [...w.querySelectorAll('svg .gv-node')].filter(n => { const r = n.getBoundingClientRect();
      return r.left < g.left - 1 || r.right > g.right + 1 || r.top < g.top - 1 || r.bottom > g.bottom + 1; })
    .map(n => ((n.querySelector('title') || {}).textContent || n.id).split(':')[0]);
  const k = w.getBoundingClientRect().width / w.offsetWidth || 1;
  let html = Infinity, where = '';
  const walk = document.createTreeWalker(w, NodeFilter.SHOW_TEXT);
  for (let t = walk.nextNode(); t; t = walk.nextNode()) {
    const el = t.parentElement;
    if (!t.textContent.trim() || el.closest('svg') || el.closest('[hidden]')) continue;
    const range = document.createRange(); range.selectNodeContents(t);
    const r = range.getBoundingClientRect();
    if (!r.width || !r.height || getComputedStyle(el).visibility === 'hidden') continue;
    const px = parseFloat(getComputedStyle(el).fontSize) * k;
    if (px < html) { html = px; where = t.textContent.trim().slice(0, 40); }
  }
  const cap = w.querySelector('[data-gv="caption"]');
  const cut = cap.scrollHeight > cap.clientHeight + 1 && !cap.parentElement.classList.contains('gv-more-below')
    && cap.scrollTop === 0;
  const slide = box.closest('section').getBoundingClientRect(), wr = w.getBoundingClientRect();
  const scale = window.gradvizDeck.getScale();
  return { outside, html, where, cut, bottom: wr.bottom - (slide.top + 720 * scale), nodes: w.querySelectorAll('svg .gv-node').length,
           whole: w.gvControl.wholeGraph(), frame: w.querySelector('[data-gv="count"]').textContent };
}"""


@pytest.fixture(scope="module")
def deck_path(tmp_path_factory):
    folder, paths = tmp_path_factory.mktemp("decks-fit"), {}

    def path(name):
        if name.startswith("07"):
            pytest.importorskip("torch", reason="lesson 7 runs real PyTorch")
        if name not in paths:
            paths[name] = folder / f"{name}.html"
            paths[name].write_text(deck(NOTEBOOKS / f"{name}.ipynb"), encoding="utf-8")
        return paths[name]
    return path


@pytest.fixture
def open_deck(offline_page, deck_path):
    page = offline_page
    page.set_viewport_size({"width": 1280, "height": 720})

    def go(name):
        page.goto(deck_path(name).as_uri())
        page.wait_for_function("() => window.gradvizDeck && window.gradvizDeck.isReady()")
        page.wait_for_function("() => [...document.querySelectorAll('.gv-fit')].every(b => "
                               "b.shadowRoot.querySelector('.gv-widget[data-gv-ready=\"1\"]'))")
        return page
    yield go
    assert page.gv_blocked == [] and page.gv_errors == []


def show_widget(page, nth):
    page.evaluate("""(nth) => { const d = window.gradvizDeck, box = document.querySelectorAll('.gv-fit')[nth];
        const i = d.getIndices(box.closest('section')), frag = box.closest('.fragment');   // (shown, if in one)
        d.slide(i.h, i.v, frag ? parseInt(frag.dataset.fragmentIndex || '0', 10) : undefined); }""", nth)
    settle(page)
    return page.locator(".gv-fit").nth(nth)


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_widget_shows_its_whole_graph_readable(open_deck, lesson, artifacts):
    page = open_deck(lesson)
    count = page.evaluate("() => document.querySelectorAll('.gv-fit').length")
    assert count >= 1
    for nth in range(count):
        box = show_widget(page, nth)
        widget = box.locator(".gv-widget")
        for at in ("first", "last"):
            if at == "last":
                widget.locator('[data-gv="scrub"]').evaluate(
                    "s => { s.value = s.max; s.dispatchEvent(new Event('input')); }")
                settle(page)
            m = box.evaluate(MEASURE)
            page.screenshot(path=str(artifacts / f"deck-{lesson[:2]}-{nth}-{at}.png"))
            where = f"{lesson} widget {nth + 1} at its {at} frame ({m['frame']})"
            assert m["nodes"] >= 3, where
            assert m["outside"] == [] and m["whole"], f"{where}: nodes outside the box: {m['outside']}"
            assert widget.evaluate(SMALLEST_TEXT) >= 11, where
            assert m["html"] >= 11, f"{where}: {m['html']:.1f} px text: {m['where']!r}"
            assert not m["cut"], f"{where}: the caption is cut without saying so"
            assert m["bottom"] <= 2, f"{where}: the widget runs {m['bottom']:.0f} px off its slide"
        assert box.evaluate("b => b.shadowRoot.querySelector('.gv-host').style.transform") == ""   # never scaled down


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_clicker_alone_plays_every_widget_and_reaches_the_last_slide(open_deck, lesson, artifacts):
    page = open_deck(lesson)
    ended, last = {}, None
    for press in range(3000):
        state = page.evaluate("""() => { const d = window.gradvizDeck;
            const ends = [...document.querySelectorAll('.gv-fit')].map(b => {
              const w = b.shadowRoot.querySelector('.gv-widget');
              return w.gvControl.atEnd() ? { ok: w.querySelectorAll('.gv-check.gv-ok').length,
                                            bad: w.querySelectorAll('.gv-check.gv-bad').length,
                                            leaves: w.querySelectorAll('.gv-dleaf').length,
                                            seen: !b.closest('.fragment:not(.visible)') } : null; });
            return { at: d.getSlidePastCount(), last: d.isLastSlide(), ends }; }""")
        for k, e in enumerate(state["ends"]):
            if e is not None and k not in ended:
                ended[k] = e
                page.screenshot(path=str(artifacts / f"deck-{lesson[:2]}-{k}-clicker-end.png"))
        if state["last"] and last == state["at"]:
            break                                    # the last slide, and → no longer moves anything
        last = state["at"]
        page.keyboard.press("PageDown" if press % 2 else "ArrowRight")
    else:
        raise AssertionError(f"{lesson}: 3000 presses did not reach the end of the deck")
    assert sorted(ended) == list(range(len(state["ends"]))), f"{lesson}: widgets never played to their end"
    unseen = [k for k, e in ended.items() if not e["seen"]]
    assert not unseen, f"{lesson}: widgets {unseen} played to their end while their fragment was hidden"
    for k, e in ended.items():
        assert e["bad"] == 0, f"{lesson} widget {k + 1}: ✗ at its end"
        if e["leaves"]:
            assert e["ok"] >= 1, f"{lesson} widget {k + 1}: no ✓ at its end"


def test_two_widgets_on_a_crowded_slide_get_slides_of_their_own_in_order(offline_page, tmp_path, artifacts):
    """A slide whose text leaves no room: each widget goes on a slide of its own, in the notebook's order."""
    import nbformat

    from gradviz.slides import deck_html, execute_notebook

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    words = " ".join(["The graph below is drawn op by op, and the chain rule is written beside it."] * 6)
    nb.cells = [nbformat.v4.new_markdown_cell(f"## Two graphs\n\n{words}"),
                nbformat.v4.new_code_cell("import gradviz, gradviz as torch\nx = torch.ones(2, requires_grad=True)\n"
                                          "first = (x * 3).sum()\nsecond = (x + 1).sum()"),
                nbformat.v4.new_code_cell("gradviz.animate(first)"),
                nbformat.v4.new_code_cell("gradviz.animate(second)")]
    path = tmp_path / "crowded.html"
    path.write_text(deck_html(execute_notebook(nb, tmp_path)), encoding="utf-8")
    page = offline_page
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(path.as_uri())
    page.wait_for_function("() => window.gradvizDeck && window.gradvizDeck.isReady()")
    order = page.evaluate("""() => [...document.querySelectorAll('.gv-fit')].map(b => {
        const s = b.closest('section'); return [s.classList.contains('gv-own-slide'),
          [...document.querySelectorAll('.reveal .slides section:not(.stack)')].indexOf(s),
          JSON.parse(b.shadowRoot.querySelector('script.gv-state') ? b.shadowRoot.querySelector('script.gv-state').textContent : '{}').root_name
          || b.shadowRoot.querySelector('.gv-widget').getAttribute('aria-label')]; })""")
    assert [own for own, _, _ in order] == [True, True], order
    assert order[0][1] < order[1][1], order                         # the notebook's order
    assert "first" in order[0][2] and "second" in order[1][2], order
    for nth in range(2):
        box = show_widget(page, nth)
        m = box.evaluate(MEASURE)
        assert m["outside"] == [] and m["bottom"] <= 2, m
    page.screenshot(path=str(artifacts / "deck-crowded-second.png"))
    assert page.gv_errors == [] and page.gv_blocked == []
