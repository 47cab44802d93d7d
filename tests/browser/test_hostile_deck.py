"""A deck built from a notebook nobody here wrote runs nothing and loads nothing, in a real Chromium.

The notebook carries payloads wherever a notebook can carry markup: raw HTML in markdown cells,
headings, speaker notes and ``text/markdown`` outputs, LaTeX that latex2mathml passes through
(``\\text{<svg onload>}``, ``\\unicode{<img>}``, ``\\style{background-image:url(...)}``,
``\\text{<style>}``), ``[x](javascript:...)`` links, slide metadata, the notebook's language, and a
saved gradviz widget state whose SVG and MathML are poisoned (as a notebook saved elsewhere and
built with ``--no-execute`` would be). Three detectors: dialogs opened, requests that are not
``file:``/``data:``, and inline handlers or ``javascript:`` URLs left in the DOM (shadow roots
included). All must be 0, after every slide was shown, every link clicked and the widget played
to its end. A control page holding the same payloads unsanitised proves each detector fires.

Screenshots: tests/artifacts/hostile-deck-*.png.
"""


import nbformat
import pytest

import gradviz as torch
from gradviz.slides import deck_html
from gradviz.widget import AutogradWidget

EVIL = "http://evil.invalid"

MARKDOWN = [
    '<img src=x onerror="alert(\'md-img\')">',
    "<svg/onload=alert('md-svg')>",
    "<script>alert('md-script')</script>",
    '<iframe src="javascript:alert(\'md-iframe\')"></iframe>',
    "<details open ontoggle=alert('md-details')><summary>s</summary></details>",
    '<a href="javascript:alert(\'md-a\')">html link</a>',
    "[markdown link](javascript:alert('md-link'))",
    f'<img src="{EVIL}/md.png">',
    f'<span style="background-image:url({EVIL}/style.png); color: red">styled</span>',
    f"<style>body {{ background: url({EVIL}/body.png) }} * {{ display: none }}</style>",
    f'<link rel="stylesheet" href="{EVIL}/x.css">',
    '<form action="javascript:alert(\'md-form\')"><button id="gv-evil-button">go</button></form>',
    '<object data="javascript:alert(\'md-object\')"></object><embed src="javascript:alert(1)">',
    '<math><maction actiontype="statusline" xlink:href="javascript:alert(\'md-math\')">m</maction></math>',
]
LATEX = [
    r"$\text{<svg/onload=alert('tex-svg')>}$",
    r"$\text{<img/src/onerror=alert('tex-img')>}$",
    r"$\unicode{<img src=x onerror=alert('tex-unicode')>}$",
    r"$\style{background-image:url(" + EVIL + r"/tex.png)}{x}$",
    r"$\text{<style>*{display:none}</style>}$",
    r"$$\href{javascript:alert('tex-href')}{x}$$",
    r"$x^{<img src=x onerror=alert('tex-sup')>}$",
]


