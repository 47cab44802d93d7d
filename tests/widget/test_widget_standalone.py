"""The saved page: one file, nothing fetched, several widgets on one page, small enough to mail."""

import json
import re

import pytest

from gradviz.widget import AutogradWidget, save_html, standalone_html, standalone_html_from_state
from gradviz.widget.standalone import SYNCED, standalone_assets, widget_state
from widget_lessons import LESSONS

URL_ATTR = re.compile(r"""\b(?:src|href|xlink:href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//""", re.I)


@pytest.fixture(scope="module")
def seed_widget():
    root, names, _ = LESSONS["seed"]()
    return AutogradWidget(root, names=names, derivation=[r"o = \frac12 \sum_i 5(x_i+1)^2"],
                          expected={"x": lambda x: 5 * (x + 1)})


def test_synced_traits_are_the_js_model():
    """SYNCED is read from the traits (widget/model.py), and widget.js's Model typedef names exactly those traits."""
    from pathlib import Path
    js = (Path(standalone_html.__code__.co_filename).parent / "static" / "widget.js").read_text(encoding="utf-8")
    model = js[js.index("@typedef {Object} Model"):]
    model = model[:model.index("@typedef", 1)]
    typed = set(re.findall(r"@property \{[^}]*\}\s+(\w+)", model))
    assert typed == set(SYNCED)
    synced = {n for n, t in AutogradWidget.class_traits().items() if t.metadata.get("sync") and not n.startswith("_")}
    assert set(SYNCED) <= synced and "svg" in SYNCED and "frames" in SYNCED
    assert not synced - set(SYNCED) - {"layout", "tabbable", "tooltip"}   # ipywidgets' own, not ours


def test_no_external_url(seed_widget, tmp_path):
    path = save_html(seed_widget, tmp_path / "figure.html")
    page = path.read_text(encoding="utf-8")
    assert not URL_ATTR.search(page)
    assert "url(http" not in page and "@import" not in page
    without_xmlns = re.sub(r'xmlns(:\w+)?=\\?"http://www\.w3\.org/[^"\\]*\\?"', "", page)  # also inside JSON
    assert "http://" not in without_xmlns and "https://" not in without_xmlns


def test_the_seed_lesson_is_small(seed_widget):
    page = standalone_html(seed_widget)
    assert len(page.encode("utf-8")) < 200_000
    assert len(seed_widget._repr_mimebundle_()[0]["text/html"].encode("utf-8")) < 200_000


def test_save_html_method(seed_widget, tmp_path):
    p = seed_widget.save_html(tmp_path / "w.html")
    text = p.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")


def test_state_inlined_and_unbreakable(seed_widget):
    page = standalone_html(seed_widget)
    (raw,) = re.findall(r'<script type="application/json" class="gv-state">(.*?)</script>', page, re.S)
    state = json.loads(raw)
    assert set(state) == set(SYNCED)
    assert state["live"] is False and state["playing"] is False
    assert state["frames"] == json.loads(json.dumps(seed_widget.frames))
    assert "<" not in raw                       # no </script> can end the JSON early
    assert state["svg"] == seed_widget.svg
    assert page.count("<svg xmlns") == 1                  # the static picture (the state's is escaped)
    lean = standalone_html(seed_widget, static_fallback=False)
    assert '<div class="gv-static">' not in lean and len(lean) < len(page) - len(seed_widget.svg) // 2


def test_a_name_that_tries_to_close_the_script():
    import gradviz as torch
    x = torch.ones(2, requires_grad=True)
    o = (x * 3).sum()
    w = AutogradWidget(o, names={"</script><script>alert(1)</script>": x, "o": o})
    page = standalone_html(w)
    assert page.count("<script") == page.count("</script>") == 2
    assert "alert(1)</script>" not in page


def test_module_is_inlined_without_exports():
    js, css = standalone_assets()
    assert not re.search(r"^export ", js, re.M)
    assert "const __gvDefault = { render };" in js and "function bootStandalone" in js
    assert "</script" not in js and "</style" not in css


def test_several_widgets_on_one_page(seed_widget):
    root, names, _ = LESSONS["neuron"]()
    other = AutogradWidget(root, names=names, lang="ko")
    a = standalone_html(seed_widget, full_page=False)
    b = standalone_html(other, full_page=False)
    ida, idb = (re.search(r'class="gv-host" id="([^"]+)"', f).group(1) for f in (a, b))
    assert ida != idb
    assert 'lang="ko"' in b


def test_overrides_and_fragment_without_script(seed_widget):
    frag = standalone_html(seed_widget, full_page=False, include_script=False, lang="ko", presenter=True,
                           frame=5, element_id="lesson-1")
    assert "<script type=\"module\">" not in frag and "<style>/* gradviz teaching widget" not in frag
    state = json.loads(re.search(r'class="gv-state">(.*?)</script>', frag, re.S).group(1))
    assert state["lang"] == "ko" and state["strings"]["play"] == "재생"
    assert state["presenter"] is True and state["frame"] == 5
    assert 'id="lesson-1"' in frag


def test_from_saved_notebook_widget_state(seed_widget):
    """What nbclient/JupyterLab save in nb.metadata.widgets: the slides engineer's entry point."""
    entry = {"model_name": "AnyModel", "model_module": "anywidget", "model_module_version": "~0.9.*",
             "state": dict(json.loads(json.dumps(widget_state(seed_widget))),
                           _anywidget_id="gradviz.widget.autograd_widget.AutogradWidget",
                           _esm="...", _css="...", layout="IPY_MODEL_abc")}
    states = {"abc123": entry, "layout1": {"model_name": "LayoutModel", "state": {}}}
    page = standalone_html_from_state("abc123", states)
    assert page and page.startswith("<!DOCTYPE html>")
    state = json.loads(re.search(r'class="gv-state">(.*?)</script>', page, re.S).group(1))
    assert "_esm" not in state and state["frames"]
    assert standalone_html_from_state("layout1", states) is None
    assert standalone_html_from_state("missing", states) is None


def test_rejects_other_things():
    with pytest.raises(TypeError):
        standalone_html(42)


@pytest.mark.parametrize("module", ["gradviz.widget.standalone", "gradviz.widget.derivation",
                                    "gradviz.widget.i18n", "gradviz.widget"])
def test_module_doctests(module):
    """pytest's --doctest-modules skips gradviz/widget (it needs the widget extras): run them here."""
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0
