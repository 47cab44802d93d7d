r"""Draw the computation graph: ``gradviz.draw(o)`` shows it in Jupyter and saves it as SVG or PNG.

>>> import gradviz as torch
>>> x = torch.ones(2, requires_grad=True)
>>> y = 5 * (x + 1) ** 2
>>> o = (1/2) * torch.sum(y)
>>> d = draw(o)
>>> d.graph.node(d.graph.id_of(x)).label, d.source.splitlines()[0]
('x', 'digraph gradviz {')

The SVG contract the widget relies on (:meth:`Drawing.svg`)::

    <svg class="gv-graph gv-dataflow" data-gv-view="dataflow">   (gv-pytorch for the other view)
      <style>...CSS...</style>                              the same text as gradviz.draw.CSS
      <g id="gv-graph" class="graph gv-dataflow">
        <polygon class="gv-background"/>
        <g id="gv-n3" class="node gv-node gv-<kind> [gv-tensor] [gv-requires-grad|gv-data]
                             [gv-root] [gv-retains-grad]" data-gv-id="n3">
          <title>what the node is</title>
          <path class="gv-shape gv-fill"/> <path class="gv-shape gv-stroke"/>   (or one with both)
          <g id="gv-n3-name" class="gv-slot gv-name" data-gv-slot="name">  tensor nodes: leaf,
            <title>..</title><text id="gv-n3-name-0" class="gv-text"/>      value, const ...
          <g id="gv-n3-meta" class="gv-slot gv-meta">   shape (and dtype when not float32)
          <g id="gv-n3-val"  class="gv-slot gv-val">    the value, one <text class="gv-text gv-mono"> per line
          <g id="gv-n3-grad" class="gv-slot gv-grad">   .grad or the recorded gradient
          <g id="gv-n3-sym"  class="gv-slot gv-sym">    op nodes (dataflow view): the symbol
          <g id="gv-n3-fn"   class="gv-slot gv-fn">     op nodes: the grad_fn name
          <g id="gv-n3-title" class="gv-slot gv-title"> const, AccumulateGrad and group nodes
        </g>
        <g id="gv-e2" class="edge gv-edge gv-<edge kind> [gv-nograd]" data-gv-id="e2"
           data-gv-src="n1" data-gv-dst="n3">
          <path class="gv-shape gv-stroke"/> <polygon class="gv-shape gv-fill gv-stroke"/>
          <g id="gv-e2-grad" class="gv-slot gv-edge-grad">   the gradient sent back (if recorded)
        </g>
      </g>
    </svg>

Node kinds: ``leaf``, ``value``, ``const``, ``op``, ``accumulate``, ``group``.  Every slot is
laid out with its final text already in place; ``svg(state="empty")`` (or the widget) adds
``gv-hidden`` to slots not computed yet, which hides them without moving anything.  The widget
may also toggle ``gv-active`` and ``gv-dim`` on nodes and edges.  No colour is written in the
SVG's elements: they come from :data:`CSS` through the classes above.
"""

import os
import re
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

from . import _check
from ._gc import paused_gc
from .dot_text import say, slot_tips, to_dot
from .trace import trace_of
from .graph import MAX_NODES, VIEWS, Graph, graph_of
from .legend import legend_html
from .render import TIMEOUT, RenderError, RendererNotFound, render

__all__ = ["draw", "Drawing", "decorate_svg", "CSS", "Graph", "build_graph", "SLOTS", "RANKDIRS"]

CSS = (Path(__file__).parent / "static" / "graph.css").read_text(encoding="utf-8")

SVG_NS, XLINK_NS = "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)
_S, _XL = f"{{{SVG_NS}}}", f"{{{XLINK_NS}}}"
_SHAPES = {_S + t for t in ("path", "polygon", "ellipse", "polyline", "rect", "circle")}

SLOTS = ("name", "meta", "val", "grad", "sym", "fn", "title")
RANKDIRS = ("TB", "LR", "BT", "RL")     # Graphviz's directions: top to bottom, left to right...
_SLOT_CLASS = {s: "gv-" + s for s in SLOTS}