def _poisoned_widget_state():
    """A real widget's saved state with payloads in its SVG and every MathML string."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    o = (x * 3).sum()
    state = AutogradWidget(o).state()
    svg = state["svg"]
    at = svg.index(">") + 1
    state["svg"] = (svg[:at].replace("<svg ", "<svg onload=\"alert('svg-root')\" ")
                    + "<script>alert('svg-script')</script>"
                    + "<foreignObject><img xmlns=\"http://www.w3.org/1999/xhtml\" src=\"x\" onerror=\"alert('svg-fo')\"/></foreignObject>"
                    + f'<image href="{EVIL}/svg.png"/><use href="{EVIL}/sprite.svg#a"/>'
                    + "<a href=\"javascript:alert('svg-a')\"><text>click</text></a>"
                    + "<set attributeName=\"onmouseover\" to=\"alert('svg-set')\"/>"
                    + f"<style>svg {{ background: url({EVIL}/svgcss.png) }}</style>"
                    + svg[at:])
    bad = "<img src=x onerror=\"alert('mathml')\"><svg onload=\"alert('mathml-svg')\"></svg>"

    def poison(value):
        if isinstance(value, dict):
            return {k: (v.replace("</math>", bad + "</math>") if k == "mathml" and isinstance(v, str) else poison(v))
                    for k, v in value.items()}
        if isinstance(value, list):
            return [poison(v) for v in value]
        return value
    state["derivation"] = poison(state["derivation"])
    state["frames"] = poison(state["frames"])
    return {"model_name": "AnyModel", "model_module": "anywidget", "model_module_version": "*", "state": state}


def hostile_notebook(html_outputs=False):
    """The notebook as saved elsewhere (outputs and widget state in it; built with --no-execute)."""
    new_md, new_code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    slide = {"slideshow": {"slide_type": "slide"}}
    cells = [
        new_md("# Title <img src=x onerror=\"alert('heading')\"> " + LATEX[0], metadata=slide),
        new_md("\n\n".join(MARKDOWN), metadata={"slideshow": {"slide_type": "slide",
                                                              "data": {"background-iframe": "javascript:alert('data')",
                                                                       "x onmouseover": "alert('data-key')"}}}),
        new_md("## Formulas\n\n" + "\n\n".join(LATEX), metadata=slide),
        new_md("Notes: " + " ".join(MARKDOWN[:4]) + LATEX[1], metadata={"slideshow": {"slide_type": "notes"}}),
    ]
    md_out = new_code("Markdown(...)", metadata=slide)
    md_out.outputs = [nbformat.v4.new_output("display_data", data={
        "text/markdown": "\n\n".join(MARKDOWN + LATEX), "text/plain": "<Markdown>"})]
    cells.append(md_out)
    widget = new_code("gradviz.animate(o)", metadata=slide)
    widget.outputs = [nbformat.v4.new_output("display_data", data={
        "application/vnd.jupyter.widget-view+json": {"model_id": "m1", "version_major": 2, "version_minor": 1},
        "text/plain": "AutogradWidget(...)"}, metadata={"gradviz_widget": True})]
    cells.append(widget)
    raw = nbformat.v4.new_raw_cell("<img src=x onerror=\"alert('raw')\">", metadata={"raw_mimetype": "text/html"})
    cells.append(raw)
    if html_outputs:
        out = new_code("HTML(...)", metadata=slide)
        out.outputs = [
            nbformat.v4.new_output("display_data", data={"text/html": "\n".join(MARKDOWN), "text/plain": "<HTML>"}),
            nbformat.v4.new_output("display_data", data={"application/javascript": "alert('js-output')"}),
            nbformat.v4.new_output("display_data", data={
                "image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' onload=\"alert('svg-output')\"><rect/></svg>"}),
        ]
        cells.append(out)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["lang"] = "en\"><img src=x onerror=\"alert('lang')\">"
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "version_major": 2, "version_minor": 0, "state": {"m1": _poisoned_widget_state()}}}
    return nb


# Every element with an inline handler, every javascript: URL, in the document and its shadow roots
FIND_INLINE = """() => {
  const found = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      for (const a of el.attributes) {
        const v = a.value.replace(/[\\s\\u0000-\\u001f]/g, '').toLowerCase();
        if (/^on/i.test(a.name) || v.startsWith('javascript:')) found.push(`<${el.localName} ${a.name}=${a.value.slice(0, 60)}>`);
      }
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return found;
}"""


# a click on every link and button, HTML's or SVG's (a javascript: URL runs on click)
CLICK_ALL = """() => document.querySelectorAll('a, button, details, summary').forEach((a) =>
    a.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true})))"""


def detectors(page):
    page.gv_dialogs = []
    page.on("dialog", lambda d: (page.gv_dialogs.append(d.message), d.dismiss()))


def walk_the_deck(page, artifacts, name):
    """Show every slide, play the widget to its end, click every link; screenshot the slides."""
    total = page.evaluate("() => window.gradvizDeck.getTotalSlides()")
    for i in range(total):
        page.evaluate("() => window.gradvizDeck.next()")
        page.wait_for_timeout(700)          # (after reveal's transition)
        page.screenshot(path=str(artifacts / f"hostile-deck-{name}-{i}.png"))
    page.evaluate("""() => (window.gradvizWidgetRoots || []).forEach((r) => {
        const step = r.querySelector('[data-gv="step"]');
        for (let i = 0; i < 60 && step; i++) step.click(); })""")
    page.evaluate(CLICK_ALL)
    page.wait_for_timeout(500)


def _write(tmp_path, nb, sanitize):
    path = tmp_path / f"deck-{'sanitized' if sanitize else 'default'}.html"
    path.write_text(deck_html(nb, sanitize=sanitize), encoding="utf-8")
    return path


@pytest.mark.parametrize("sanitize", [False, True], ids=["default", "sanitize"])
def test_a_hostile_notebooks_deck_runs_and_loads_nothing(offline_page, tmp_path, artifacts, sanitize):
    page = offline_page
    page.set_viewport_size({"width": 1280, "height": 720})
    detectors(page)
    # text/html outputs are a trusted notebook's own by default (nbconvert shows them as they are):
    # only the sanitised deck is built with hostile ones
    path = _write(tmp_path, hostile_notebook(html_outputs=sanitize), sanitize)
    page.goto(path.as_uri())
    page.wait_for_function("() => window.gradvizDeck && window.gradvizDeck.isReady()")
    walk_the_deck(page, artifacts, "sanitized" if sanitize else "default")
    assert page.gv_dialogs == []
    assert page.gv_blocked == []
    assert page.evaluate(FIND_INLINE) == []
    # ... and the deck is still a deck: slides, the formulas as MathML, the widget drawn
    assert page.evaluate("() => window.gradvizDeck.getTotalSlides()") >= 5
    assert page.locator("math").count() >= len(LATEX)
    nodes = page.evaluate("""() => (window.gradvizWidgetRoots || []).map((r) =>
        [...r.querySelectorAll('svg .gv-node')].filter((n) => n.getBoundingClientRect().width > 2).length)""")
    assert nodes and nodes[0] >= 3, nodes
    assert page.locator("text=styled").count() >= 1          # what was harmless is still there
    assert page.evaluate("() => getComputedStyle(document.querySelector('.reveal')).display") != "none"


def test_trusted_html_outputs_stay_as_nbconvert_shows_them(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("HTML(...)")])
    nb.cells[0].outputs = [nbformat.v4.new_output("display_data", data={
        "text/html": '<div id="mine" onclick="toggle()">a table of my own</div><script>var mine = 1;</script>'})]
    assert '<div id="mine" onclick="toggle()">a table of my own</div><script>var mine = 1;</script>' in deck_html(nb)
    cleaned = deck_html(nb, sanitize=True)
    assert '<div id="mine">a table of my own</div>' in cleaned and "var mine" not in cleaned


def test_the_detectors_fire_on_the_same_payloads_unsanitised(offline_page, tmp_path):
    page = offline_page
    detectors(page)
    payloads = "\n".join(MARKDOWN) + "<svg onload=\"alert('svg')\"></svg>"
    path = tmp_path / "control.html"
    path.write_text(f"<!DOCTYPE html><html><body>{payloads}</body></html>", encoding="utf-8")
    page.goto(path.as_uri())
    page.evaluate(CLICK_ALL)
    page.wait_for_timeout(800)
    assert len(page.gv_dialogs) >= 3, page.gv_dialogs
    assert any(url.startswith(EVIL) for url in page.gv_blocked), page.gv_blocked
    assert len(page.evaluate(FIND_INLINE)) >= 5
    page.gv_blocked.clear()          # (the fixture asserts nothing on them; cleared for clarity)


def test_the_page_cleans_a_state_again_before_it_becomes_markup(offline_page, tmp_path, artifacts):
    """widget.js alone: a state that reached the page uncleaned (no Python sanitiser on the way)."""
    from gradviz.widget.standalone import standalone_html
    page = offline_page
    detectors(page)
    state = _poisoned_widget_state()["state"]
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    widget = AutogradWidget((x * 3).sum())
    widget.svg, widget.derivation, widget.frames = state["svg"], state["derivation"], state["frames"]
    path = tmp_path / "uncleaned.html"
    path.write_text(standalone_html(widget, static_fallback=False), encoding="utf-8")
    assert "alert('svg-root')" in path.read_text() and "alert('mathml')" in path.read_text()
    page.goto(path.as_uri())
    page.wait_for_selector('.gv-widget[data-gv-ready="1"]')
    for _ in range(len(state["frames"])):
        page.locator('[data-gv="step"]').click()
    page.evaluate(CLICK_ALL)
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifacts / "hostile-state-page.png"), full_page=True)
    assert page.gv_dialogs == [] and page.gv_blocked == [] and page.evaluate(FIND_INLINE) == []
    assert page.locator(".gv-deriv math").count() >= 3                # the derivation is still MathML
    assert page.locator("svg.gv-svg .gv-node").count() >= 3           # and the graph still drawn
    assert page.locator(".gv-deriv img, .gv-deriv svg").count() == 0
