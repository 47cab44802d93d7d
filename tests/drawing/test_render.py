"""gradviz.drawing.render and gradviz.draw: running Graphviz, the SVG contract the widget reads, clear errors.

Tests that run a Graphviz command are marked ``needs_graphviz_pure`` (skipped, saying why, without it).
"""

import os
import re
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import gradviz
import gradviz as torch
import gradviz.trace as trace
from gradviz.drawing import render
from gradviz.drawing.picture import draw
from gradviz.drawing.svg import CSS, decorate_svg

S = "{http://www.w3.org/2000/svg}"
try:
    render.find_renderer("pure")
    HAVE_PURE = True
except render.RendererNotFound:
    HAVE_PURE = False
needs_graphviz_pure = pytest.mark.skipif(not HAVE_PURE, reason="graphviz-pure is not installed")


def seed(view="dataflow", **kw):
    x = torch.ones(2, requires_grad=True)
    y = 5 * (x + 1) ** 2
    o = (1/2) * torch.sum(y)
    with trace.record() as rec:
        o.backward()
    return draw(o, view=view, recording=rec, **kw)


def cs535(view="dataflow"):
    x = torch.ones(1, 1, requires_grad=True)
    y = 2 * x + 3
    z = y * y * 3
    with trace.record() as rec:
        z.backward()
    return draw(z, view=view, recording=rec)


