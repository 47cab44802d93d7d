"""A wide graph on a 1280×720 slide: the widget draws it in the direction whose whole graph is larger
in its box (issue 21, "a layout direction chosen for the box"; docs/layout-direction.md).

The deck holds three widgets, each on a slide of its own: six vectors stacked and summed with
``rankdir="auto"`` (left to right shows it whole at a readable size, top to bottom cannot), the same
graph forced top to bottom (``rankdir="TB"``: shown in part, and said), and twenty vectors (too big
either way: the step's neighbourhood, said, in the larger direction).  The widgets' state is made
here in Python, as a notebook run would save it (no kernel: the deck is what is tested).

Screenshots: tests/artifacts/direction-*.png (look at them).
"""

import numpy as np
import pytest

from browser.conftest import deck_of, settle
from browser.test_decks_fit import MEASURE, show_widget
from browser.test_slides import SMALLEST_TEXT

# What the widget decided and shows: the direction drawn, each direction's whole-graph zoom as it
# compared them, whether the "shown in part" note is up, and the step's lit nodes in the box.
STATE = """(box) => {
  const w = box.shadowRoot.querySelector('.gv-widget');
  const main = w.querySelector('.gv-main');
  const fits = Object.fromEntries((main.dataset.fits || '').split(', ').filter(Boolean)
      .map(p => { const [d, z] = p.split(' '); return [d, +z]; }));
  const svg = w.querySelector('svg.gv-svg');
  const vb = svg.getAttribute('viewBox').split(/\\s+/).map(Number);
  const g = w.querySelector('div.gv-graph').getBoundingClientRect();
  const inBox = (e) => { const r = e.getBoundingClientRect();
      return r.left >= g.left - 1 && r.right <= g.right + 1 && r.top >= g.top - 1 && r.bottom <= g.bottom + 1; };
  const focus = [...w.querySelectorAll('svg .gv-focus')];
  return { drawn: w.dataset.gvRankdir, control: w.gvControl.rankdir(), fits, size: [vb[2], vb[3]],
           partial: !w.querySelector('[data-gv="partial"]').hidden,
           focus: focus.length, focusInBox: focus.every(inBox), focusSeen: focus.some(inBox), layout: main.dataset.layout };
}"""

# Edges whose backward arrowhead does not point at the edge's input (the way the gradient went):
# its tip must be nearer the input node than the op it feeds, whichever way the graph is laid out.
WRONG_WAY = """function wrongWay(w) {
  const svg = w.querySelector('svg.gv-svg');
  const gap = (p, id) => { const n = svg.querySelector(`[data-gv-id="${id}"].gv-node`); const b = n.getBBox();
      return Math.hypot(Math.max(b.x - p[0], 0, p[0] - b.x - b.width), Math.max(b.y - p[1], 0, p[1] - b.y - b.height)); };
  return [...svg.querySelectorAll('.gv-edge')].filter(e => e.querySelector(':scope > .gv-back-head')).filter(e => {
    const tip = e.querySelector(':scope > .gv-back-head').getAttribute('points').split(' ')[0].split(',').map(Number);
    return !(gap(tip, e.dataset.gvSrc) < gap(tip, e.dataset.gvDst));
  }).map(e => e.dataset.gvId);
}
"""

# The frames the widget plays (from its saved state) and what step k lights in the picture.
LIT = "(box) => {" + WRONG_WAY + """
  const w = box.shadowRoot.querySelector('.gv-widget');
  const frames = JSON.parse(box.shadowRoot.querySelector('script.gv-state').textContent).frames;
  const k = +w.querySelector('[data-gv="scrub"]').value, f = frames[k];
  const ids = (cls) => [...w.querySelectorAll('svg .' + cls)].map(e => e.getAttribute('data-gv-id')).sort();
  return { k, want: [...new Set(f.focus || [])].sort(), focus: ids('gv-focus'),
           wantEdges: [...new Set(f.edges || [])].sort(), edges: ids(f.phase === 'forward' ? 'gv-lit-fwd' : 'gv-lit-edge'),
           end: w.gvControl.atEnd(), ok: w.querySelectorAll('.gv-check.gv-ok').length,
           bad: w.querySelectorAll('.gv-check.gv-bad').length, heads: w.querySelectorAll('.gv-back-head').length,
           drawn: w.dataset.gvRankdir, wrongWay: wrongWay(w) };
}"""



def _vectors(n):
    import gradviz as torch
    xs = [torch.tensor(np.arange(3.0) * 0.37 + i, requires_grad=True) for i in range(n)]
    return torch.stack(xs).sum()


