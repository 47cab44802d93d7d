"""``python -m gradviz slides``: one HTML file per lesson that loads nothing, with the notebook's
slides, MathML formulas, short errors and every widget inlined (tests/browser/test_slides.py
opens a deck in Chromium)."""

import json
import re
import subprocess
import sys
from html.parser import HTMLParser

import nbformat
import pytest

from gradviz.slides import deck_html, latex_to_tokens, mathml_for_tokens
from test_notebooks import NOTEBOOKS, ROOT, executed, lesson_params

_decks = {}


def deck(path):
    """The deck of an executed lesson (the lesson runs once per session, shared with test_notebooks)."""
    if path not in _decks:
        _decks[path] = deck_html(executed(path))
    return _decks[path]


class _Page(HTMLParser):
    """What a page would load (every src/href that is not a link to follow), and its slide tree."""

    LOADS = {("script", "src"), ("link", "href"), ("img", "src"), ("img", "srcset"), ("iframe", "src"),
             ("source", "src"), ("source", "srcset"), ("video", "src"), ("video", "poster"),
             ("audio", "src"), ("embed", "src"), ("object", "data"), ("track", "src"), ("image", "href"),
             ("use", "href"), ("image", "xlink:href"), ("use", "xlink:href"), ("input", "src")}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.loads, self.styles, self.scripts = [], [], []
        self.depth, self.slides, self.subslides, self.fragments = 0, 0, 0, 0
        self.hosts, self.states, self._in, self._text = 0, [], None, []
        self.title = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name, value in attrs:
            if (tag, name) in self.LOADS and value and not value.startswith(("data:", "#")):
                self.loads.append(f"<{tag} {name}={value[:80]}>")
            if name == "style" and value:
                self.styles.append(value)
        if tag == "section":
            self.depth += 1
            self.slides += self.depth == 1
            self.subslides += self.depth == 2
        if "fragment" in (a.get("class") or "").split():
            self.fragments += 1
        if a.get("data-gv-standalone") == "1":
            self.hosts += 1
        if tag in ("style", "script", "title"):
            self._in, self._text = (tag, a.get("class") or a.get("type") or ""), []

    def handle_endtag(self, tag):
        if tag == "section":
            self.depth -= 1
        if self._in and tag == self._in[0]:
            text = "".join(self._text)
            if tag == "style":
                self.styles.append(text)
            elif tag == "title":
                self.title = text if self.title is None else self.title   # the page's, not an SVG's
            elif "gv-state" in self._in[1]:
                self.states.append(json.loads(text))
            else:
                self.scripts.append(text)
            self._in = None

    def handle_data(self, data):
        if self._in:
            self._text.append(data)


def page_of(html):
    p = _Page()
    p.feed(html)
    p.close()
    return p


def remote_css(css):
    """@import rules and url(...) references in CSS that are not data: URLs."""
    imports = re.findall(r"@import[^;]*;", css)
    urls = [u for u in re.findall(r"url\(\s*['\"]?([^'\")]+)", css) if not u.startswith(("data:", "#"))]
    return imports + urls


# --- the formulas ---------------------------------------------------------------------------------

@pytest.mark.parametrize("markdown, formulas", [
    ("$$y_i = 5(x_i+1)^2$$", [("y_i = 5(x_i+1)^2", True)]),
    ("at $x_i = 1$: $y_i = 20$.", [("x_i = 1", False), ("y_i = 20", False)]),
    ("$$\\frac{a}{b}\n\\qquad c$$ then $d$", [("\\frac{a}{b}\n\\qquad c", True), ("d", False)]),
    ("`$not math$` and\n```\n$$nor this$$\n```", []),
    ("it costs $5 and $6 here", []),                  # prices are not formulas
    ("a \\$ sign, and (in brackets $k$)", [("k", False)]),
])
def test_formulas_are_found_and_code_is_left_alone(markdown, formulas):
    found = {}
    out = latex_to_tokens(markdown, found)
    assert list(found.values()) == formulas
    assert "$" not in re.sub(r"`[^`]*`|```[\s\S]*?```|\\\$|\$\d", "", out)