def no_dot_on_path(monkeypatch, tmp_path):
    """PATH with nothing on it: no system `dot` (and no graphviz-pure except beside python)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(render.ENV_VAR, raising=False)


# --- finding and running the command --------------------------------------------------------------

@needs_graphviz_pure
def test_renders_without_system_dot(monkeypatch, tmp_path):
    no_dot_on_path(monkeypatch, tmp_path)
    r = render.find_renderer()
    assert r.kind == "pure" and Path(r.path).name.startswith("graphviz-pure")
    svg = render.render("digraph { a -> b }", "svg")
    assert svg.startswith(b"<?xml") and b"<svg" in svg
    assert seed().svg().startswith("<svg")


@needs_graphviz_pure
def test_what_graphviz_pure_writes():
    r = render.find_renderer("pure")
    formats = r.formats()
    assert {"svg", "png", "jpeg", "dot", "json", "plain"} <= set(formats)
    assert "pdf" not in formats
    assert "graphviz-pure" in r.version()
    assert render.render("digraph { a }", "png").startswith(b"\x89PNG")


@needs_graphviz_pure
def test_pdf_is_refused_with_a_clear_message(tmp_path):
    with pytest.raises(render.FormatNotSupported, match=r"does not write PDF.*\.svg or \.png.*GRADVIZ_RENDERER=system"):
        seed().save(tmp_path / "g.pdf")


def test_missing_renderer_names_both_fixes(monkeypatch, tmp_path):
    no_dot_on_path(monkeypatch, tmp_path)
    monkeypatch.setattr(render, "PURE", "graphviz-pure-missing")   # as if the wheel were not installed
    for call in (lambda: render.find_renderer(), lambda: render.find_renderer("system"),
                 lambda: render.find_renderer(str(tmp_path / "no-such-dot"))):
        with pytest.raises(render.RendererNotFound) as err:
            call()
        assert "pip install graphviz-pure" in str(err.value) and "install Graphviz" in str(err.value)
    with pytest.raises(render.RendererNotFound, match="GRADVIZ_RENDERER=system"):
        render.find_renderer()
    with pytest.raises(render.RendererNotFound, match="renderer='system' asks for Graphviz's `dot`"):
        render.find_renderer("system")               # the message names what the user wrote
    monkeypatch.setenv(render.ENV_VAR, "system")
    with pytest.raises(render.RendererNotFound, match="GRADVIZ_RENDERER=system asks .* unset GRADVIZ_RENDERER"):
        seed().svg()


def test_missing_renderer_in_a_notebook_is_a_message_not_a_traceback(monkeypatch):
    monkeypatch.setenv(render.ENV_VAR, "/nonexistent/graphviz-pure")
    bundle = seed()._repr_mimebundle_()
    assert list(bundle) == ["text/plain"] and "pip install graphviz-pure" in bundle["text/plain"]


def fake_renderer(tmp_path, body):
    script = tmp_path / "fake-dot"
    script.write_text("#!/bin/sh\ncase \"$1\" in -T\\?) echo 'Format: \"?\" not recognized. Use one of: svg' >&2;"
                      f" exit 1;; esac\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


@pytest.mark.skipif(os.name == "nt", reason="a shell script stands in for Graphviz")
def test_layout_time_is_bounded(tmp_path):
    slow = fake_renderer(tmp_path, "sleep 10")
    with pytest.raises(render.RenderTimeout, match="longer than 0.3 s"):
        render.render("digraph { a }", "svg", renderer=slow, timeout=0.3)


@pytest.mark.skipif(os.name == "nt", reason="a shell script stands in for Graphviz")
def test_renderer_errors_and_unknown_formats(tmp_path):
    failing = fake_renderer(tmp_path, "echo 'Error: syntax error in line 1' >&2; exit 1")
    with pytest.raises(render.RenderError, match="syntax error"):
        render.render("digraph {", "svg", renderer=failing)
    with pytest.raises(render.FormatNotSupported, match="writes: svg"):
        render.render("digraph {}", "png", renderer=failing)


# --- the SVG contract ---------------------------------------------------------------------------

def parse(svg):
    return ET.fromstring(svg)


def shown(el):
    """The text drawn inside an element (its <text> lines, not its tooltip)."""
    return "\n".join(t.text or "" for t in el.iter(S + "text"))


def by_id(root):
    return {el.get("id"): el for el in root.iter() if el.get("id")}


@needs_graphviz_pure
@pytest.mark.parametrize("view", ["dataflow", "pytorch"])
def test_every_node_edge_and_text_has_an_id_and_classes(view):
    d = seed(view)
    root = parse(d.svg())
    assert root.get("class").split() == ["gv-graph", f"gv-{view}"] and root.get("data-gv-view") == view
    assert root.find(S + "style").text == CSS
    ids = by_id(root)
    for n in d.graph.nodes:
        g = ids[f"gv-{n.id}"]
        classes = g.get("class").split()
        assert {"gv-node", f"gv-{n.kind}"} <= set(classes) and g.get("data-gv-id") == n.id
        assert ("gv-root" in classes) == n.is_root
        for text in g.iter(S + "text"):
            assert text.get("id") and "gv-text" in text.get("class")
    for e in d.graph.edges:
        g = ids[f"gv-{e.id}"]
        assert "gv-edge" in g.get("class").split()
        assert (g.get("data-gv-src"), g.get("data-gv-dst")) == (e.src, e.dst)
    # tensor nodes: separate slots for the name, the value and the gradient
    x = next(n for n in d.graph.nodes if n.kind == "leaf").id
    for slot, cls in (("name", "gv-name"), ("meta", "gv-meta"), ("val", "gv-val"), ("grad", "gv-grad")):
        el = ids[f"gv-{x}-{slot}"]
        assert el.tag == S + "g" and cls in el.get("class").split() and el.find(S + "text") is not None
    assert shown(ids[f"gv-{x}-val"]) == "[1., 1.]"
    assert shown(ids[f"gv-{x}-grad"]) == ".grad [10., 10.]"
    edge_grads = [el for el in root.iter(S + "g") if "gv-edge-grad" in el.get("class", "").split()]
    assert edge_grads and all(re.fullmatch(r"gv-e\d+-grad", el.get("id")) for el in edge_grads)


@needs_graphviz_pure
def test_op_nodes_have_symbol_and_grad_fn_slots():
    d = seed()
    ids = by_id(parse(d.svg()))
    op = next(n for n in d.graph.nodes if n.kind == "op")
    assert shown(ids[f"gv-{op.id}-sym"]) == "+"
    assert shown(ids[f"gv-{op.id}-fn"]) == "AddBackward0"


@needs_graphviz_pure
def test_colours_come_from_css_not_from_the_elements():
    root = parse(seed().svg())
    for el in root.iter():
        for attr in ("fill", "stroke"):
            assert el.get(attr) in (None, "none", "transparent"), (el.tag, el.get("id"), attr, el.get(attr))
    assert "var(--jp-layout-color0, #ffffff)" in CSS and "var(--jp-content-font-color0" in CSS
    assert all(rule.startswith("svg.gv-graph") or rule.startswith("body[") or rule.startswith("  ")
               for rule in re.findall(r"^[^\s/*}][^{]*(?={)", CSS, re.M))


GEOMETRY = ("x", "y", "d", "points", "cx", "cy", "rx", "ry", "transform", "viewBox", "width", "height",
            "font-size", "text-anchor")


def geometry(svg):
    return [(el.tag, el.get("id"), tuple(el.get(a) for a in GEOMETRY)) for el in parse(svg).iter()]


@needs_graphviz_pure
@pytest.mark.parametrize("make", [seed, cs535, lambda: seed("pytorch")])
def test_nothing_moves_between_empty_and_fully_labelled(make):
    d = make()
    empty, full = d.svg(state="empty"), d.svg()
    assert geometry(empty) == geometry(full)
    hidden = {el.get("id") for el in parse(empty).iter() if "gv-hidden" in (el.get("class") or "").split()}
    assert hidden and not any("gv-hidden" in (el.get("class") or "") for el in parse(full).iter())
    g = d.graph
    for n in g.nodes:
        if n.kind == "value":
            assert f"gv-{n.id}-val" in hidden
        if n.kind == "leaf":
            assert f"gv-{n.id}-val" not in hidden and f"gv-{n.id}-grad" in hidden
    assert all(f"gv-{e.id}-grad" in hidden for e in g.edges if e.grad is not None and e.kind != "output")
    # the widget hides or shows any slot by id; geometry stays put
    some = sorted(hidden)[:3]
    assert geometry(d.svg(hidden=some)) == geometry(full)


@needs_graphviz_pure
def test_names_are_escaped_in_svg_and_html():
    evil = '<script>alert("x")</script>&'
    x = torch.ones(2, requires_grad=True)
    d = draw((x * 2).sum(), names={evil: x})
    svg = d.svg()
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    root = parse(svg)
    assert not list(root.iter(S + "script")) and not list(root.iter("script"))
    assert evil in shown(root)          # drawn as text, exactly
    html = d._repr_mimebundle_()["text/html"]
    assert "<script>" not in html


@needs_graphviz_pure
def test_drawing_object(tmp_path):
    d = seed()
    assert d.source.startswith("digraph gradviz {") and d.graph.view == "dataflow"
    bundle = d._repr_mimebundle_()
    assert set(bundle) == {"image/svg+xml", "text/html", "text/plain"}
    assert bundle["image/svg+xml"] == d.svg()
    key = bundle["text/html"]             # the key under the picture, closed until clicked
    assert "<details" in key and "leaf tensor" in key and "constant" in key and "output" in key
    assert Path(d.save(tmp_path / "g.svg")).read_text().startswith("<svg")
    assert (tmp_path / "g.png").exists() is False
    d.save(tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes().startswith(b"\x89PNG")
    d.save(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text() == d.source


@needs_graphviz_pure
def test_big_graphs_draw_a_summary_quickly(tanh_chain):
    loss, w = tanh_chain(80)
    d = draw(loss)
    assert len(d.full_graph.nodes) > 500 and len(d.graph.nodes) <= 200 and d.graph.summarized
    root = parse(d.svg())
    assert any("gv-group" in (g.get("class") or "") for g in root.iter(S + "g"))


def test_gradviz_draw_names_and_lazy_imports():
    code = ("import sys, gradviz; assert 'gradviz.drawing' not in sys.modules and 'graphviz' not in sys.modules;"
            "import gradviz as torch; x = torch.ones(2, requires_grad=True);"
            "d = gradviz.draw((x * 2).sum()); d2 = gradviz.draw((x * 3).sum());"
            "from gradviz.drawing.picture import Drawing; assert isinstance(d, Drawing) and isinstance(d2, Drawing);"
            "assert gradviz.build_graph and gradviz.Graph;"
            "print('graphviz' in sys.modules, [n.name for n in d2.graph.nodes if n.name])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False ['x']"


def test_decorate_svg_rejects_unknown_state():
    with pytest.raises(ValueError):
        decorate_svg('<svg xmlns="http://www.w3.org/2000/svg"><g/></svg>', seed().graph, state="half")