@pytest.fixture(scope="module")
def wide_deck(tmp_path_factory):
    """The deck: a title slide, then one slide per widget (state as a notebook run saves it)."""
    import gradviz

    six, twenty = _vectors(6), _vectors(20)
    widgets = [("Six vectors, auto", gradviz.animate(six, names={"s": six})),
               ("Six vectors, top to bottom", gradviz.animate(six, names={"s": six}, rankdir="TB")),
               ("Twenty vectors, auto", gradviz.animate(twenty, names={"s": twenty}))]
    assert widgets[0][1].svg_lr and not widgets[1][1].svg_lr and widgets[2][1].svg_lr
    path = deck_of(tmp_path_factory.mktemp("direction") / "wide.html", "Wide graphs", widgets, "gv-direction")
    return path, [w for _, w in widgets]


@pytest.fixture
def deck_page(offline_page, wide_deck):
    page = offline_page
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(wide_deck[0].as_uri())
    page.wait_for_function("() => window.gradvizDeck && window.gradvizDeck.isReady()")
    page.wait_for_function("() => [...document.querySelectorAll('.gv-fit')].length === 3 && [...document.querySelectorAll('.gv-fit')]"
                           ".every(b => b.shadowRoot.querySelector('.gv-widget[data-gv-ready=\"1\"]'))")
    yield page
    assert page.gv_blocked == [] and page.gv_errors == []


def larger(fits):
    """The direction whose whole graph is larger (a tie, within 1 %: top to bottom)."""
    best = "TB"
    for d, z in fits.items():
        if z > fits.get(best, 0) * 1.01:
            best = d
    return best


def test_the_direction_with_the_larger_whole_graph_is_drawn(deck_page, wide_deck, artifacts):
    page, (auto, forced, big) = deck_page, wide_deck[1]
    seen = []
    for nth, name in enumerate(("six-auto", "six-tb", "twenty-auto")):
        box = show_widget(page, nth)
        s = box.evaluate(STATE)
        page.screenshot(path=str(artifacts / f"direction-{name}.png"))
        seen.append(s)
        m = box.evaluate(MEASURE)
        widget = box.locator(".gv-widget")
        assert m["bottom"] <= 2 and not m["cut"], (name, m)
        assert widget.evaluate(SMALLEST_TEXT) >= 11, name        # never scaled below readable
        assert s["drawn"] == s["control"], name
        if name == "six-tb":
            assert s["drawn"] == "TB" and s["fits"] == {}          # forced: one drawing, nothing chosen
            assert s["partial"] and m["outside"], "top to bottom cannot show it whole at 11 px: said so"
            continue
        assert set(s["fits"]) == {"TB", "LR"}, s
        assert s["drawn"] == larger(s["fits"]) == "LR", s
        # the picture drawn is the LR one of the traits, not the TB one
        want = auto if name == "six-auto" else big
        assert f'viewBox="0.00 0.00 {s["size"][0]:.2f} {s["size"][1]:.2f}"' in want.svg_lr
        if name == "six-auto":
            assert not s["partial"] and m["outside"] == [] and m["whole"], (s, m)   # every node in the box
        else:
            assert s["partial"], "twenty vectors cannot be read whole either way: said so"
    # left to right shows the six vectors larger than top to bottom does in the same slide's box
    assert seen[0]["fits"]["LR"] > seen[0]["fits"]["TB"]
    assert seen[1]["layout"] in ("side", "stack")


def test_the_animation_plays_to_its_check_mark_in_the_direction_drawn(deck_page, artifacts):
    """A clicker alone (→) plays the left-to-right widget to its ✓: every step lights the nodes and
    edges its frame names (the LR drawing has the TB drawing's ids), gradients point back."""
    page = deck_page
    for nth in (0, 2):
        box = show_widget(page, nth)
        for press in range(400):
            lit = box.evaluate(LIT)
            assert lit["drawn"] == "LR"
            assert lit["focus"] == lit["want"], f"widget {nth} step {lit['k']}: lit {lit['focus']}, frame {lit['want']}"
            assert lit["edges"] == lit["wantEdges"], f"widget {nth} step {lit['k']}"
            if lit["end"]:
                break
            page.keyboard.press("ArrowRight")
        else:
            raise AssertionError(f"widget {nth}: 400 presses did not reach its end")
        settle(page)
        s = box.evaluate(STATE)
        # the step's nodes in view: all of them with the whole graph shown, else the part followed
        assert s["focusInBox"] if nth == 0 else s["focusSeen"], s
        assert lit["ok"] >= 1 and lit["bad"] == 0 and lit["heads"] >= 1, lit
        assert lit["wrongWay"] == [], "every gradient's arrow points back to the input it went to"
        page.screenshot(path=str(artifacts / f"direction-end-{nth}.png"))


