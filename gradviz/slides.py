r"""A lesson notebook as one self-contained reveal.js slide deck whose widgets animate offline.

``python -m gradviz slides notebooks/02_autograd_tutorial.ipynb -o lecture.html`` runs the
lesson in a fresh kernel and writes a single HTML file: reveal.js (vendored in
``slides_static/reveal``, MIT), its theme and the notebook's CSS are inlined, the LaTeX of the
markdown cells is turned into MathML (browsers draw it without MathJax), and every gradviz
widget is replayed from its saved traits by the widget's own standalone front end
(``gradviz.widget.standalone``), in place of Jupyter's widget manager and its CDN. Nothing is
fetched from the network when the deck opens, and no kernel is needed.

The slide structure is the notebook's: cell metadata ``"slideshow": {"slide_type": ...}``
with ``slide``, ``subslide``, ``fragment``, ``-`` (same slide), ``skip`` and ``notes``, as in
``jupyter nbconvert --to slides`` (whose reveal template does the grouping).

>>> print(latex_to_tokens("area $\\pi r^2$ and `$not math$`", {}))
area gvmath0000x and `$not math$`
"""

import copy
import html
import re
from pathlib import Path

__all__ = ["execute_notebook", "deck_html", "write_slides", "latex_to_tokens"]

STATIC = Path(__file__).with_name("slides_static")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


# --- running the lesson -------------------------------------------------------------------------

def execute_notebook(nb, cwd, timeout=300):
    """Run every cell of ``nb`` (in place) in a fresh kernel started in ``cwd``; returns ``nb``.

    The widgets' synced state is kept in ``nb.metadata.widgets``: it is all a widget needs to be
    replayed without a kernel. Cells tagged ``raises-exception`` may fail; any other error stops.
    """
    import nbclient

    client = nbclient.NotebookClient(nb, timeout=timeout, store_widget_state=True,
                                     resources={"metadata": {"path": str(cwd)}})
    client.execute()
    return nb


# --- LaTeX -> MathML ----------------------------------------------------------------------------

# code is left alone; then display math ($$...$$) before inline math ($...$, not "$ 5" prices)
_MATH = re.compile(r"(?P<code>```[\s\S]*?```|`[^`\n]*`)"
                   r"|\$\$(?P<display>[\s\S]+?)\$\$"
                   r"|(?<![\\$\w])\$(?P<inline>[^\s$](?:[^$\n]|\n(?!\n))*?)(?<![\s\\])\$(?![\w$])")
_TOKEN = "gvmath{:04d}x"


def latex_to_tokens(markdown, found):
    """Replace each formula in ``markdown`` by a plain word that markdown leaves alone.

    ``found`` maps each word to ``(latex, display)``; :func:`mathml_for_tokens` puts MathML back.
    """
    def swap(m):
        if m.group("code"):
            return m.group(0)
        token = _TOKEN.format(len(found))
        display = m.group("display") is not None
        found[token] = (m.group("display") if display else m.group("inline"), display)
        return f"\n\n{token}\n\n" if display else token
    return _MATH.sub(swap, markdown)


def _mathml(latex, display):
    from latex2mathml.converter import convert
    try:
        return convert(latex.strip(), display="block" if display else "inline")
    except Exception:  # a command latex2mathml does not know: show the source instead of nothing
        return f'<code class="gradviz-latex">{html.escape(latex)}</code>'


def mathml_for_tokens(page, found):
    """Put MathML where :func:`latex_to_tokens` left its words (text only; ids lose the word)."""
    if not found:
        return page
    words = re.compile("|".join(map(re.escape, found)))
    rendered = {t: _mathml(*found[t]) for t in found}
    page = re.sub(r"<p>\s*(gvmath\d{4}x)\s*</p>",        # display math: no paragraph around it
                  lambda m: rendered[m.group(1)] if found[m.group(1)][1] else m.group(0), page)
    page = re.sub(r">([^<]*)<", lambda m: ">" + words.sub(lambda w: rendered[w.group(0)], m.group(1)) + "<",
                  page)
    return words.sub("", page)                           # what is left sits in ids and hrefs


