"""Issue 8's picture checks, on saved pages (offline) and in a live JupyterLab at 1366×768.

- the whole widget fits the window, so a student never scrolls the notebook during an animation;
- the smallest graph text on screen is at least 11 px (its font size times the SVG's screen scale);
- the ✓ of the derivation is in view at the end of the animation;
- the gradient labels on the edges never overlap;
- during backward the lit edge's arrowhead is at the input end (the gradient goes op -> input),
  during forward at the op end.

Screenshots go to tests/artifacts/fit-*.png and lab-fit-*.png: look at them.
"""

import re

import pytest

from browser.conftest import settle, visible_nodes, wait_ready
from gradviz.widget import AutogradWidget
from test_notebooks import NOTEBOOKS
from widget_lessons import LESSONS

VIEW = {"width": 1366, "height": 768}

# smallest on-screen size of a graph text that is shown and inside the graph's box
SMALLEST_TEXT = """w => { let min = Infinity;
    const box = w.querySelector('div.gv-graph').getBoundingClientRect();
    for (const t of w.querySelectorAll('svg.gv-svg text')) {
      if (t.closest('.gv-hidden') || !t.textContent.trim()) continue;
      const r = t.getBoundingClientRect();
      if (r.width === 0 || r.bottom < box.top || r.top > box.bottom || r.right < box.left || r.left > box.right) continue;
      min = Math.min(min, parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a);
    }
    return min; }"""

# the screen rects of every gradient label shown on an edge
EDGE_LABELS = """w => [...w.querySelectorAll('svg.gv-svg .gv-edge-grad')]
    .filter(g => !g.classList.contains('gv-hidden'))
    .map(g => { const texts = [...g.querySelectorAll('text')].filter(t => t.textContent.trim());
                const rs = texts.map(t => t.getBoundingClientRect());
                return [Math.min(...rs.map(r => r.left)), Math.min(...rs.map(r => r.top)),
                        Math.max(...rs.map(r => r.right)), Math.max(...rs.map(r => r.bottom)),
                        texts.map(t => t.textContent).join(' ')]; })
    .filter(r => r[2] > r[0])"""

# where the visible arrowheads of the lit edges are: nearer the input (src) or the op (dst)
ARROWS = """w => [...w.querySelectorAll('svg.gv-svg .gv-edge.gv-lit-edge, svg.gv-svg .gv-edge.gv-lit-fwd')].map(e => {
    const centre = r => [(r.left + r.right) / 2, (r.top + r.bottom) / 2];
    const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1]);
    const node = id => w.querySelector(`svg.gv-svg .gv-node[data-gv-id="${id}"]`).getBoundingClientRect();
    const src = centre(node(e.dataset.gvSrc)), dst = centre(node(e.dataset.gvDst));
    const heads = [...e.querySelectorAll('polygon')].filter(p => {
      const s = getComputedStyle(p); const r = p.getBoundingClientRect();
      return s.display !== 'none' && s.visibility !== 'hidden' && r.width > 1 && r.height > 1; });
    return heads.map(p => { const c = centre(p.getBoundingClientRect()); return dist(c, src) < dist(c, dst) ? 'input' : 'op'; });
  })"""


# the drawing against its box: is the whole graph in view?
GRAPH_IN_BOX = """w => { const s = w.querySelector('svg.gv-svg').getBoundingClientRect();
    const b = w.querySelector('[data-gv="graph"]').getBoundingClientRect();
    return {svg: [s.width, s.height], box: [b.width, b.height],
            fits: s.left >= b.left - 1 && s.right <= b.right + 1 && s.top >= b.top - 1 && s.bottom <= b.bottom + 1}; }"""


# lines of the derivation wider than the panel (each would scroll sideways on its own)
WIDE_MATH = """w => [...w.querySelectorAll('[data-gv="derivation"] .gv-math')]
    .filter(e => e.offsetParent && e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 80))"""


def overlaps(rects, slack=0.5):
    bad = []
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            if a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack:
                bad.append((a[4], b[4]))
    return bad


