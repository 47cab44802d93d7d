"""A graph shown in part on a 1280×720 slide: its ends are in view at the ends of the animation
(issue 21, "the output node and the leaves are visible at the start and at the end").

When no layout direction shows the whole graph with its text at 11 px, the widget shows it at a
readable size following the step.  At the first frame and at the last one it shows instead the
output (the backward root) and as many leaves as fit with it, and says so under the box ("The
output and 6 of the 20 leaves are in view: …"); steps in between follow their own nodes.

One deck, three widgets, each on a slide of its own (state made here in Python, as a notebook run
saves it):

- twenty vectors stacked and summed (drawn left to right: the output and some of the leaves fit);
- a chain of twelve ops on one number (top to bottom only: the output alone fits, the leaf is
  twelve ops above it);
- one number through twelve branches, stacked and summed (top to bottom: the graph is too wide, but
  its leaf and its output fit together).

Screenshots: tests/artifacts/ends-<name>-<first|middle|last>.png (look at them).
"""

import numpy as np
import pytest

from browser.conftest import deck_of, settle
from browser.test_decks_fit import MEASURE, show_widget
from browser.test_slides import SMALLEST_TEXT

# What the box shows of the graph's ends: the output's and the leaves' boxes inside the graph's
# visible box (4 px in from its sides is what the widget aims at; 1 px of slack), the step's
# focus nodes inside it, and the note under the box.
ENDS = """(w) => {
  const g = w.querySelector('div.gv-graph');
  const r = g.getBoundingClientRect(), b = g.clientLeft, t = g.clientTop;
  const k = r.width / g.offsetWidth || 1;
  const view = { left: r.left + b * k, top: r.top + t * k, right: r.left + (b + g.clientWidth) * k,
                 bottom: r.top + (t + g.clientHeight) * k };
  const inView = (e) => { const q = e.getBoundingClientRect();
      return q.left >= view.left - 1 && q.right <= view.right + 1 && q.top >= view.top - 1 && q.bottom <= view.bottom + 1; };
  const name = (e) => ((e.querySelector('title') || {}).textContent || e.id).split(':')[0];
  const leaves = [...w.querySelectorAll('svg .gv-node.gv-leaf:not(.gv-root)')];
  const roots = [...w.querySelectorAll('svg .gv-node.gv-root')];
  const focus = [...w.querySelectorAll('svg .gv-node.gv-focus')];
  const note = w.querySelector('[data-gv="partial"]');
  return { drawn: w.dataset.gvRankdir, layout: w.querySelector('.gv-main').dataset.layout,
           roots: roots.length, rootsIn: roots.every(inView),
           leaves: leaves.length, leavesIn: leaves.filter(inView).map(name),
           focus: focus.length, focusIn: focus.filter(inView).length,
           partial: !note.hidden, key: note.dataset.gvNote || 'graph_partial', note: note.textContent,
           zoom: +w.querySelector('.gv-graphcol').dataset.zoom, whole: w.gvControl.wholeGraph(), step: +w.querySelector('[data-gv="scrub"]').value,
           steps: +w.querySelector('[data-gv="scrub"]').max };
}"""


# The derivation panel's checks that are filled in and whole in its box (their leaves' names), top first.
CHECKS_SEEN = """(w) => {
  const d = w.querySelector('.gv-deriv'), v = d.getBoundingClientRect();
  return [...d.querySelectorAll('.gv-check')].filter((c) => { const r = c.getBoundingClientRect();
      return c.textContent.trim() && r.top >= v.top - 1 && r.bottom <= v.bottom + 1; })
    .map((c) => c.dataset.gv.slice('check-'.length));
}"""


def _twenty_vectors():
    import gradviz as torch
    xs = [torch.tensor(np.arange(3.0) * 0.37 + i, requires_grad=True) for i in range(20)]
    return torch.stack(xs).sum()


