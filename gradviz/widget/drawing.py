"""The widget's picture: the drawing layer's graph and SVG, and where each tensor and op sits in it.

Everything that can fail here (no Graphviz renderer, a graph too odd to draw) becomes a readable
``error`` that the widget shows in place of the picture; the animation's captions and the
derivation still play.
"""

import re

from ..drawing.picture import RANKDIRS, Drawing
from ..drawing.graph import MAX_NODES, graph_of
from ..drawing.render import RenderError, RenderTimeout
from ..drawing.svg_ids import ids_from_graph
from ..value_text import node_text
from .i18n import strings

__all__ = ["draw_trace", "clean_svg", "slim", "svg_size", "lr_could_win", "WIDGET_RANKDIRS"]

NODE_KEYS = ("id", "kind", "label", "name", "seq", "fn_seq", "value", "grad_fn")
EDGE_KEYS = ("id", "src", "dst", "kind", "input")


# Gradients written on edges make Graphviz's layout much slower (each label is laid out like a
# node): beyond this many nodes they are left off (nodes still show theirs, captions say them all).
EDGE_LABELS_MAX = 80

# What the widget takes as rankdir=: "auto" (top to bottom, and left to right beside it when that
# picture could show the graph larger: the page picks one for its box), or one Graphviz direction.
WIDGET_RANKDIRS = ("auto",) + RANKDIRS

# The box the second picture is judged in: a 16:9 slide or screen (docs/layout-direction.md).
BOX = (16, 9)


def draw_trace(trace, view="dataflow", rankdir="TB", lang="en"):
    """``{"svg", "graph", "graph_obj", "ids", "error", "drawing", "svg_lr", "drawing_lr"}`` for a
    :class:`gradviz.trace.Trace`'s graph, its tooltips in ``lang`` (``drawing.svg(words=...)`` words
    them anew, without a new layout).

    ``rankdir="auto"``: drawn top to bottom, and also left to right (``svg_lr``, ``drawing_lr``) when
    that picture could show the whole graph larger (:func:`lr_could_win`); the page then picks, for
    the box it has, the one whose whole graph is larger.  The same graph is drawn twice: every node,
    edge and slot has the same id in both, so the frames play in either."""

    out = {"svg": "", "graph": {}, "graph_obj": None, "ids": None, "error": "", "drawing": None,
           "svg_lr": "", "drawing_lr": None}
    auto, rankdir = rankdir == "auto", "TB" if rankdir == "auto" else rankdir
    try:
        graph = graph_of(trace, view, MAX_NODES)   # big graphs: folded first
    except Exception as exc:  # shown in the widget, never as a traceback
        out["error"] = f"the graph could not be built ({type(exc).__name__}: {exc})"
        return out
    try:
        _reserve_leaf_grads(graph, trace)
        if len(graph.nodes) > EDGE_LABELS_MAX:
            _drop_edge_labels(graph)
        words = strings(lang)
        drawing = Drawing(graph, rankdir=rankdir, words=words)
        out["graph_obj"] = drawing.graph
        out["graph"] = slim(drawing.graph.to_dict())
        out["ids"] = ids_from_graph(out["graph"], drawing.graph.folded)
        try:
            svg = drawing.svg()
        except RenderTimeout:
            if not _drop_edge_labels(drawing.graph):
                raise
            drawing = Drawing(drawing.graph, rankdir=rankdir, max_nodes=None, words=words)
            svg = drawing.svg()
        out["svg"], out["drawing"] = clean_svg(svg), drawing
        if auto:
            out["svg_lr"], out["drawing_lr"] = _left_to_right(drawing, out["svg"], words)
    except Exception as exc:  # no renderer, a layout that failed: say why inside the widget
        out["error"] = _why(exc)
        if out["ids"] is None:
            out["graph"] = slim(graph.to_dict())
            out["ids"] = ids_from_graph(out["graph"], graph.folded)
    return out


def _left_to_right(drawing, svg_tb, words):
    """``(svg, Drawing)`` of the same graph left to right, or ``("", None)`` when that picture
    could not win (or could not be drawn: the top-to-bottom one is enough)."""
    tb = svg_size(svg_tb)
    # (a picture no wider than the box already fills its height: left to right only gets wider)
    if tb is None or tb[0] * BOX[1] <= tb[1] * BOX[0]:
        return "", None
    try:
        lr = Drawing(drawing.graph, rankdir="LR", max_nodes=None, words=words, renderer=drawing.renderer,
                     timeout=drawing.timeout)
        svg = clean_svg(lr.svg())
    except Exception:  # (a timeout, a renderer that failed on it): top to bottom only
        return "", None
    return (svg, lr) if lr_could_win(tb, svg_size(svg)) else ("", None)