def check_in_view(widget):
    """A ✓ of the derivation (the one set last) is in the derivation panel's visible part and the window."""
    checks = widget.locator(".gv-check.gv-ok")
    assert checks.count() and "✓" in checks.first.inner_text()
    d = widget.locator('[data-gv="derivation"]').bounding_box()
    view = widget.page.viewport_size
    for i in range(checks.count()):
        c = checks.nth(i).bounding_box()
        if d["y"] - 1 <= c["y"] and c["y"] + c["height"] <= d["y"] + d["height"] + 1 \
                and c["y"] >= 0 and c["y"] + c["height"] <= view["height"]:
            return True
    return False


def saved(tmp_path_factory, lesson, **options):
    root, names, gradient = LESSONS[lesson]()
    w = AutogradWidget(root, gradient, names=names, **options)
    path = tmp_path_factory.mktemp("fit") / f"{lesson}.html"
    w.save_html(path)
    return w, path


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    cache = {}

    def get(lesson):
        if lesson not in cache:
            cache[lesson] = saved(tmp_path_factory, lesson)
        return cache[lesson]
    return get


def open_saved(page, pages, lesson):
    """The lesson's saved page at 1366×768: (the AutogradWidget it was saved from, the widget on screen)."""
    w, path = pages(lesson)
    page.set_viewport_size(VIEW)
    page.goto(path.as_uri())
    return w, wait_ready(page)


@pytest.mark.parametrize("lesson", ["seed", "tiny_mlp", "tutorial", "fan_out"])
def test_saved_page_fits_reads_and_checks(offline_page, pages, artifacts, lesson):
    page = offline_page
    w, widget = open_saved(page, pages, lesson)
    box = widget.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= VIEW["height"], box      # fits, no page scroll
    assert page.evaluate("() => document.scrollingElement.scrollHeight") <= VIEW["height"]
    assert visible_nodes(widget) >= 6
    assert widget.evaluate(SMALLEST_TEXT) >= 11
    widget.locator('[data-gv="graph"]').click()
    page.keyboard.press("End")
    settle(page)
    assert widget.evaluate(SMALLEST_TEXT) >= 11
    assert check_in_view(widget)
    labels = widget.evaluate(EDGE_LABELS)
    assert labels, "no gradient on any edge at the end of the backward pass"
    assert overlaps(labels) == []
    page.screenshot(path=str(artifacts / f"fit-{lesson}-end.png"))
    assert page.gv_errors == [] and page.gv_blocked == []