def _chain():
    import gradviz as torch
    x = torch.tensor(0.5, requires_grad=True)
    y = x
    for i in range(12):
        y = (y * 1.5).tanh() if i % 2 else y + 0.25
    return y


def _branches():
    import gradviz as torch
    x = torch.tensor(0.5, requires_grad=True)
    return torch.stack([x * float(k) for k in range(1, 13)]).sum()


WIDGETS = [("twenty", "Twenty vectors, stacked", _twenty_vectors),
           ("chain", "Twelve ops in a chain", _chain),
           ("branches", "Twelve branches", _branches)]


@pytest.fixture(scope="module")
def ends_deck(tmp_path_factory):
    """The deck: a title slide, then one slide per widget."""
    import gradviz

    widgets = []
    for _, title, make in WIDGETS:
        o = make()
        widgets.append((title, gradviz.animate(o, names={"s": o})))
    path = deck_of(tmp_path_factory.mktemp("ends") / "ends.html", "Graphs shown in part", widgets, "gv-ends")
    return path, [w for _, w in widgets]


@pytest.fixture
def deck_page(offline_page, ends_deck):
    page = offline_page
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(ends_deck[0].as_uri())
    page.wait_for_function("() => window.gradvizDeck && window.gradvizDeck.isReady()")
    page.wait_for_function("n => [...document.querySelectorAll('.gv-fit')].length === n && [...document.querySelectorAll('.gv-fit')]"
                           ".every(b => b.shadowRoot.querySelector('.gv-widget[data-gv-ready=\"1\"]'))", arg=len(WIDGETS))
    yield page
    assert page.gv_blocked == [] and page.gv_errors == []


def scrub(box, k):
    box.locator('[data-gv="scrub"]').evaluate("(s, k) => { s.value = k; s.dispatchEvent(new Event('input')); }", k)


def note_for(s):
    """The note the widget must show at an end, from what is in the box."""
    n, k = s["leaves"], len(s["leavesIn"])
    return "graph_ends_all" if k == n else "graph_ends_some" if k else "graph_ends_none"


