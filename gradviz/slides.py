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

import contextlib
import copy
import errno
import html
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

from . import _check
from .widget.sanitize import sanitize_html, sanitize_mathml

__all__ = ["SlidesError", "read_notebook", "check_output", "execute_notebook", "deck_html", "write_slides",
           "latex_to_tokens", "check_slides"]

STATIC = Path(__file__).with_name("slides_static")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


# --- running the lesson -------------------------------------------------------------------------

class SlidesError(Exception):
    """Why no deck was written, in one line for the command line (no traceback is needed to act on it)."""


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def read_notebook(path):
    """The notebook at ``path`` (nbformat 4), or :class:`SlidesError` saying what the file is instead."""
    import nbformat

    path = Path(path)
    if path.is_dir():
        raise SlidesError(f"{path} is a folder, not a notebook (.ipynb)")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SlidesError(f"no such notebook: {path}") from None
    except UnicodeDecodeError:
        raise SlidesError(f"{path} is not a notebook: it is not UTF-8 text") from None
    except OSError as e:
        raise SlidesError(f"cannot read {path}: {e.strerror or e}") from None
    if not text.strip():
        raise SlidesError(f"{path} is empty: a notebook is the JSON file Jupyter saves (.ipynb)")
    try:
        data = json.loads(text)
    except ValueError as e:
        raise SlidesError(f"{path} is not a notebook: it is not JSON ({e.msg}, line {e.lineno} column {e.colno})") from None
    if not isinstance(data, dict) or "nbformat" not in data:
        raise SlidesError(f"{path} is JSON but not a Jupyter notebook (it has no 'nbformat' and 'cells')")
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as e:  # nbformat and jsonschema raise many kinds, with long messages
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise SlidesError(f"{path} is not a valid Jupyter notebook: {first}") from None
    return nb


def check_output(output, notebook=None):
    """Make sure the deck can be written to ``output`` (before a lesson runs for minutes).

    The deck never replaces a notebook: not ``notebook`` itself (under any name that reaches the
    same file), nor any other ``.ipynb`` or file that holds one.
    """
    output = Path(output)
    if output.is_dir():
        raise SlidesError(f"cannot write the deck to {output}: it is a folder (give a file name, "
                          f"e.g. -o {output / 'lecture.html'})")
    if notebook is not None and output.exists() and Path(notebook).exists() and os.path.samefile(output, notebook):
        raise SlidesError(f"will not write the deck over the notebook {notebook} itself: give the deck "
                          f"a name of its own (e.g. -o {Path(notebook).with_suffix('.slides.html').name})")
    if output.suffix.lower() == ".ipynb" or _holds_a_notebook(output):
        raise SlidesError(f"will not write the deck to {output}: that is a notebook's name or file, and a deck is "
                          f"HTML (e.g. -o {output.with_suffix('.slides.html').name})")
    folder = output.parent
    if not folder.is_dir():
        raise SlidesError(f"cannot write the deck to {output}: the folder {folder} does not exist")
    if output.exists() and not os.access(output, os.W_OK):
        raise SlidesError(f"cannot write the deck to {output}: {os.strerror(errno.EACCES)}")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{output.name}.", suffix=".tmp"):
            pass
    except OSError as e:
        raise SlidesError(f"cannot write the deck to {output}: {e.strerror or e}") from None


