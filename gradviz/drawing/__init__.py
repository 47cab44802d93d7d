"""``gradviz.drawing``: a traced graph drawn, one concept per module, in the order it is made.

* :mod:`.graph` -- the graph model: nodes and edges from a :class:`gradviz.trace.Trace` (``graph_of``);
* :mod:`.dot_text` -- the graph as DOT text (pure: no Graphviz needed);
* :mod:`.render` -- DOT laid out and rendered by Graphviz (graphviz-pure or the ``dot`` command);
* :mod:`.svg` -- the rendered SVG decorated with the ids, classes and slots the widget animates;
* :mod:`.svg_ids` -- where each op, value, leaf and edge sits in that SVG (the frames' map);
* :mod:`.picture` -- :func:`draw` and :class:`Drawing`, which run the stages above;
* :mod:`.legend` -- the key shown beside the picture.
"""

from .graph import Graph, graph_of
from .picture import Drawing, build_graph, draw

__all__ = ["draw", "Drawing", "build_graph", "Graph", "graph_of"]