def test_tokens_become_mathml_in_text_and_vanish_from_attributes():
    found = {}
    md = latex_to_tokens("## Why $y$\n\n$$o = \\frac12 \\sum_i y_i$$\n", found)
    tok_inline, tok_display = found
    page = (f'<h2 id="Why-{tok_inline}">Why {tok_inline}<a href="#Why-{tok_inline}">¶</a></h2>'
            f"<p>{tok_display}</p>")
    out = mathml_for_tokens(page, found)
    assert 'id="Why-"' in out and 'href="#Why-"' in out
    assert re.search(r'Why <math[^>]*display="inline"', out)
    assert re.search(r'</h2><math[^>]*display="block".*<mfrac>', out)   # no <p> around display math
    assert "gvmath" not in out
    assert "\n\n" + tok_display + "\n\n" in md                       # a paragraph of its own


# --- every lesson's deck --------------------------------------------------------------------------

@pytest.mark.parametrize("path", lesson_params())
def test_deck_is_one_file_that_loads_nothing(path):
    html = deck(path)
    page = page_of(html)
    assert page.loads == []
    assert [r for css in page.styles for r in remote_css(css)] == []
    assert all(s.strip() for s in page.scripts)                      # inline scripts only
    assert "unpkg.com" not in html and "cdnjs" not in html and "cdn.jsdelivr" not in html
    assert "reveal.js" in html and "MIT licensed" in html            # reveal.js itself, inlined
    assert len(html) < 3_000_000


@pytest.mark.parametrize("path", lesson_params())
def test_deck_follows_the_slide_metadata(path):
    nb = nbformat.read(path, as_version=4)
    types = [c.metadata.slideshow.slide_type for c in nb.cells]
    page = page_of(deck(path))
    assert page.slides == types.count("slide")
    assert page.subslides == types.count("slide") + types.count("subslide")
    assert page.fragments >= 1
    assert page.title == nb.metadata.title
    assert f'<html lang="{nb.metadata.get("lang", "en")}">' in deck(path)


@pytest.mark.parametrize("path", lesson_params())
def test_every_widget_is_inlined_with_its_whole_state(path):
    nb = nbformat.read(path, as_version=4)
    calls = [c for c in nb.cells if c.cell_type == "code" and ("gradviz.animate(" in c.source or "gradviz.practice(" in c.source)]
    page = page_of(deck(path))
    assert page.hosts == len(calls) == len(page.states)
    for state in page.states:
        assert state["frames"] and state["svg"].startswith("<svg") and state["presenter"] is True
        assert state["live"] is False and state["playing"] is False
        assert state["lang"] == nb.metadata.get("lang", "en")
    assert "application/vnd.jupyter.widget-view+json" not in deck(path)   # no widget manager needed
    assert "bootStandalone" in deck(path)


@pytest.mark.parametrize("path", lesson_params())
def test_formulas_are_mathml(path):
    nb = nbformat.read(path, as_version=4)
    found = {}
    for c in nb.cells:
        if c.cell_type == "markdown":
            latex_to_tokens(c.source, found)
    html = deck(path)
    assert html.count("<math") >= len(found) > 0
    assert "gvmath" not in html and "gradviz-latex" not in html      # every formula converted
    assert "$$" not in re.sub(r"<script[\s\S]*?</script>|<style[\s\S]*?</style>", "", html)


def test_an_expected_error_is_one_line_on_its_slide():
    html = deck(NOTEBOOKS / "01_variables_and_gradients.ipynb")
    assert "RuntimeError</span>: Only Tensors of floating point and complex dtype can require gradients" in html
    assert "Traceback" not in html and "Cell In[" not in html


# --- the command line -----------------------------------------------------------------------------

def gradviz_cli(*args, **kwargs):
    kwargs.setdefault("cwd", ROOT)
    return subprocess.run([sys.executable, "-m", "gradviz", *args], capture_output=True, text=True,
                          timeout=300, **kwargs)


