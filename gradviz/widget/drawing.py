"""The widget's picture: the drawing layer's graph and SVG, and where each tensor and op sits in it.

Everything that can fail here (no Graphviz renderer, a graph too odd to draw) becomes a readable
``error`` that the widget shows in place of the picture; the animation's captions and the
derivation still play.
"""

import re

from .frames import Ids

__all__ = ["draw", "ids_from_graph", "names_from_graph", "clean_svg"]


def draw(root, view="dataflow", names=None, frame=None, recording=None, rankdir="TB"):
    """``{"svg", "graph", "graph_obj", "ids", "names", "error"}`` for ``root``'s graph."""
    from ..graph import build_graph

    out = {"svg": "", "graph": {}, "graph_obj": None, "ids": None, "names": {}, "error": ""}
    try:
        graph = build_graph(root, view=view, names=names, frame=frame, recording=recording)
    except Exception as exc:  # shown in the widget, never as a traceback
        out["error"] = f"the graph could not be built ({type(exc).__name__}: {exc})"
        return out
    out["names"] = names_from_graph(graph.to_dict())
    try:
        from ..draw import Drawing
        drawing = Drawing(graph, rankdir=rankdir)
        out["graph_obj"] = drawing.graph
        out["graph"] = drawing.graph.to_dict()
        out["ids"] = ids_from_graph(out["graph"])
        out["svg"] = clean_svg(drawing.svg())
    except Exception as exc:  # no renderer, a layout that failed: say why inside the widget
        out["error"] = _why(exc)
        if out["ids"] is None:
            out["graph"] = graph.to_dict()
            out["ids"] = ids_from_graph(out["graph"])
    return out


def _why(exc):
    from ..render import RenderError
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


def names_from_graph(g):
    """``{seq: name}`` for the named tensors of a graph dict (leaf/const tensor seq, op seq)."""
    names = {}
    for n in g.get("nodes", []):
        if not n.get("name"):
            continue
        if n.get("fn_seq") is not None:
            names[n["fn_seq"]] = n["name"]
        elif n.get("seq") is not None and n["kind"] in ("leaf", "const", "value"):
            names[n["seq"]] = n["name"]
    return names


def ids_from_graph(g):
    """Where the widget finds each op, value, leaf, constant and edge of a graph dict."""
    kinds = {n["id"]: n["kind"] for n in g.get("nodes", [])}
    op_ids = {int(k): v for k, v in g.get("op_ids", {}).items()}
    seq_of_op = {v: k for k, v in op_ids.items()}
    edge_in, edge_out, const = {}, {}, {}
    for e in g.get("edges", []):
        if e["dst"] in seq_of_op and e.get("input") is not None and e["kind"] in ("input", "next"):
            key = (seq_of_op[e["dst"]], e["input"])
            edge_in[key] = e["id"]
            if kinds.get(e["src"]) == "const":
                const[key] = e["src"]
        if e["src"] in seq_of_op and e["kind"] in ("output", "root"):
            edge_out[seq_of_op[e["src"]]] = e["id"]
    leaf = {int(k): v for k, v in g.get("tensor_ids", {}).items() if kinds.get(v) == "leaf"}
    value = {int(k): v for k, v in g.get("value_ids", {}).items()}
    return Ids(op=op_ids, value=value, leaf=leaf, const=const, edge_in=edge_in, edge_out=edge_out)
