r"""``draw()``: the computation graph traced, laid out and rendered; it shows in Jupyter and saves as SVG or PNG.

>>> import gradviz as torch
>>> x = torch.ones(2, requires_grad=True)
>>> y = 5 * (x + 1) ** 2
>>> o = (1/2) * torch.sum(y)
>>> d = draw(o)
>>> d.graph.node(d.graph.id_of(x)).label, d.source.splitlines()[0]
('x', 'digraph gradviz {')

A :class:`Drawing` is the graph model (:mod:`.graph`) written as DOT (:mod:`.dot_text`), laid out
and rendered by Graphviz (:mod:`.render`), its SVG decorated for the widget (:mod:`.svg`), with
the key beside it (:mod:`.legend`).
"""

import os
import sys

from .. import _check
from .._gc import paused_gc
from ..trace import trace_of
from .dot_text import to_dot
from .graph import MAX_NODES, VIEWS, graph_of
from .legend import legend_html
from .render import TIMEOUT, RenderError, render
from .svg import decorate_svg

__all__ = ["draw", "Drawing", "build_graph", "RANKDIRS"]

RANKDIRS = ("TB", "LR", "BT", "RL")     # Graphviz's directions: top to bottom, left to right...


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
        # ``words``: the tooltips in another language (gradviz.drawing.dot_text.WORDS's keys; the widget's lang)
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