def build_graph(*roots, view="dataflow", names=None, name=None, frame=None, namespace=None,
                recording=None, trace=None, max_nodes=None):
    """The computation graph behind ``roots`` (gradviz tensors or real ``torch.Tensor``s).

    ``view``: ``"dataflow"`` or ``"pytorch"``.  ``name``: the first root's name; ``names``:
    ``{"w": w, ...}``; otherwise names are looked up in ``frame`` (default: the caller's) or in
    ``namespace`` (a mapping or a list of them; ``False`` for none).  ``recording``: a
    :func:`gradviz.trace.record` result whose last backward pass fills each node's ``flow`` and
    each edge's ``grad``.  ``trace``: a :class:`gradviz.trace.Trace` already made (then ``roots``
    may be empty).  ``max_nodes``: fold a bigger graph into groups (``Graph.summarized_graph``)
    before any value is written out, so a 20,000-op graph costs what its summary shows.
    """
    if trace is None:
        if len(roots) == 1 and isinstance(roots[0], (list, tuple)):
            roots = tuple(roots[0])
        for r in roots:
            _check.root("build_graph", r)
        if frame is None and namespace is None:
            frame = sys._getframe(1)
        trace = trace_of(*roots, names=names, name=name, frame=frame, namespace=namespace,
                         recording=recording, cuts=view == "dataflow")
        del frame
    return graph_of(trace, view, max_nodes)


def draw(*roots, view="dataflow", names=None, name=None, frame=None, namespace=None, recording=None,
         rankdir="TB", max_nodes=MAX_NODES, renderer=None, timeout=TIMEOUT, title=None):
    """The computation graph behind ``roots``, ready to show (in Jupyter) or ``save()``.

    ``view="dataflow"`` draws values and ops forward; ``view="pytorch"`` draws the
    ``grad_fn``/``next_functions`` graph as torchviz does.  Names come from ``name=``,
    ``names={"w": w}`` or the caller's variables.  ``recording`` (a ``gradviz.trace.record()``)
    adds the gradients of its last backward pass.  Graphs with more than ``max_nodes`` nodes are
    summarized.  ``renderer``: ``"pure"`` (graphviz-pure, the default) or ``"system"`` (dot).
    """
    if not roots:
        raise TypeError("draw() takes the tensor(s) whose graph to draw, e.g. draw(o)")
    for r in roots[0] if len(roots) == 1 and isinstance(roots[0], (list, tuple)) else roots:
        _check.root("draw", r)
    _check.one_engine("draw", roots[0] if len(roots) == 1 and isinstance(roots[0], (list, tuple)) else roots)
    _check.frame("draw", frame)
    _check.namespace("draw", namespace)
    _check.one_of("draw", "view", view, VIEWS)
    _check.names("draw", names)
    _check.text("draw", "name", name)
    _check.text("draw", "title", title)
    _check.text("draw", "renderer", renderer)
    _check.one_of("draw", "rankdir", rankdir, RANKDIRS)
    if max_nodes is not None:
        _check.whole_number("draw", "max_nodes", max_nodes, low=1)
    _check.positive_number("draw", "timeout", timeout)
    _check.recording("draw", recording)
    if frame is None and namespace is None:
        frame = sys._getframe(1)
    with paused_gc():      # a big graph is many small objects that all stay: see gradviz._gc
        trace = trace_of(*roots, names=names, name=name, frame=frame, namespace=namespace,
                         recording=recording, cuts=view == "dataflow")
        # folded before its values are written: a 20,000-op graph costs what its summary shows
        graph = graph_of(trace, view, max_nodes)
    del frame
    return Drawing(graph, rankdir=rankdir, max_nodes=max_nodes, renderer=renderer, timeout=timeout,
                   title=title, full=lambda: graph_of(trace, view))