def lr_could_win(tb, lr, box=BOX):
    """Whether the left-to-right picture (``lr``: its ``(width, height)``) shows the whole graph larger
    than the top-to-bottom one (``tb``) in a box of ``box``'s shape: its fit zoom is larger.

    >>> lr_could_win((1655, 175), (984, 311)), lr_could_win((460, 415), (2216, 142))
    (True, False)
    """
    if not tb or not lr or min(*tb, *lr) <= 0:
        return False
    fit = lambda size: min(box[0] / size[0], box[1] / size[1])   # noqa: E731
    return fit(lr) > fit(tb)


_VIEWBOX = re.compile(r'<svg\b[^>]*?\bviewBox="\s*[-\d.e]+[\s,]+[-\d.e]+[\s,]+([\d.e]+)[\s,]+([\d.e]+)\s*"')


def svg_size(svg):
    """``(width, height)`` of a drawing's ``viewBox`` (Graphviz points), or None.

    >>> svg_size('<svg width="62pt" viewBox="0.00 0.00 62.00 44.00"><g/></svg>')
    (62.0, 44.0)
    """
    m = _VIEWBOX.search(svg or "")
    return (float(m.group(1)), float(m.group(2))) if m else None


def _reserve_leaf_grads(graph, trace):
    """Lay out each leaf's gradient slot for the widest text the frames write there: ``.grad [..]``
    (the widget always shows a leaf's own ``.grad``, never the flowing ``grad``), before and after
    every accumulation of the passes shown (``.grad`` 60 then 120 is a wider text than the 60 that
    flowed).  Graphviz sizes the node box by this text; the frames then fit in it."""
    seen = {}
    for run in trace.runs:
        for e in run.events:
            if e.node is None and e.variable is not None:
                seen.setdefault(e.variable.seq, []).extend(a for a in (e.grad_before, e.grad_after) if a is not None)
    for node in graph.nodes:
        if node.kind != "leaf" or not node.requires_grad or (node.grad is None and node.flow is None):
            continue
        texts = [t for t in [node.grad, node.flow] + [node_text(a) for a in seen.get(node.seq, ())] if t]
        node.grad, node.flow = _widest(texts), None


def _widest(texts):
    """One text as wide and as tall as the widest and the tallest of ``texts`` (monospace: the
    number of characters is the width): the tallest, its first line padded with no-break spaces."""
    rows = [t.split("\n") for t in texts]
    width = max(len(line) for lines in rows for line in lines)
    tallest = max(rows, key=len)
    return "\n".join([tallest[0] + "\u00a0" * (width - len(tallest[0]))] + tallest[1:])


def _drop_edge_labels(graph):
    """Leave the gradients off the edges (returns whether there were any)."""
    had = any(e.grad is not None for e in graph.edges)
    for e in graph.edges:
        e.grad = None
    return had


def _why(exc):
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, RenderError):
        return text          # the drawing layer's messages already say what to do
    if isinstance(exc, (FileNotFoundError, ImportError)):
        return ("no Graphviz renderer was found (" + text + "). Either `pip install graphviz-pure` "
                "or install Graphviz and set GRADVIZ_RENDERER=system.")
    return f"Graphviz could not draw it ({type(exc).__name__}: {text})"


_PROLOG = re.compile(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>|<!--.*?-->", re.S)


def clean_svg(svg):
    """The ``<svg>`` element alone: no XML prolog, DOCTYPE (it names a URL) or comments."""
    svg = _PROLOG.sub("", svg or "").strip()
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def slim(g):
    """The graph dict with what the widget and its readers need (the SVG already holds the rest)."""
    out = {k: v for k, v in g.items() if k not in ("nodes", "edges")}
    out["nodes"] = [{k: n.get(k) for k in NODE_KEYS} for n in g.get("nodes", [])]
    out["edges"] = [{k: e.get(k) for k in EDGE_KEYS} for e in g.get("edges", [])]
    return out