def test_the_ends_of_a_graph_shown_in_part_are_in_view_at_the_ends(deck_page, ends_deck, artifacts):
    page, widgets = deck_page, ends_deck[1]
    seen = {}
    for nth, (name, _, _) in enumerate(WIDGETS):
        box = show_widget(page, nth)
        widget = box.locator(".gv-widget")
        steps = len(widgets[nth].frames) - 1
        for at in ("first", "middle", "last"):
            if at == "middle":
                scrub(box, steps // 2)
            elif at == "last":
                # the last step by the clicker, from the one before (the animated, smooth step)
                scrub(box, steps - 1)
                settle(page)
                page.keyboard.press("ArrowRight")
            page.wait_for_function("([b, k]) => +b.shadowRoot.querySelector('[data-gv=\"scrub\"]').value === k",
                                   arg=[box.element_handle(), {"first": 0, "middle": steps // 2, "last": steps}[at]])
            settle(page)
            s = widget.evaluate(ENDS)
            page.screenshot(path=str(artifacts / f"ends-{name}-{at}.png"))
            where = f"{name} at its {at} frame (step {s['step']} of {s['steps']})"
            assert s["partial"], f"{where}: the graph is not readable whole: it is shown in part, and said"
            assert widget.evaluate(SMALLEST_TEXT) >= 11, where
            m = box.evaluate(MEASURE)        # (the layout chosen for the ends keeps the rest readable)
            assert m["html"] >= 11 and not m["cut"] and m["bottom"] <= 2, f"{where}: {m}"
            if at == "middle":
                assert s["focus"] >= 1 and s["focusIn"] == s["focus"], f"{where}: the step's nodes in view: {s}"
                assert s["key"] == "graph_partial", f"{where}: {s['note']}"
                continue
            assert s["roots"] == 1 and s["rootsIn"], f"{where}: the output is not in the box: {s}"
            assert s["key"] == note_for(s), f"{where}: {s['note']!r} for {s}"
            seen[name, at] = s
    # what the box shows, and says, at each end of each graph
    for at in ("first", "last"):
        twenty = seen["twenty", at]
        assert twenty["drawn"] == "LR" and twenty["leaves"] == 20
        assert 4 <= len(twenty["leavesIn"]) < 20, twenty       # the output, and the leaves that fit with it
        assert twenty["note"] == f"The output and {len(twenty['leavesIn'])} of the 20 leaves are in view: " \
                                 "scroll or zoom (− or fit) for the rest", twenty["note"]
        chain = seen["chain", at]
        assert chain["drawn"] == "TB" and chain["leaves"] == 1 and chain["leavesIn"] == [], chain
        assert chain["note"].startswith("The output is in view; no leaf fits beside it"), chain["note"]
        branches = seen["branches", at]
        assert branches["leaves"] == len(branches["leavesIn"]) == 1 and branches["key"] == "graph_ends_all", branches
        assert branches["note"].startswith("The output and every leaf are in view"), branches["note"]


def test_a_saved_page_shows_the_ends_in_its_language_and_leaves_the_students_zoom_alone(
        offline_page, ends_deck, tmp_path, artifacts):
    """The twenty vectors saved as a page in Korean (``save_html(lang="ko")``), opened at its last
    frame in a 1366×768 window: the output and the leaves that fit with it are in view, and the note
    says so in Korean; Home (the first frame) the same.  The student's zoom is theirs: + keeps it
    (the output stays in view) when the window changes size; fit shows the whole graph, no note."""
    from gradviz.widget.i18n import fmt

    page, w = offline_page, ends_deck[1][0]
    path = w.save_html(tmp_path / "twenty-ko.html", lang="ko", frame=len(w.frames) - 1)
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(path.as_uri())
    page.wait_for_selector('.gv-widget[data-gv-ready="1"]')
    settle(page)
    widget = page.locator(".gv-widget")
    for at in ("last", "first"):
        if at == "first":
            widget.focus()
            page.keyboard.press("Home")
            page.wait_for_function("w => +w.querySelector('[data-gv=\"scrub\"]').value === 0", arg=widget.element_handle())
            settle(page)
        s = widget.evaluate(ENDS)
        page.screenshot(path=str(artifacts / f"ends-page-ko-{at}.png"))
        assert s["partial"] and s["rootsIn"] and 1 <= len(s["leavesIn"]) < 20, (at, s)
        assert s["note"] == fmt("ko", "graph_ends_some", k=len(s["leavesIn"]), n=20), (at, s["note"])
        assert widget.evaluate(SMALLEST_TEXT) >= 11, at
        if at == "last":
            # the derivation panel shows the checks of the leaves the graph shows, the first one's
            # lines from the top (it showed another leaf's ✓, half cut, before)
            checks = widget.evaluate(CHECKS_SEEN)
            assert checks and checks[0] in s["leavesIn"], (checks, s["leavesIn"])
            assert "✓" in widget.locator(f'[data-gv="check-{checks[0]}"]').inner_text()
    # a step in the middle, then −: the graph is still shown in part, now smaller than the
    # readable size; the note says it is the student's zoom (it said "at a readable size")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("w => +w.querySelector('[data-gv=\"scrub\"]').value === 1", arg=widget.element_handle())
    settle(page)
    assert widget.evaluate(ENDS)["key"] == "graph_partial"
    widget.locator('[data-gv="zoom-out"]').click()
    page.wait_for_function("w => w.querySelector('[data-gv=\"partial\"]').dataset.gvNote === 'graph_partial_own'",
                           arg=widget.element_handle())
    settle(page)
    out = widget.evaluate(ENDS)
    page.screenshot(path=str(artifacts / "ends-page-ko-zoomed-out.png"))
    assert out["zoom"] < s["zoom"] and out["partial"] and not out["whole"], out
    assert out["note"] == fmt("ko", "graph_partial_own") and out["note"] != fmt("ko", "graph_partial"), out
    # back to the first frame: the ends at the student's zoom, said as at the start
    widget.focus()
    page.keyboard.press("Home")
    page.wait_for_function("w => w.querySelector('[data-gv=\"partial\"]').dataset.gvNote.startsWith('graph_ends')",
                           arg=widget.element_handle())
    settle(page)
    s = widget.evaluate(ENDS)
    assert s["partial"] and s["rootsIn"] and s["key"] == note_for(s), s
    # the student zooms in: the zoom stays theirs, also when the window changes size
    zoom = s["zoom"]
    widget.locator('[data-gv="zoom-in"]').click()
    settle(page)
    zoomed = widget.evaluate(ENDS)
    assert zoomed["zoom"] > zoom * 1.2 and zoomed["rootsIn"], zoomed
    page.set_viewport_size({"width": 1200, "height": 820})
    settle(page)
    resized = widget.evaluate(ENDS)
    assert resized["zoom"] == zoomed["zoom"] and resized["drawn"] == zoomed["drawn"] and resized["rootsIn"], resized
    # fit: the whole graph (its text smaller, the student's choice), nothing said under it
    widget.locator('[data-gv="fit"]').click()
    settle(page)
    fitted = widget.evaluate(ENDS)
    assert fitted["whole"] and not fitted["partial"] and fitted["rootsIn"] and len(fitted["leavesIn"]) == 20, fitted
    page.screenshot(path=str(artifacts / "ends-page-ko-fit.png"))
    assert page.gv_errors == [] and page.gv_blocked == []


LAB_CELLS = [
    "import numpy as np\nimport gradviz\nimport gradviz as torch",
    "xs = [torch.tensor(np.arange(3.0) * 0.37 + i, requires_grad=True) for i in range(20)]\n"
    "s = torch.stack(xs).sum()\ngradviz.animate(s, names={'s': s})",
]


def test_in_jupyterlab_the_cell_shows_the_ends_at_the_start_and_at_the_end(jupyterlab, lab_page, artifacts):
    """The live widget in a notebook cell (anywidget's model, synced from the kernel), twenty
    stacked vectors: at its first frame the output `s` is in the box; in JupyterLab's 1200 px
    window, beside the file browser, no leaf fits with it at 11 px (said so); in a wider window the
    output and some leaves, and after End, at its last frame, the same."""
    page = lab_page
    name = jupyterlab.new_notebook("ends-twenty-vectors.ipynb", LAB_CELLS)
    widget = jupyterlab.run_notebook(page, name, widgets=1).first
    for at in ("first", "wider", "last"):
        if at == "wider":
            page.set_viewport_size({"width": 1680, "height": 900})
            page.wait_for_function("w => w.querySelector('[data-gv=\"partial\"]').dataset.gvNote === 'graph_ends_some'",
                                   arg=widget.element_handle())
            settle(page)
        if at == "last":
            widget.focus()
            page.keyboard.press("End")
            page.wait_for_function("w => w.gvControl.atEnd()", arg=widget.element_handle())
            settle(page)
        s = widget.evaluate(ENDS)
        page.screenshot(path=str(artifacts / f"ends-lab-{at}.png"))
        assert s["partial"] and s["rootsIn"] and s["key"] == note_for(s), (at, s)
        if at == "first":
            assert s["key"] == "graph_ends_none" and s["note"].startswith("The output is in view; no leaf fits"), s
        else:
            assert 1 <= len(s["leavesIn"]) < 20, (at, s)
            assert s["note"].startswith(f"The output and {len(s['leavesIn'])} of the 20 leaves"), s["note"]
        assert widget.evaluate(SMALLEST_TEXT) >= 11, at
    assert page.gv_errors == [] and page.gv_blocked == []