class Drawing:
    """A drawn graph: ``.graph`` (what is drawn), ``.source`` (DOT), ``.svg()``, ``.save(path)``."""

    def __init__(self, graph, rankdir="TB", max_nodes=MAX_NODES, renderer=None, timeout=TIMEOUT, title=None,
                 full=None, words=None):
        # ``full``: a function giving the unfolded graph, when ``graph`` was folded as it was built;
        # ``words``: the tooltips in another language (gradviz.dot_text.WORDS's keys; the widget's lang)
        self._full = full if full is not None and graph.summarized else graph
        self.graph = graph.summarized_graph(max_nodes) if max_nodes else graph
        self.view = graph.view
        self.renderer, self.timeout = renderer, timeout
        self.words = words
        self.source = to_dot(self.graph, rankdir=rankdir, title=title, words=words)
        self._raw = {}

    @property
    def full_graph(self):
        """The graph before big regions were folded into groups (built when first asked for)."""
        if callable(self._full):
            with paused_gc():
                self._full = self._full()
        return self._full

    def __repr__(self):
        return f"<gradviz.Drawing {self.view}: {len(self.graph.nodes)} nodes>"

    def pipe(self, format="svg", dpi=None):
        """The picture's bytes as Graphviz draws it (the SVG here is not yet decorated)."""
        key = (format, dpi)
        if key not in self._raw:
            self._raw[key] = render(self.source, format, renderer=self.renderer, timeout=self.timeout, dpi=dpi)
        return self._raw[key]

    def svg(self, state="full", hidden=(), words=None):
        """The SVG text with the widget's ids, classes and CSS (see the module docstring).

        ``state="empty"``: computed values and every gradient start hidden (class ``gv-hidden``);
        ``hidden``: more slot ids to hide (``"gv-n3-val"``...).  Geometry never depends on either.
        ``words``: tooltips in another language than the drawing's (no new layout).
        """
        return decorate_svg(self.pipe("svg"), self.graph, state=state, hidden=hidden,
                            words=self.words if words is None else words)

    def save(self, path, format=None, dpi=None):
        """Write ``.svg`` (decorated), ``.png``, ``.jpg``, or ``.dot``; the format follows the suffix.

        ``dpi`` sets a raster picture's resolution (``dpi=144`` for slides and READMEs).
        """
        path = os.fspath(_check.path("save", "path", path))
        _check.text("save", "format", format)
        if dpi is not None:
            _check.positive_number("save", "dpi", dpi)
        fmt = (format or os.path.splitext(path)[1].lstrip(".") or "svg").lower()
        if fmt == "svg":
            data = self.svg().encode("utf-8")
        elif fmt in ("dot", "gv"):
            data = self.source.encode("utf-8")
        else:
            data = self.pipe(fmt, dpi=dpi)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def to_graphviz(self):
        """The DOT as a ``graphviz.Source`` (needs the ``graphviz`` package; imported only here)."""
        import graphviz
        return graphviz.Source(self.source)

    def _repr_mimebundle_(self, include=None, exclude=None):
        try:
            svg = self.svg()
        except RenderError as e:  # show why, not a traceback, in the notebook
            return {"text/plain": f"{self!r}\n{e}"}
        # text/html keeps the SVG inline, so it sees JupyterLab's theme variables
        return {"image/svg+xml": svg, "text/html": f'<div class="gv-drawing">{svg}{legend_html()}</div>',
                "text/plain": repr(self)}


# --- the SVG contract ---------------------------------------------------------------------------

def _classes(el, *add):
    have = el.get("class", "").split()
    el.set("class", " ".join(have + [c for c in add if c not in have]))


def _strip_paint(el):
    """Remove colours from an element (CSS gives them); keep what says 'no paint'."""
    kinds = []
    for attr, cls in (("fill", "gv-fill"), ("stroke", "gv-stroke")):
        value = el.get(attr)
        if value is None:
            continue
        if value not in ("none", "transparent"):
            kinds.append(cls)
            del el.attrib[attr]
    return kinds


def _unwrap_slot(group, parent_index, parent, is_node, tips):
    """``<g id="a_X"><a xlink:title=T>texts</a></g>`` -> ``<g id="X"><title>T</title>texts</g>``
    (``tips``: the item's tooltips by slot, in the drawing's language, instead of T)."""
    slot_id = group.get("id")[2:]
    slot = slot_id.rsplit("-", 1)[1]
    cls = _SLOT_CLASS.get(slot, "gv-" + slot) if is_node else "gv-edge-" + slot
    new = ET.Element(_S + "g", {"id": slot_id, "class": f"gv-slot {cls}", "data-gv-slot": slot})
    tip = None
    texts = []
    for a in group:
        tip = a.get(_XL + "title", tip)
        texts.extend(a.iter(_S + "text"))
    tip = tips.get(slot, tip)
    if tip:
        ET.SubElement(new, _S + "title").text = tip
    for k, t in enumerate(texts):
        _decorate_text(t)
        t.set("id", f"{slot_id}-{k}")
        new.append(t)
    parent.remove(group)
    parent.insert(parent_index, new)
    return new