def test_help():
    top = gradviz_cli("--help")
    assert top.returncode == 0 and "slides" in top.stdout
    sub = gradviz_cli("slides", "--help")
    assert sub.returncode == 0
    for word in ("notebook", "-o HTML", "--no-execute", "--timeout", "no network"):
        assert word in " ".join(sub.stdout.split()), word


def test_a_missing_notebook_is_an_error_not_a_traceback(tmp_path):
    r = gradviz_cli("slides", str(tmp_path / "nope.ipynb"))
    assert r.returncode != 0 and "no such notebook" in r.stderr and "Traceback" not in r.stderr


def test_slides_command_runs_the_lesson_and_writes_the_deck(tmp_path):
    out = tmp_path / "lecture.html"
    r = gradviz_cli("slides", "notebooks/02_autograd_tutorial.ipynb", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert f"wrote {out}" in r.stdout
    page = page_of(out.read_text(encoding="utf-8"))
    # (two widgets: the lesson's practice cell and its animation)
    assert page.loads == [] and page.hosts == 2 and page.slides == 5
    assert "tensor([[4.5000, 4.5000]," in out.read_text(encoding="utf-8")   # the lesson ran


def test_no_execute_uses_the_saved_outputs(tmp_path):
    nb = executed(NOTEBOOKS / "03_tensors_with_gradients.ipynb")
    saved = tmp_path / "lesson.ipynb"
    nbformat.write(nb, saved)
    r = gradviz_cli("slides", str(saved), "--no-execute")
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "lesson.slides.html").read_text(encoding="utf-8")   # the default name, beside it
    assert "tensor([10., 10.])" in html and page_of(html).hosts == 2


# --- what the command line says when something is wrong: one line, exit code 1 --------------------

BROKEN = [
    ("notes.ipynb", b"just some text\n", "is not a notebook: it is not JSON"),
    ("bad.ipynb", b'{"cells": [', "is not a notebook: it is not JSON"),
    ("empty.ipynb", b"", "is empty"),
    ("blank.ipynb", b"  \n", "is empty"),
    ("other.ipynb", b'{"name": "not a notebook"}', "is JSON but not a Jupyter notebook"),
    ("list.ipynb", b"[1, 2, 3]", "is JSON but not a Jupyter notebook"),
    ("latin1.ipynb", "{\"caf\xe9\": 1}".encode("latin-1"), "not UTF-8 text"),
    ("invalid.ipynb", b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "poem"}]}',
     "is not a valid Jupyter notebook"),
]


def _one_line_error(r, *words):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1, r
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("gradviz slides: ") and "Traceback" not in r.stderr and "\x1b[" not in r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.mark.parametrize("name, content, says", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_file_that_is_not_a_notebook_is_one_line(tmp_path, name, content, says):
    path = tmp_path / name
    path.write_bytes(content)
    r = gradviz_cli("slides", str(path), "-o", str(tmp_path / "deck.html"))
    _one_line_error(r, str(path), says)
    assert not (tmp_path / "deck.html").exists()


def test_a_folder_is_not_a_notebook(tmp_path):
    _one_line_error(gradviz_cli("slides", str(tmp_path)), "is a folder")


@pytest.mark.parametrize("where, says", [
    ("missing/deck.html", "the folder {tmp}/missing does not exist"),
    ("afile.txt/deck.html", "the folder {tmp}/afile.txt does not exist"),
    ("", "is a folder"),
])
def test_the_output_is_checked_before_anything_runs(tmp_path, where, says):
    (tmp_path / "afile.txt").write_text("x")
    ran = tmp_path / "ran.txt"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"open({str(ran)!r}, 'w').write('ran')")])
    nbformat.write(nb, tmp_path / "lesson.ipynb")
    r = gradviz_cli("slides", str(tmp_path / "lesson.ipynb"), "-o", str(tmp_path / where))
    _one_line_error(r, says.format(tmp=tmp_path))
    assert not ran.exists()                      # no kernel was started


