r"""Graph -> DOT text (pure: builds a string, never runs Graphviz).

>>> import gradviz as torch
>>> from gradviz.graph import build_graph
>>> x = torch.ones(2, requires_grad=True)
>>> print(to_dot(build_graph(x * 3)).splitlines()[0])
digraph gradviz {

Every node and edge carries ``id="gv-<id>"`` and ``class="gv-node gv-<kind> ..."`` /
``class="gv-edge ..."``; inside a node, each text slot is an HTML-like table cell with
``ID="gv-<id>-<slot>"`` (slots: ``name``, ``meta``, ``val``, ``grad`` in tensor nodes, ``sym`` and
``fn`` in op nodes, ``title`` elsewhere) and an edge's gradient label is ``gv-<id>-grad``.
:mod:`gradviz.draw` turns those into the SVG contract the widget reads.

The colours written here are the light theme, for PNG files; the SVG takes its colours from CSS
classes instead (:data:`gradviz.draw.CSS`), so one SVG follows light and dark themes.
"""

import html

from .ops import OPS

__all__ = ["to_dot", "quote", "html_text", "node_classes", "edge_classes", "PALETTE", "FONT", "MONO"]

FONT = "Helvetica"      # graphviz-pure measures with Arimo, metric-compatible with Helvetica/Arial
MONO = "Courier"        # ... and Cousine for Courier: every monospace font has the same advance

# Okabe-Ito (colour-blind safe): blue leaves, orange ops, bluish-green roots, vermillion gradients.
PALETTE = {
    "text": "#1a1a1a", "muted": "#5f5f5f", "edge": "#6b6b6b", "grad": "#D55E00",
    "leaf": ("#0072B2", "#E1EEF7"), "data": ("#7f7f7f", "#f2f2f2"), "const": ("#8c8c8c", "#ffffff"),
    "op": ("#E69F00", "#FDF1DA"), "value": ("#595959", "#fafafa"), "root": ("#009E73", "#DDF3EC"),
    "accumulate": ("#56B4E9", "#E6F4FC"), "group": ("#8c8c8c", "#eeeeee"),
}


# --- escaping -----------------------------------------------------------------------------------

def quote(s):
    r"""A DOT double-quoted string: backslashes, quotes and newlines escaped.

    >>> print(quote('say "hi"\\'))
    "say \"hi\"\\"
    """
    s = str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "\\n")
    return f'"{s}"'


def html_text(s):
    """Text for an HTML-like label: ``<``, ``&``, quotes escaped; lines joined with ``<BR/>``.

    >>> html_text('<script>alert("x")</script>\\n&')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;<BR/>&amp;'
    """
    lines = str(s).replace("\r", "").split("\n")
    return "<BR/>".join(html.escape(line, quote=True) for line in lines)


def _attr(s):
    # an attribute value inside an HTML-like label (TOOLTIP="...")
    return html.escape(str(s).replace("\r", "").replace("\n", "&#10;"), quote=True).replace("&amp;#10;", "&#10;")


# --- classes ------------------------------------------------------------------------------------

def node_classes(node):
    """The CSS classes of a node: ``gv-node``, its kind, and its state flags."""
    classes = ["gv-node", "gv-" + node.kind]
    if node.kind in ("leaf", "value", "const"):
        classes.append("gv-tensor")
    if node.kind == "leaf":
        classes.append("gv-requires-grad" if node.requires_grad else "gv-data")
    if node.is_root:
        classes.append("gv-root")
    if node.retains_grad:
        classes.append("gv-retains-grad")
    return classes


def edge_classes(edge, src):
    classes = ["gv-edge", "gv-" + edge.kind]
    if not src.requires_grad and src.kind in ("leaf", "const"):
        classes.append("gv-nograd")
    return classes


def _style(node):
    if node.kind == "leaf" and not node.requires_grad:
        return PALETTE["data"]
    if node.is_root:
        return PALETTE["root"]
    return PALETTE[node.kind]


# --- labels -------------------------------------------------------------------------------------

def _cell(slot_id, content, tooltip=None, align="LEFT", colspan=1, extra=""):
    tip = f' TOOLTIP="{_attr(tooltip)}"' if tooltip else ""
    span = f' COLSPAN="{colspan}"' if colspan > 1 else ""
    return (f'<TD ID="{slot_id}"{tip}{span} ALIGN="{align}" BALIGN="{align}"{extra}>{content}</TD>')