def _decorate_text(t):
    t.attrib.pop("fill", None)
    classes = ["gv-text"] + (["gv-mono"] if "Courier" in t.get("font-family", "") else [])
    _classes(t, *classes)


def _describe(node, words=None):
    if node.kind == "op":
        return node.grad_fn
    head = node.label or (say(words, "tip_result", grad_fn=node.grad_fn) if node.kind == "value" else node.kind)
    return f"{head}: {node.repr}" if node.repr else head


def decorate_svg(svg, graph, state="full", hidden=(), words=None):
    """Graphviz's SVG -> the widget's: ids, classes and data attributes on everything, CSS inside.

    Graphviz writes a table cell's ``ID`` only around an anchor (``<g id="a_ID"><a>``); this
    unwraps those into the slot groups of the contract and moves tooltips into ``<title>``.
    """
    if isinstance(svg, bytes):
        svg = svg.decode("utf-8")
    root = ET.fromstring(svg)
    _classes(root, "gv-graph", "gv-" + graph.view)
    root.set("data-gv-view", graph.view)
    style = ET.Element(_S + "style")
    style.text = CSS
    root.insert(0, style)
    hide = set(hidden)
    if state == "empty":
        hide |= _empty_state(graph)
    elif state != "full":
        raise ValueError(f"state must be 'full' or 'empty', not {state!r}")

    top = root.find(_S + "g")
    for child in list(top):
        if child.tag == _S + "title":
            top.remove(child)
        elif child.tag in _SHAPES and "gv-background" not in child.get("class", ""):
            _strip_paint(child)
            _classes(child, "gv-background")
            break
    for g in top.iter(_S + "g"):
        classes = g.get("class", "").split()
        if "node" in classes or "edge" in classes:
            _decorate_item(g, graph, "node" in classes, words)
    for el in root.iter():
        if el.get("id") in hide:
            _classes(el, "gv-hidden")
    text = ET.tostring(root, encoding="unicode")
    return text + "\n"


def _decorate_item(g, graph, is_node, words=None):
    item_id = g.get("id", "")[3:]          # gv-n3 -> n3
    g.set("data-gv-id", item_id)
    title = g.find(_S + "title")
    tips = {}
    if is_node:
        try:
            node = graph.node(item_id)
        except KeyError:
            node = None
        if title is not None:
            title.text = _describe(node, words) if node is not None else item_id
        if node is not None:
            tips = slot_tips(node, words)
    else:
        tips = {"grad": say(words, "tip_edge")}
        edge = next((e for e in graph.edges if e.id == item_id), None)
        if edge is not None:
            g.set("data-gv-src", edge.src)
            g.set("data-gv-dst", edge.dst)
        if title is not None:
            g.remove(title)
    for k, child in enumerate(list(g)):
        if child.tag in _SHAPES:
            _classes(child, "gv-shape", *_strip_paint(child))
            if child.tag == _S + "polygon" and not is_node:
                _classes(child, "gv-arrow")
        elif child.tag == _S + "g" and child.get("id", "").startswith("a_gv-"):
            _unwrap_slot(child, list(g).index(child), g, is_node, tips)
        elif child.tag == _S + "text":   # a plain label (group edges' ×n)
            _decorate_text(child)
            _classes(child, "gv-label")


def _empty_state(graph):
    """The slots hidden before anything has run: computed values and every gradient."""
    hide = set()
    for n in graph.nodes:
        if n.kind == "value":
            hide.add(f"gv-{n.id}-val")
        hide.add(f"gv-{n.id}-grad")
    for e in graph.edges:
        hide.add(f"gv-{e.id}-grad")
    return hide


# ``gradviz.draw`` is this function, but once this module is imported the package attribute
# ``gradviz.draw`` is the module: make the module callable too, so both spellings draw.
class _CallableModule(types.ModuleType):
    def __call__(self, *roots, **kwargs):
        if "frame" not in kwargs and "namespace" not in kwargs:
            kwargs["frame"] = sys._getframe(1)
        return draw(*roots, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