def test_an_unwritable_output_is_one_line(tmp_path):
    from gradviz.slides import SlidesError, check_output
    with pytest.raises(SlidesError, match="cannot write the deck to /proc/deck.html"):
        check_output("/proc/deck.html")           # not writable, even for root


@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_a_bad_timeout_is_refused_by_the_parser(value):
    r = gradviz_cli("slides", "notebooks/01_variables_and_gradients.ipynb", "--timeout", value)
    assert r.returncode == 2 and "--timeout" in r.stderr and "above 0" in r.stderr


def test_a_raising_cell_is_named_with_what_to_do(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# A lesson"),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("print('some output')\nraise ValueError('\\x1b[31mcoloured\\x1b[0m oops')"),
        nbformat.v4.new_code_cell("1 / 0"),
    ])
    nbformat.write(nb, tmp_path / "lesson.ipynb")
    r = gradviz_cli("slides", str(tmp_path / "lesson.ipynb"), "-o", str(tmp_path / "deck.html"))
    # the kernel may log a warning of its own on stderr; ours is the last line, and the only one of ours
    ours = [ln for ln in r.stderr.splitlines() if ln.startswith("gradviz slides:")]
    assert r.returncode == 1 and len(ours) == 1, r.stderr
    assert "Traceback" not in r.stderr and "\x1b[" not in r.stderr and r.stderr.count("\n") <= 4
    line = ours[0]
    for w in ("cell 3", "print('some output')", "raised ValueError: coloured oops", "raises-exception",
              "--no-execute"):
        assert w in line, (w, line)
    assert not (tmp_path / "deck.html").exists()


def test_a_tagged_raising_cell_is_fine(tmp_path):
    cell = nbformat.v4.new_code_cell("1 / 0")
    cell.metadata["tags"] = ["raises-exception"]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), tmp_path / "lesson.ipynb")
    r = gradviz_cli("slides", str(tmp_path / "lesson.ipynb"))
    assert r.returncode == 0, r.stderr
    assert "ZeroDivisionError" in (tmp_path / "lesson.slides.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("options, exc, words", [
    ({"timeout": 0}, ValueError, ["write_slides(): timeout=", "positive"]),
    ({"timeout": "300"}, TypeError, ["timeout=", "number"]),
    ({"execute": "no"}, TypeError, ["execute=", "True or False"]),
])
def test_write_slides_checks_its_options(tmp_path, options, exc, words):
    from gradviz.slides import write_slides
    with pytest.raises(exc) as e:
        write_slides(tmp_path / "lesson.ipynb", **options)
    assert all(w in str(e.value) for w in words), str(e.value)


# --- the command never destroys input, and says what went wrong in one line ------------------------

def _lesson(tmp_path, *cells, name="lesson.ipynb"):
    path = tmp_path / name
    nbformat.write(nbformat.v4.new_notebook(cells=list(cells)), path)
    return path, path.read_bytes()


@pytest.mark.parametrize("output", ["{nb}", "./{name}", "{tmp}/../{tmpname}/{name}", "other.ipynb", "NEW.IPYNB",
                                    "notebook-in-disguise.html"])
def test_the_deck_never_replaces_a_notebook(tmp_path, output):
    nb, before = _lesson(tmp_path, nbformat.v4.new_markdown_cell("# A lesson"))
    other, other_before = _lesson(tmp_path, nbformat.v4.new_markdown_cell("# Another"), name="other.ipynb")
    (tmp_path / "notebook-in-disguise.html").write_bytes(other_before)      # a notebook saved under .html
    out = output.format(nb=nb, name=nb.name, tmp=tmp_path, tmpname=tmp_path.name)
    r = gradviz_cli("slides", str(nb), "-o", out, cwd=tmp_path)
    _one_line_error(r, "will not write the deck")
    assert nb.read_bytes() == before and other.read_bytes() == other_before
    assert (tmp_path / "notebook-in-disguise.html").read_bytes() == other_before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lesson.ipynb", "notebook-in-disguise.html", "other.ipynb"]