# --- widgets -> standalone widgets --------------------------------------------------------------

def _inline_widgets(nb):
    """Swap each gradviz widget output for the widget itself, replayed from its saved traits.

    The widget's standalone fragment (``presenter=True``: larger type for a projector) goes
    straight into the slide; the widget's script and CSS are added to the page once, by
    :func:`deck_html`. Returns whether any widget was inlined. Other widgets keep their text.
    """
    from .widget.standalone import standalone_html

    states = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    inlined = False
    for cell in nb.cells:
        for i, out in enumerate(cell.get("outputs", [])):
            view = out.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                continue
            entry = states.get(view["model_id"], {})
            if {"frames", "svg"} <= set(entry.get("state", {})):
                data = {"text/html": standalone_html(entry, full_page=False, include_script=False,
                                                     presenter=True)}
                inlined = True
            else:
                data = {"text/plain": out["data"].get("text/plain", "")}
            cell.outputs[i] = {"output_type": "display_data", "data": data, "metadata": {}}
    nb.metadata.pop("widgets", None)
    return inlined


def _short_errors(nb):
    """On a slide an expected error is its last line (``RuntimeError: ...``), not a traceback."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                out["traceback"] = [f"\x1b[0;31m{out['ename']}\x1b[0m: {out['evalue']}"]


# --- the deck -----------------------------------------------------------------------------------

def _css(path):
    # a vendored theme may @import web fonts: dropped, the deck must not reach the network
    return re.sub(r"@import\s+(url\()?\s*[\"']?https?:[^;]*;", "", path.read_text(encoding="utf-8"))


def _title(nb, fallback):
    if nb.metadata.get("title"):
        return nb.metadata["title"]
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, re.M)
            if m:
                return m.group(1).strip()
    return fallback


def deck_html(nb, title=None):
    """The slide deck of an executed notebook, as one HTML string that loads nothing else."""
    from nbconvert import SlidesExporter

    nb = copy.deepcopy(nb)
    widget_js = widget_css = ""
    if _inline_widgets(nb):
        from .widget.standalone import standalone_assets
        widget_js, widget_css = standalone_assets()
        # deck.js has put each widget in a shadow root of its own: boot them there
        widget_js += "\n(window.gradvizWidgetRoots || [document]).forEach((r) => bootStandalone(r));\n"
    _short_errors(nb)
    found = {}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = latex_to_tokens(cell.source, found)
    # </script> inside an inlined script would end it early
    reveal_js = (STATIC / "reveal" / "reveal.js").read_text(encoding="utf-8").replace("</script", "<\\/script")
    deck = {
        "title": title or _title(nb, "gradviz slides"),
        "lang": nb.metadata.get("lang", "en"),
        "reveal_css": _css(STATIC / "reveal" / "reveal.css"),
        "theme_css": _css(STATIC / "reveal" / "simple.css"),
        "deck_css": _css(STATIC / "deck.css"),
        "reveal_js": reveal_js,
        "deck_js": (STATIC / "deck.js").read_text(encoding="utf-8"),
        "widget_js": widget_js,
        "widget_css": widget_css,
    }
    exporter = SlidesExporter(template_name="gradviz_reveal",
                              extra_template_basedirs=[str(STATIC / "templates")],
                              exclude_input_prompt=True, exclude_output_prompt=True)
    page, _ = exporter.from_notebook_node(nb, resources={"deck": deck})
    return mathml_for_tokens(page, found)


def write_slides(notebook, output=None, execute=True, timeout=300):
    """Run ``notebook`` (unless ``execute=False``) and write its deck; returns the deck's path.

    The kernel starts in the notebook's folder, as when a student opens it in JupyterLab. The
    default output is the notebook's name with ``.slides.html``, beside it.
    """
    import nbformat

    notebook = Path(notebook)
    nb = nbformat.read(notebook, as_version=4)
    if execute:
        execute_notebook(nb, notebook.parent.resolve(), timeout=timeout)
    output = Path(output) if output else notebook.with_suffix(".slides.html")
    output.write_text(deck_html(nb), encoding="utf-8")
    return output