def _font(text, face=None, size=None, color=None, bold=False):
    attrs = "".join(f' {k}="{v}"' for k, v in (("FACE", face), ("POINT-SIZE", size), ("COLOR", color)) if v)
    body = html_text(text)
    if bold:
        body = f"<B>{body}</B>"
    return f"<FONT{attrs}>{body}</FONT>" if attrs else body


def _meta(node):
    if node.shape is None:
        return ""
    # [] as torch.Size([]) prints it: no word to translate (a Korean widget said "scalar")
    text = "[" + ", ".join(str(n) for n in node.shape) + "]"
    if node.dtype and node.dtype != "float32":
        text += " " + node.dtype
    return text


def _grad_text(node):
    """``.grad [..]`` for the tensor's own .grad, ``grad [..]`` for a recorded flowing gradient."""
    if node.grad is not None:
        prefix, value = ".grad ", node.grad
    elif node.flow is not None:
        prefix, value = "grad ", node.flow
    else:
        return None
    pad = " " * len(prefix)
    return prefix + value.replace("\n", "\n" + pad)


def _table(rows):
    return ('<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
            + "".join(f"<TR>{r}</TR>" for r in rows) + "</TABLE>>")


def tensor_label(node):
    """Two rows, so a chain of tensors stays short (issue 8: the graph fits its box): the name beside
    the value, the shape beside the gradient. One table cell per slot."""
    p = f"gv-{node.id}"
    name = _cell(f"{p}-name", _font(node.label or " ", bold=bool(node.label)), _describe(node))
    meta = _cell(f"{p}-meta", _font(_meta(node), size=13, color=PALETTE["muted"]) if _meta(node) else " ",
                 f"shape {_meta(node) or '?'}" + ("" if node.dtype is None else f", dtype {node.dtype}"))
    val = (_cell(f"{p}-val", _font(node.value, face=MONO, size=13), node.repr)
           if node.value is not None else "<TD></TD>")
    grad = _grad_text(node)
    if grad is not None:
        tip = (f"{node.label or 'this tensor'}.grad" if node.grad is not None
               else f"gradient of the output with respect to {node.label or 'this tensor'}")
        grad = _cell(f"{p}-grad", _font(grad, face=MONO, size=13, color=PALETTE["grad"]), tip)
    gap = '<TD WIDTH="6"></TD>'
    rows = [name + gap + val]
    rows.append(meta + gap + (grad or "<TD></TD>"))
    return _table(rows)


def param_text(node):
    """The op's parameters a student passed and cannot see elsewhere: ``dim=1``, ``s=1:``."""
    op = OPS.get(node.op)
    shown = []
    for key, value in (node.params or {}).items():
        if op is not None and ("@" + key in op.symbol or (op.operand or ("",))[0] == key):
            continue
        if (key == "keepdim" and value == "False") or len(value) > 16 or value.startswith("array"):
            continue
        shown.append(f"{key}={value}")
    return ", ".join(shown)


def op_label(node, view):
    p = f"gv-{node.id}"
    tip = f"{node.grad_fn}: the grad_fn of this op's output"
    params = param_text(node)
    if view == "pytorch":
        return _table([_cell(f"{p}-fn", _font(node.label, size=13), tip, align="CENTER")])
    fn = node.grad_fn + (f"\n{params}" if params else "")
    # one row, the symbol beside its grad_fn: a chain of ops stays short (issue 8: fit the box)
    return _table([_cell(f"{p}-sym", _font(node.label, size=16, bold=True), tip, align="CENTER")
                   + _cell(f"{p}-fn", _font(fn, size=13, color=PALETTE["muted"]), tip, align="CENTER")])


def simple_label(node, size=13, tooltip=None):
    rows = [_cell(f"gv-{node.id}-title", _font(node.label, size=size), tooltip or node.label, align="CENTER")]
    if node.kind == "group" and node.value:
        rows.append(_cell(f"gv-{node.id}-val", _font(node.value, size=11, color=PALETTE["muted"]),
                          node.value, align="CENTER"))
    return _table(rows)


def _describe(node):
    what = {"leaf": "leaf tensor" + (", requires_grad=True" if node.requires_grad else " (data, no grad)"),
            "value": "result of " + str(node.grad_fn), "const": "constant"}.get(node.kind, node.kind)
    if node.retains_grad:
        what += ", retain_grad()"
    return f"{node.label}: {what}" if node.label else what


# --- the document -------------------------------------------------------------------------------