def _holds_a_notebook(path):
    """Whether the file at ``path`` is a Jupyter notebook, whatever its name."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"nbformat"' in head


def _write_atomically(output, text):
    """Write ``text`` to ``output`` through a temporary file beside it and a rename: a reader (or a
    failure half-way) never sees half a deck, and what was there stays until the deck is whole."""
    output = Path(output)
    fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, output)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_slides(nb, path):
    """A deck needs a cell to show: an empty notebook, or one whose every cell is skipped, has none."""
    if not nb.cells:
        raise SlidesError(f"{path} has no cells: there is nothing to put on a slide")
    shown = [c for c in nb.cells if c.get("metadata", {}).get("slideshow", {}).get("slide_type") not in ("skip", "notes")]
    if not shown:
        raise SlidesError(f"every cell of {path} is skipped or a speaker note (Slide Type skip/notes): there is "
                          "nothing to put on a slide; give one cell the Slide Type slide")


def _cell_text(nb, index):
    lines = [ln.strip() for ln in nb.cells[index].source.splitlines() if ln.strip()]
    first = lines[0] if lines else ""
    return first if len(first) <= 40 else first[:37] + "..."


def execute_notebook(nb, cwd, timeout=300):
    """Run every cell of ``nb`` (in place) in a fresh kernel started in ``cwd``; returns ``nb``.

    The widgets' synced state is kept in ``nb.metadata.widgets``: it is all a widget needs to be
    replayed without a kernel. Cells tagged ``raises-exception`` may fail; any other error stops
    the run with a :class:`SlidesError` naming the cell.
    """
    import nbclient
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    at = [None]

    def started(cell, cell_index, **_):
        at[0] = cell_index

    client = nbclient.NotebookClient(nb, timeout=timeout, store_widget_state=True, on_cell_start=started,
                                     resources={"metadata": {"path": str(cwd)}})
    try:
        # the kernel's own stderr (its TCP warning, the traceback of an interrupted cell) would bury
        # the one line that says what happened: that line comes from here
        client.execute(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except CellExecutionError as e:
        where = _where(nb, at[0])
        evalue = _ANSI.sub("", e.evalue or "").strip().replace("\n", " ")
        raise SlidesError(f"{where} raised {_ANSI.sub('', e.ename)}{': ' + evalue if evalue else ''}. If the error "
                          "is part of the lesson, give that cell the tag raises-exception; or pass "
                          "--no-execute to use the outputs saved in the notebook") from None
    except CellTimeoutError:
        raise SlidesError(f"{_where(nb, at[0])} ran longer than {timeout} s (--timeout SECONDS allows more)") from None
    except DeadKernelError:
        raise SlidesError(f"the kernel died while running {_where(nb, at[0])}") from None
    except NoSuchKernel as e:
        raise SlidesError(f"the notebook asks for the kernel {e.args[0] if e.args else '?'!r}, which is not "
                          "installed here (`jupyter kernelspec list` shows those that are); or pass "
                          "--no-execute to use the outputs saved in the notebook") from None
    except Exception as e:  # the kernel did not start or stopped answering: what it said, in one line
        first = (_ANSI.sub("", str(e)).strip().splitlines() or [type(e).__name__])[0]
        raise SlidesError(f"the kernel failed while running {_where(nb, at[0])}: {first}") from None
    return nb


def _where(nb, index):
    if index is None:
        return "the notebook"
    return f"cell {index + 1} ({_cell_text(nb, index)!r})"


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
    try:    # the widget's sanitiser: \\text{<svg onload=...>} stays text
        return sanitize_mathml(convert(latex.strip(), display="block" if display else "inline"))
    except Exception:  # a command latex2mathml does not know: show the source instead of nothing
        return f'<code class="gradviz-latex">{html.escape(latex)}</code>'


def mathml_for_tokens(page, found):
    """Put MathML where :func:`latex_to_tokens` left its words (text only; ids lose the word)."""
    words = re.compile("|".join(map(re.escape, found)) or "(?!)")
    rendered = {t: _mathml(*found[t]) for t in found if t in page}
    page = re.sub(r"<p>\s*(gvmath\d{4}x)\s*</p>",        # display math: no paragraph around it
                  lambda m: rendered[m.group(1)] if found[m.group(1)][1] else m.group(0), page)
    page = re.sub(r">([^<]*)<", lambda m: ">" + words.sub(lambda w: rendered[w.group(0)], m.group(1)) + "<",
                  page)
    if page.count("<") == 0 and found:       # a fragment that is text alone
        page = words.sub(lambda w: rendered[w.group(0)], page)
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
            out.get("metadata", {}).pop("gradviz_widget", None)      # only this function says so
            view = out.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                continue
            entry = states.get(view.get("model_id") if isinstance(view, dict) else None)
            if isinstance(entry, dict) and isinstance(entry.get("state"), dict) and {"frames", "svg"} <= set(entry["state"]):
                data = {"text/html": standalone_html(entry, full_page=False, include_script=False,
                                                     presenter=True)}
                inlined = True
            else:
                data = {"text/plain": out["data"].get("text/plain", "")}
            cell.outputs[i] = {"output_type": "display_data", "data": data,
                               "metadata": {"gradviz_widget": True} if "text/html" in data else {}}
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


def deck_html(nb, title=None, sanitize=False):
    """The slide deck of an executed notebook, as one HTML string that loads nothing else.

    Markdown (cells, speaker notes, ``text/markdown`` outputs) is shown as JupyterLab shows an
    untrusted notebook's: its HTML cleaned to JupyterLab's allowlist
    (:func:`gradviz.widget.sanitize.sanitize_html`), its formulas MathML through the widget's
    sanitiser. ``text/html`` and JavaScript outputs are the notebook's own, as nbconvert shows a
    trusted notebook's; ``sanitize=True`` cleans them too (HTML to the same allowlist, no
    JavaScript), for a notebook from someone else. gradviz widgets are replayed either way, from
    their saved state with its SVG and MathML cleaned again.
    """
    from nbconvert import SlidesExporter

    _check.boolean("deck_html", "sanitize", sanitize)
    nb = copy.deepcopy(nb)
    deck_title = title or _title(nb, "gradviz slides")
    for cell in nb.cells:
        # reveal.js reads data-* of a slide as settings (backgrounds that load pages, ...); and
        # nbconvert writes their names unescaped
        cell.get("metadata", {}).get("slideshow", {}).pop("data", None)
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
        for out in cell.get("outputs", []):
            if isinstance(out.get("data", {}).get("text/markdown"), str):
                out["data"]["text/markdown"] = latex_to_tokens(out["data"]["text/markdown"], found)
    # </script> inside an inlined script would end it early
    reveal_js = (STATIC / "reveal" / "reveal.js").read_text(encoding="utf-8").replace("</script", "<\\/script")
    deck = {
        "title": deck_title,
        "lang": html.escape(str(nb.metadata.get("lang", "en")), quote=True),
        "sanitize": sanitize,
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
                              exclude_input_prompt=True, exclude_output_prompt=True, sanitize_html=sanitize)
    exporter.register_filter("gv_clean_markdown", lambda page: _clean_markdown(page, found))
    exporter.register_filter("gv_clean_html", sanitize_html)
    page, _ = exporter.from_notebook_node(nb, resources={"deck": deck})
    return page


def _clean_markdown(page, found):
    """Markdown's HTML as JupyterLab shows it, then its formulas as MathML (each cleaned on its own)."""
    return mathml_for_tokens(sanitize_html(page), found)