def test_backward_arrows_point_at_the_input(offline_page, pages, artifacts):
    page = offline_page
    w, widget = open_saved(page, pages, "seed")
    fwd = next(i for i, f in enumerate(w.frames) if f["phase"] == "forward" and f["edges"])
    bwd = [i for i, f in enumerate(w.frames) if f["phase"] == "backward" and f["edges"]]
    assert bwd
    widget.locator('[data-gv="scrub"]').fill(str(fwd))
    assert widget.evaluate(ARROWS) and all(heads == ["op"] for heads in widget.evaluate(ARROWS))
    for k in bwd:
        widget.locator('[data-gv="scrub"]').fill(str(k))
        arrows = widget.evaluate(ARROWS)
        assert arrows and all(heads == ["input"] for heads in arrows), (k, arrows)
    widget.locator('[data-gv="scrub"]').fill(str(bwd[len(bwd) // 2]))
    page.screenshot(path=str(artifacts / "fit-seed-backward.png"))


def test_zoom_pan_fit_and_key(offline_page, pages):
    page = offline_page
    w, widget = open_saved(page, pages, "tiny_mlp")
    graph = widget.locator('[data-gv="graph"]')
    zoom = lambda: float(widget.locator(".gv-graphcol").get_attribute("data-zoom"))  # noqa: E731
    z0 = zoom()
    widget.locator('[data-gv="zoom-in"]').click()
    assert zoom() > z0 * 1.2
    widget.locator('[data-gv="zoom-out"]').click()
    widget.locator('[data-gv="zoom-out"]').click()
    assert zoom() < z0
    widget.locator('[data-gv="fit"]').click()               # the whole graph in its box
    g, svg = graph.bounding_box(), widget.locator("svg.gv-svg").bounding_box()
    assert svg["width"] <= g["width"] + 1 and svg["height"] <= g["height"] + 1
    widget.locator('[data-gv="zoom-in"]').click()
    widget.locator('[data-gv="zoom-in"]').click()
    before = graph.evaluate("g => [g.scrollLeft, g.scrollTop]")
    page.mouse.move(g["x"] + g["width"] / 2, g["y"] + g["height"] / 2)
    page.mouse.down()
    page.mouse.move(g["x"] + g["width"] / 2 - 60, g["y"] + g["height"] / 2 - 80, steps=5)
    page.mouse.up()
    after = graph.evaluate("g => [g.scrollLeft, g.scrollTop]")
    assert after != before                                   # dragged: the picture panned
    legend = widget.locator('[data-gv="legend"]')
    assert legend.is_hidden()
    widget.locator('[data-gv="key"]').click()
    assert legend.is_visible() and "leaf" in legend.inner_text() and "constant" in legend.inner_text()
    widget.locator('[data-gv="key"]').click()
    assert legend.is_hidden()
    widget.locator('[data-gv="fullscreen"]').click()        # the widget alone, the whole screen
    page.wait_for_function("() => document.fullscreenElement && document.fullscreenElement.matches('.gv-widget')")
    settle(page)
    assert widget.bounding_box()["height"] == VIEW["height"]
    widget.locator('[data-gv="fullscreen"]').click()
    page.wait_for_function("() => !document.fullscreenElement")
    assert page.gv_errors == []


# --- in JupyterLab, at 1366×768 --------------------------------------------------------------------

SEED_CELLS = [
    "import gradviz\nimport gradviz as torch",
    "x = torch.ones(2, requires_grad=True)\ny = 5 * (x + 1) ** 2\no = (1/2) * torch.sum(y)\ngradviz.animate(o)",
]


def fits_in_notebook(widget):
    """Scroll the notebook so the widget's top is at the top; is all of it then inside the notebook's view?"""
    return widget.evaluate("""w => {
        const scroller = w.closest('.jp-WindowedPanel-outer') || w.closest('.jp-Notebook');
        w.scrollIntoView({block: 'start'});
        const v = scroller.getBoundingClientRect(), r = w.getBoundingClientRect();
        return {fits: r.top >= v.top - 1 && r.bottom <= v.bottom + 1 && r.bottom <= innerHeight,
                widget: r.height, view: v.height}; }""")


def lab_widget_checks(page, widget, artifacts, name):
    fit = fits_in_notebook(widget)
    assert fit["fits"], fit
    assert widget.evaluate(SMALLEST_TEXT) >= 11
    assert widget.evaluate(GRAPH_IN_BOX)["fits"], widget.evaluate(GRAPH_IN_BOX)   # no panning needed
    widget.locator('[data-gv="graph"]').click()
    page.keyboard.press("End")
    settle(page)
    assert check_in_view(widget)
    assert widget.evaluate(SMALLEST_TEXT) >= 11
    assert overlaps(widget.evaluate(EDGE_LABELS)) == []
    page.screenshot(path=str(artifacts / f"lab-fit-{name}.png"))
    return fit


def test_seed_widget_fits_jupyterlab(jupyterlab, lab_page, artifacts):
    page = lab_page
    page.set_viewport_size(VIEW)
    jupyterlab.run_notebook(page, jupyterlab.new_notebook("fit-seed.ipynb", SEED_CELLS))
    widget = wait_ready(page, ".jp-OutputArea-output", timeout=90000)
    lab_widget_checks(page, widget, artifacts, "seed")
    assert not page.gv_blocked


def test_lesson_6_network_fits_jupyterlab(jupyterlab, lab_page, artifacts):
    page = lab_page
    page.set_viewport_size(VIEW)
    name = jupyterlab.copy_notebook(NOTEBOOKS / "06_neuron_and_mlp.ipynb", "fit-06.ipynb")
    # three widgets: the neuron's, the practice cell's, the training step's
    jupyterlab.run_notebook(page, name, widgets=3, timeout=240000)
    widgets = page.locator('.jp-OutputArea-output .gv-widget[data-gv-ready="1"]:not(.gv-practicing)')
    # the training step's graph: the widget with the most nodes (the practice one before it asks first)
    sizes = [widgets.nth(i).evaluate("w => w.querySelectorAll('svg .gv-node').length") for i in range(widgets.count())]
    widget = widgets.nth(sizes.index(max(sizes)))
    assert max(sizes) >= 15
    lab_widget_checks(page, widget, artifacts, "mlp")
    assert not page.gv_blocked


def test_factor_lights_in_step_and_a_click_jumps_to_its_step(offline_page, pages, artifacts):
    page = offline_page
    w, widget = open_saved(page, pages, "seed")
    applying = {}
    for k, f in enumerate(w.frames):
        for key in (f.get("chain") or {}).get("factors", []):
            applying.setdefault(":".join(map(str, key)), k)
    assert applying, "no frame says which factor it applies"
    key, k = sorted(applying.items(), key=lambda kv: kv[1])[len(applying) // 2]
    chip = widget.locator(f'[data-gv-factor="{key}"]')
    assert chip.count() == 1 and "gv-factor-now" not in chip.get_attribute("class")
    chip.click()                                             # jumps to the step that applies it
    assert int(widget.locator('[data-gv="scrub"]').input_value()) == k
    page.wait_for_function("el => el.classList.contains('gv-factor-now')", arg=chip.element_handle(),
                           timeout=3000)            # the panel follows at the next animation frame
    so_far = widget.locator('[data-gv="so-far"]')
    assert so_far.is_visible() and "∂" in so_far.inner_text()
    widget.locator('[data-gv="step"]').click()               # the next step lights its own factor
    settle(page)
    lit = widget.evaluate("w => [...w.querySelectorAll('.gv-factor-now')].map(e => e.dataset.gvFactor)")
    assert key not in lit or len(lit) > 1
    page.screenshot(path=str(artifacts / "fit-seed-factor.png"))
    assert page.gv_errors == []


def test_pinch_zooms_on_a_touch_screen(browser_context, pages):
    w, path = pages("seed")
    page = browser_context.browser.new_context(viewport=VIEW, has_touch=True).new_page() \
        if browser_context.browser else None
    if page is None:                                          # a persistent context has no browser object
        pytest.skip("needs a touch context")
    try:
        page.goto(path.as_uri())
        widget = wait_ready(page)
        g = widget.locator('[data-gv="graph"]').bounding_box()
        cx, cy = g["x"] + g["width"] / 2, g["y"] + g["height"] / 2
        z0 = float(widget.locator(".gv-graphcol").get_attribute("data-zoom"))
        cdp = page.context.new_cdp_session(page)

        def touch(kind, points):
            cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [
                {"x": x, "y": y, "id": i} for i, (x, y) in enumerate(points)]})
        touch("touchStart", [(cx - 30, cy), (cx + 30, cy)])
        for d in range(30, 70, 10):
            touch("touchMove", [(cx - d, cy), (cx + d, cy)])
        touch("touchEnd", [])
        assert float(widget.locator(".gv-graphcol").get_attribute("data-zoom")) > z0 * 1.8
    finally:
        page.context.close()


@pytest.mark.parametrize("lesson", ["seed", "tiny_mlp", "tutorial", "fan_out"])
def test_whole_graph_fits_its_box_at_the_default_zoom(offline_page, pages, artifacts, lesson):
    """Compact nodes (a batch drawn as its norm, its matrix in the tooltip), each op on the rank of
    the tensor it makes: at 1366×768 the whole graph is in its box at the default zoom with text
    >= 11 px, at the start and at the end -- lesson 6's 2-4-1 network on the XOR batch included
    (it was 783×1757 px in an 801×562 box, to be panned)."""
    page = offline_page
    w, widget = open_saved(page, pages, lesson)
    for moment in ("start", "end"):
        if moment == "end":
            widget.locator('[data-gv="graph"]').click()
            page.keyboard.press("End")
            settle(page)
        fit = widget.evaluate(GRAPH_IN_BOX)
        assert fit["fits"], (moment, fit)
        assert widget.evaluate(SMALLEST_TEXT) >= 11
        assert visible_nodes(widget) == len([n for n in w.graph["nodes"]])
        page.screenshot(path=str(artifacts / f"fit-{lesson}-box-{moment}.png"))


@pytest.mark.parametrize("size", [(1366, 768), (1280, 720)], ids=["1366x768", "1280x720"])
def test_long_matrix_formulas_fit_the_panel(offline_page, pages, artifacts, size):
    """Lesson 6's chain rule for W₁ is one short line, ``Xᵀ[(δ W₂ᵀ) ⊙ (1 − tanh²(b))]``, with
    ``δ = ∂loss/∂d = 1/n · (2f) = 1/4 · (2f)`` defined once above: no line of the derivation
    scrolls sideways, at the start and at the end."""
    page = offline_page
    w, widget = open_saved(page, pages, "tiny_mlp")
    page.set_viewport_size({"width": size[0], "height": size[1]})
    settle(page)
    assert re.search("[δ𝛿]", widget.locator(".gv-where").inner_text())        # (MathML writes an italic δ)
    assert widget.evaluate(WIDE_MATH) == []
    widget.locator('[data-gv="graph"]').click()
    page.keyboard.press("End")
    settle(page)
    assert widget.evaluate(WIDE_MATH) == []
    page.screenshot(path=str(artifacts / f"fit-mlp-derivation-{size[0]}x{size[1]}.png"))


# every text of a node that crosses its box, by how many screen px: (node id, text, px)
TEXT_OUTSIDE_NODES = """w => { const out = [];
  for (const g of w.querySelectorAll('svg.gv-svg g.gv-node')) {
    const shape = g.querySelector('.gv-shape');
    if (!shape) continue;
    const b = shape.getBoundingClientRect();
    for (const t of g.querySelectorAll('text')) {
      if (!t.textContent.trim() || t.closest('.gv-hidden')) continue;
      const r = t.getBoundingClientRect();
      if (r.width === 0) continue;
      const o = Math.max(b.left - r.left, r.right - b.right, b.top - r.top, r.bottom - b.bottom);
      if (o > 0.5) out.push([g.dataset.gvId, t.textContent.slice(0, 40), Math.round(o * 10) / 10]);
    }
  }
  return out; }"""


@pytest.mark.parametrize("lesson", ["seed", "vector_jacobian", "tiny_mlp"])
def test_node_text_stays_in_its_box(offline_page, tmp_path, artifacts, lesson):
    """Issue 21: lesson 5's x.grad matrix (it accumulates to [[0, 120], [120, 0]] after the
    notebook's own call) and lesson 6's leaves' '.grad norm ...' crossed their boxes: a leaf's box
    is laid out for the widest .grad its frames write.  A value longer than the layout (a live press
    after training) is narrowed into the box; its tooltip keeps it whole."""
    root, names, gradient = LESSONS[lesson]()
    if lesson == "vector_jacobian":
        root.backward(gradient, retain_graph=True)          # the notebook's own call: .grad accumulates
    w = AutogradWidget(root, gradient, names=names)
    leaf = next(n["id"] for n in w.graph["nodes"] if n["kind"] == "leaf" and n["name"] in ("x", "W1"))
    last = dict(w.frames[-1], set=dict(w.frames[-1]["set"], **{f"val:{leaf}": "[123456.7890, -98765.4321, 0.1234]"}))
    from gradviz.widget import standalone_html
    path = tmp_path / f"{lesson}-text.html"
    path.write_text(standalone_html(dict(w.state(), frames=w.frames[:-1] + [last])), encoding="utf-8")
    page = offline_page
    page.set_viewport_size(VIEW)
    page.goto(path.as_uri())
    widget = wait_ready(page)
    assert widget.evaluate(TEXT_OUTSIDE_NODES) == []
    widget.locator('[data-gv="graph"]').click()
    page.keyboard.press("End")
    widget.locator('[data-gv="count"]').filter(has_text=f"{len(w.frames)} / {len(w.frames)}").wait_for(timeout=20000)
    page.wait_for_function(f"() => document.querySelector('[id$=\"-gv-{leaf}-val\"] text').textContent.startsWith('[123456')",
                           timeout=20000)
    page.screenshot(path=str(artifacts / f"fit-text-{lesson}-end.png"))
    assert widget.evaluate(TEXT_OUTSIDE_NODES) == []
    assert widget.evaluate(SMALLEST_TEXT) >= 11
    assert page.gv_errors == [] and page.gv_blocked == []