def _attrs(pairs):
    return "[" + " ".join(f"{k}={v}" for k, v in pairs) + "]"


def node_statement(node, view):
    border, fill = _style(node)
    pairs = [("id", quote(f"gv-{node.id}")), ("class", quote(" ".join(node_classes(node))))]
    if node.kind == "op":
        pairs += [("ordering", "in"),   # inputs left to right in operand order
                  ("shape", "ellipse" if view == "dataflow" else "box"),
                  ("style", quote("filled" if view == "dataflow" else "rounded,filled")),
                  *((("margin", quote("0.02,0")), ("height", "0.3")) if view == "dataflow"   # one row: a flat ellipse
                    else (("margin", quote("0.04,0.02")),)),
                  ("label", op_label(node, view))]
    elif node.kind == "const":
        pairs += [("shape", "box"), ("style", quote("rounded,filled,dashed")), ("margin", quote("0.06,0.02")),
                  ("label", simple_label(node, 14, f"the constant {node.label}"))]
    elif node.kind == "accumulate":
        pairs += [("shape", "box"), ("style", quote("rounded,filled")), ("margin", quote("0.06,0.04")),
                  ("label", simple_label(node, 13, "AccumulateGrad: adds the gradient into the leaf's .grad"))]
    elif node.kind == "group":
        pairs += [("shape", "box"), ("style", quote("rounded,filled,dashed")), ("margin", quote("0.1,0.06")),
                  ("label", simple_label(node, 13))]
    else:
        style = "rounded,filled" + (",dashed" if node.kind == "leaf" and not node.requires_grad else "")
        pairs += [("shape", "box"), ("style", quote(style)), ("margin", quote("0.06,0.02")),
                  ("label", tensor_label(node))]
        if node.is_root:
            pairs.append(("penwidth", "2.5"))
    pairs += [("color", quote(border)), ("fillcolor", quote(fill))]
    return f"  {node.id} {_attrs(pairs)}"


def edge_statement(edge, src, view):
    pairs = [("id", quote(f"gv-{edge.id}")), ("class", quote(" ".join(edge_classes(edge, src))))]
    if "gv-nograd" in edge_classes(edge, src):
        pairs.append(("style", "dashed"))
    if view == "pytorch":
        pairs.append(("dir", "back"))   # arrows point the way next_functions (and backward) go
    if edge.kind == "cut":      # values went along it, gradients never will
        pairs += [("style", "dotted"), ("arrowhead", "tee"), ("label", quote(f"cut by {edge.cut}")),
                  ("fontcolor", quote(PALETTE["muted"]))]
    elif edge.kind == "group" and edge.count > 1:
        pairs.append(("label", quote(f"×{edge.count}")))
    elif edge.grad is not None and edge.kind != "output":  # an output edge's gradient is its value node's
        label = f'<TABLE BORDER="0" CELLPADDING="0" CELLSPACING="0"><TR>' \
                f'{_cell(f"gv-{edge.id}-grad", _font(edge.grad, face=MONO, size=13, color=PALETTE["grad"]), "gradient sent back along this edge")}' \
                f'</TR></TABLE>'
        pairs.append(("label", f"<{label}>"))
    return f"  {edge.src} -> {edge.dst} {_attrs(pairs)}"


def to_dot(graph, rankdir="TB", title=None):
    """The DOT text for a :class:`gradviz.graph.Graph` (deterministic: same graph, same text)."""
    nodes = {n.id: n for n in graph.nodes}
    lines = [
        "digraph gradviz {",
        f"  graph [rankdir={rankdir} nslimit=3 bgcolor=\"white\" pad=\"0.15\" nodesep=\"0.25\" ranksep=\"0.2\" "
        f"fontname=\"{FONT}\" id=\"gv-graph\" class=\"gv-{graph.view}\""
        + (f" label={quote(title)} labelloc=t fontsize=16" if title else "") + "]",
        f"  node [fontname=\"{FONT}\" fontsize=14 fontcolor=\"{PALETTE['text']}\" penwidth=1.5]",
        f"  edge [fontname=\"{FONT}\" fontsize=11 color=\"{PALETTE['edge']}\" arrowsize=0.7 penwidth=1.3]",
    ]
    lines += [node_statement(n, graph.view) for n in graph.nodes]
    lines += [edge_statement(e, nodes[e.src], graph.view) for e in graph.edges]
    lines.append("}")
    return "\n".join(lines) + "\n"