def test_a_page_that_changes_size_redraws_in_the_direction_its_box_wants(offline_page, wide_deck, tmp_path, artifacts):
    """The choice is the box's, made again when it changes: twenty vectors in a very wide, short page
    are larger top to bottom, in a narrower, taller one left to right; the step shown (its lit
    nodes, its gradients, its ✓) is drawn again on the other drawing.  Zoomed by hand, it stays."""
    page, big = offline_page, wide_deck[1][2]
    path = big.save_html(tmp_path / "twenty.html", frame=len(big.frames) - 1)
    page.set_viewport_size({"width": 2400, "height": 560})
    page.goto(path.as_uri())
    page.wait_for_selector('.gv-widget[data-gv-ready="1"]')
    settle(page)
    widget = page.locator(".gv-widget")
    looks = []
    for size in ({"width": 2400, "height": 560}, {"width": 1000, "height": 900}, {"width": 2400, "height": 560}):
        page.set_viewport_size(size)
        settle(page)
        s = widget.evaluate("""w => ({ drawn: w.dataset.gvRankdir, fits: w.querySelector('.gv-main').dataset.fits,
            grads: [...w.querySelectorAll('svg .gv-grad:not(.gv-hidden)')].length,
            focus: [...w.querySelectorAll('svg .gv-focus')].map(e => e.getAttribute('data-gv-id')).sort(),
            ok: w.querySelectorAll('.gv-check.gv-ok').length, step: w.querySelector('[data-gv="count"]').textContent })""")
        fits = dict((d, float(z)) for d, z in (p.split(" ") for p in s["fits"].split(", ")))
        assert s["drawn"] == larger(fits), s
        page.screenshot(path=str(artifacts / f"direction-page-{size['width']}.png"))
        looks.append(s)
    assert [s["drawn"] for s in looks] == ["TB", "LR", "TB"], looks
    for s in looks[1:]:     # the same step, drawn again on the other drawing
        assert {k: s[k] for k in ("grads", "focus", "ok", "step")} == {k: looks[0][k] for k in ("grads", "focus", "ok", "step")}
    assert looks[0]["grads"] >= 20 and looks[0]["ok"] >= 1
    # zoomed by hand, the picture keeps its direction (and the student's place) as the page changes
    widget.locator('[data-gv="zoom-in"]').click()
    page.set_viewport_size({"width": 1000, "height": 900})
    settle(page)
    assert widget.evaluate("w => w.dataset.gvRankdir") == "TB"
    assert page.gv_errors == [] and page.gv_blocked == []


LAB_CELLS = [
    "import numpy as np\nimport gradviz\nimport gradviz as torch",
    "xs = [torch.tensor(np.arange(3.0) * 0.37 + i, requires_grad=True) for i in range(6)]\n"
    "s = torch.stack(xs).sum()\nw = gradviz.animate(s, names={'s': s})\nw",
    "w.lang = 'ko'",
]


def test_in_jupyterlab_the_cell_gets_the_larger_direction_and_keeps_it_across_a_new_language(
        jupyterlab, lab_page, artifacts):
    """The live widget (anywidget's model, synced from the kernel): the notebook cell's box picks
    left to right for the six stacked vectors; the kernel rewording both drawings (lang='ko')
    keeps that direction; the animation plays to its ✓ there."""
    page = lab_page
    name = jupyterlab.new_notebook("direction-six-vectors.ipynb", LAB_CELLS)
    widget = jupyterlab.run_notebook(page, name, widgets=1).first
    page.wait_for_function("w => w.lang === 'ko'", arg=widget.element_handle(), timeout=30000)
    settle(page)
    s = widget.evaluate("""w => ({ drawn: w.dataset.gvRankdir, fits: w.querySelector('.gv-main').dataset.fits,
        titles: [...w.querySelectorAll('svg .gv-node title')].map(t => t.textContent).join(' | ') })""")
    fits = dict((d, float(z)) for d, z in (p.split(" ") for p in s["fits"].split(", ")))
    assert s["drawn"] == larger(fits) == "LR", s
    assert "텐서" in s["titles"], s["titles"][:200]            # the LR drawing, worded in Korean
    widget.focus()
    page.keyboard.press("End")
    page.wait_for_function("w => w.querySelectorAll('.gv-check.gv-ok').length >= 1", arg=widget.element_handle())
    settle(page)
    assert widget.evaluate("w => w.querySelectorAll('.gv-check.gv-bad').length") == 0
    assert widget.evaluate("w => w.dataset.gvRankdir") == "LR"
    page.screenshot(path=str(artifacts / "direction-lab.png"))
    assert page.gv_errors == [] and page.gv_blocked == []