def write_slides(notebook, output=None, execute=True, timeout=300, progress=None, sanitize=False):
    """Run ``notebook`` (unless ``execute=False``) and write its deck; returns the deck's path.

    The kernel starts in the notebook's folder, as when a student opens it in JupyterLab. The
    default output is the notebook's name with ``.slides.html``, beside it; the deck never
    replaces a notebook, and is written whole or not at all (a temporary file, then a rename).
    The notebook is read and the output checked before anything runs; what goes wrong is a
    :class:`SlidesError`. ``progress`` (a function of one string) hears what is being done, once
    the checks passed. ``sanitize=True``: outputs cleaned too (see :func:`deck_html`).
    """
    _check.boolean("write_slides", "execute", execute)
    _check.positive_number("write_slides", "timeout", timeout)
    _check.boolean("write_slides", "sanitize", sanitize)
    notebook = Path(notebook)
    output = Path(output) if output else notebook.with_suffix(".slides.html")
    nb = read_notebook(notebook)
    check_output(output, notebook)
    check_slides(nb, notebook)
    if progress is not None:
        progress(f"{'running and converting' if execute else 'converting'} {notebook} ...")
    if execute:
        execute_notebook(nb, notebook.parent.resolve(), timeout=timeout)
    page = deck_html(nb, sanitize=sanitize)
    check_output(output, notebook)       # (the notebook may have been saved under that name meanwhile)
    try:
        _write_atomically(output, page)
    except OSError as e:
        raise SlidesError(f"cannot write the deck to {output}: {e.strerror or e}") from None
    return output