def test_a_link_to_the_notebook_is_the_notebook(tmp_path):
    nb, before = _lesson(tmp_path, nbformat.v4.new_markdown_cell("# A lesson"))
    (tmp_path / "deck.html").symlink_to(nb)
    _one_line_error(gradviz_cli("slides", str(nb), "-o", str(tmp_path / "deck.html")), "over the notebook")
    assert nb.read_bytes() == before


@pytest.mark.parametrize("cells, says", [
    ([], "has no cells"),
    ([nbformat.v4.new_markdown_cell("# hidden", metadata={"slideshow": {"slide_type": "skip"}}),
      nbformat.v4.new_markdown_cell("a note", metadata={"slideshow": {"slide_type": "notes"}})],
     "every cell of"),
])
def test_a_notebook_with_nothing_to_show_is_one_line(tmp_path, cells, says):
    nb, before = _lesson(tmp_path, *cells)
    r = gradviz_cli("slides", str(nb), "-o", str(tmp_path / "deck.html"))
    _one_line_error(r, says, "nothing to put on a slide")
    assert nb.read_bytes() == before and not (tmp_path / "deck.html").exists()


@pytest.mark.parametrize("code, options, says", [
    ("import os\nos._exit(1)", [], ["the kernel died while running cell 2", "import os"]),
    ("while True:\n    pass", ["--timeout", "2"], ["cell 2 ('while True:')", "ran longer than 2 s", "--timeout"]),
])
def test_a_dead_or_endless_kernel_is_one_line_and_the_notebook_is_kept(tmp_path, code, options, says):
    nb, before = _lesson(tmp_path, nbformat.v4.new_markdown_cell("# A lesson"), nbformat.v4.new_code_cell(code))
    (tmp_path / "deck.html").write_text("the deck from before")
    r = gradviz_cli("slides", str(nb), "-o", str(tmp_path / "deck.html"), *options)
    _one_line_error(r, *says)
    assert "TCP" not in r.stderr and "IPKernelApp" not in r.stderr       # the kernel's own stderr is not ours
    assert nb.read_bytes() == before
    assert (tmp_path / "deck.html").read_text() == "the deck from before"   # not half a deck
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deck.html", "lesson.ipynb"]


def test_a_good_run_prints_no_kernel_warning_and_leaves_no_temporary_file(tmp_path):
    nb, before = _lesson(tmp_path, nbformat.v4.new_markdown_cell("# A lesson"), nbformat.v4.new_code_cell("1 + 1"))
    (tmp_path / "deck.html").write_text("the deck from before")
    r = gradviz_cli("slides", str(nb), "-o", str(tmp_path / "deck.html"))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.splitlines()[-1].startswith(f"wrote {tmp_path / 'deck.html'}")
    assert nb.read_bytes() == before
    assert "<section" in (tmp_path / "deck.html").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deck.html", "lesson.ipynb"]


def test_a_failure_while_writing_keeps_the_old_deck(tmp_path, monkeypatch):
    import gradviz.slides as slides
    nb, _ = _lesson(tmp_path, nbformat.v4.new_markdown_cell("# A lesson"))
    (tmp_path / "deck.html").write_text("the deck from before")

    def full_disk(fd, *args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(slides.os, "fsync", full_disk)
    with pytest.raises(slides.SlidesError, match="No space left on device"):
        slides.write_slides(nb, tmp_path / "deck.html", execute=False)
    assert (tmp_path / "deck.html").read_text() == "the deck from before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deck.html", "lesson.ipynb"]


def test_slides_without_the_course_extra_is_one_line(tmp_path):
    nb, _ = _lesson(tmp_path, nbformat.v4.new_markdown_cell("# A lesson"))
    r = subprocess.run([sys.executable, "-c", "import sys; sys.modules['nbformat'] = sys.modules['nbclient'] = None\n"
                        "from gradviz.__main__ import main; main(['slides', sys.argv[1]])", str(nb)],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    _one_line_error(r, "needs the course extra (nbformat, nbclient not installed)", 'pip install -e ".[course]"')
    assert "gradviz[" not in r.stderr      # the name gradviz on the package index is another project's
