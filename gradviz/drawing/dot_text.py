r"""Graph -> DOT text (pure: builds a string, never runs Graphviz).

>>> import gradviz as torch
>>> from gradviz.drawing.picture import build_graph
>>> x = torch.ones(2, requires_grad=True)
>>> print(to_dot(build_graph(x * 3)).splitlines()[0])
digraph gradviz {

Every node and edge carries ``id="gv-<id>"`` and ``class="gv-node gv-<kind> ..."`` /
``class="gv-edge ..."``; inside a node, each text slot is an HTML-like table cell with
``ID="gv-<id>-<slot>"`` (slots: ``name``, ``meta``, ``val``, ``grad`` in tensor nodes, ``sym`` and
``fn`` in op nodes, ``title`` elsewhere) and an edge's gradient label is ``gv-<id>-grad``.
:mod:`gradviz.drawing.svg` turns those into the SVG contract the widget reads.

The colours written here are the light theme, for PNG files; the SVG takes its colours from CSS
classes instead (:data:`gradviz.drawing.svg.CSS`), so one SVG follows light and dark themes.
"""

import collections
import html
import re

from ..value_text import drawn_in_full
from ..ops import OPS

__all__ = ["to_dot", "quote", "html_text", "node_classes", "edge_classes", "op_beside_output", "slot_tips", "say",
           "WORDS",
           "PALETTE", "FONT", "MONO"]

FONT = "Helvetica"      # graphviz-pure measures with Arimo, metric-compatible with Helvetica/Arial
MONO = "Courier"        # ... and Cousine for Courier: every monospace font has the same advance

# Okabe-Ito (colour-blind safe): blue leaves, orange ops, bluish-green roots, vermillion gradients.
PALETTE = {
    "text": "#1a1a1a", "muted": "#5f5f5f", "edge": "#6b6b6b", "grad": "#D55E00",
    "leaf": ("#0072B2", "#E1EEF7"), "data": ("#7f7f7f", "#f2f2f2"), "const": ("#8c8c8c", "#ffffff"),
    "op": ("#E69F00", "#FDF1DA"), "value": ("#595959", "#fafafa"), "root": ("#009E73", "#DDF3EC"),
    "accumulate": ("#56B4E9", "#E6F4FC"), "group": ("#8c8c8c", "#eeeeee"),
}


# --- words ----------------------------------------------------------------------------------------

# Every word the picture's tooltips and labels say, in English.  gradviz.widget.i18n holds them in
# its one table with the widget's other words, in every language; the widget passes its language's in.
WORDS = {
    "tip_leaf": "leaf tensor, requires_grad=True",
    "tip_data": "leaf tensor (data, no grad)",
    "tip_result": "result of {grad_fn}",
    "tip_const": "constant",
    "tip_constant": "the constant {value}",
    "tip_retain": "retain_grad()",
    "tip_shape": "shape {shape}",
    "tip_dtype": "dtype {dtype}",
    "tip_grad": "{name}.grad",
    "tip_flow": "gradient of the output with respect to {name}",
    "tip_this": "this tensor",
    "tip_in_full": "{what} (summarised here: the derivation's check lines write it in full)",
    "tip_op": "{grad_fn}: the grad_fn of this op's output",
    "tip_accumulate": "AccumulateGrad: adds the gradient into the leaf's .grad",
    "tip_edge": "gradient sent back along this edge",
    "cut_by": "cut by {how}",
}


def say(words, key, **args):
    """``words[key]`` (else the English) with its ``{fields}`` filled.

    >>> say(None, "tip_grad", name="x"), say({"tip_grad": "{name}.grad (ko)"}, "tip_grad", name="x")
    ('x.grad', 'x.grad (ko)')
    """
    template = (words or {}).get(key) or WORDS[key]
    return re.sub(r"\{(\w+)\}", lambda m: str(args.get(m.group(1), m.group(0))), template)


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


def slot_tips(node, words=None):
    """The tooltip of each text slot of a node, in ``words``' language: ``{slot: text}``.

    Also read by :func:`gradviz.drawing.svg.decorate_svg`, which can word a drawing's tooltips anew
    without laying it out again (a tooltip takes no room)."""
    if node.kind == "op":
        tip = say(words, "tip_op", grad_fn=node.grad_fn)
        return {"sym": tip, "fn": tip}
    if node.kind == "const":
        return {"title": say(words, "tip_constant", value=node.label)}
    if node.kind == "accumulate":
        return {"title": say(words, "tip_accumulate")}
    if node.kind == "group":
        return {"title": node.label, "val": node.value}
    shape = say(words, "tip_shape", shape=_meta(node) or "?")
    if node.dtype is not None:
        shape += ", " + say(words, "tip_dtype", dtype=node.dtype)
    who = node.label or say(words, "tip_this")
    grad = say(words, "tip_grad", name=who) if node.grad is not None else say(words, "tip_flow", name=who)
    if not drawn_in_full(node.shape or ()):
        grad = say(words, "tip_in_full", what=grad)
    return {"name": _describe(node, words), "meta": shape, "val": node.repr, "grad": grad}


def tensor_label(node, words=None):
    """Two rows, so a chain of tensors stays short (issue 8: the graph fits its box): the name beside
    the value, the shape beside the gradient. One table cell per slot."""
    p, tips = f"gv-{node.id}", slot_tips(node, words)
    name = _cell(f"{p}-name", _font(node.label or " ", bold=bool(node.label)), tips["name"])
    meta = _cell(f"{p}-meta", _font(_meta(node), size=13, color=PALETTE["muted"]) if _meta(node) else " ",
                 tips["meta"])
    val = (_cell(f"{p}-val", _font(node.value, face=MONO, size=13), tips["val"])
           if node.value is not None else "<TD></TD>")
    grad = _grad_text(node)
    if grad is not None:
        grad = _cell(f"{p}-grad", _font(grad, face=MONO, size=13, color=PALETTE["grad"]), tips["grad"])
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


def op_label(node, view, words=None):
    p = f"gv-{node.id}"
    tip = slot_tips(node, words)["fn"]
    params = param_text(node)
    if view == "pytorch":
        return _table([_cell(f"{p}-fn", _font(node.label, size=13), tip, align="CENTER")])
    fn = node.grad_fn + (f"\n{params}" if params else "")
    # one row, the symbol beside its grad_fn: a chain of ops stays short (issue 8: fit the box)
    return _table([_cell(f"{p}-sym", _font(node.label, size=16, bold=True), tip, align="CENTER")
                   + _cell(f"{p}-fn", _font(fn, size=13, color=PALETTE["muted"]), tip, align="CENTER")])


def simple_label(node, size=13, words=None):
    tips = slot_tips(node, words)
    rows = [_cell(f"gv-{node.id}-title", _font(node.label, size=size), tips["title"] or node.label, align="CENTER")]
    if node.kind == "group" and node.value:
        rows.append(_cell(f"gv-{node.id}-val", _font(node.value, size=11, color=PALETTE["muted"]),
                          tips["val"], align="CENTER"))
    return _table(rows)


def _describe(node, words=None):
    what = {"leaf": say(words, "tip_leaf" if node.requires_grad else "tip_data"),
            "value": say(words, "tip_result", grad_fn=node.grad_fn),
            "const": say(words, "tip_const")}.get(node.kind, node.kind)
    if node.retains_grad:
        what += ", " + say(words, "tip_retain")
    return f"{node.label}: {what}" if node.label else what


# --- the document -------------------------------------------------------------------------------

def _attrs(pairs):
    return "[" + " ".join(f"{k}={v}" for k, v in pairs) + "]"


def node_statement(node, view, words=None):
    border, fill = _style(node)
    pairs = [("id", quote(f"gv-{node.id}")), ("class", quote(" ".join(node_classes(node))))]
    if node.kind == "op":
        pairs += [("ordering", "in"),   # inputs left to right in operand order
                  ("shape", "ellipse" if view == "dataflow" else "box"),
                  ("style", quote("filled" if view == "dataflow" else "rounded,filled")),
                  *((("margin", quote("0.02,0")), ("height", "0.5")) if view == "dataflow"   # one row, a tensor's height: narrower
                    else (("margin", quote("0.04,0.02")),)),
                  ("label", op_label(node, view, words))]
    elif node.kind == "const":
        pairs += [("shape", "box"), ("style", quote("rounded,filled,dashed")), ("margin", quote("0.06,0.02")),
                  ("label", simple_label(node, 14, words))]
    elif node.kind == "accumulate":
        pairs += [("shape", "box"), ("style", quote("rounded,filled")), ("margin", quote("0.06,0.04")),
                  ("label", simple_label(node, 13, words))]
    elif node.kind == "group":
        pairs += [("shape", "box"), ("style", quote("rounded,filled,dashed")), ("margin", quote("0.1,0.06")),
                  ("label", simple_label(node, 13, words))]
    else:
        style = "rounded,filled" + (",dashed" if node.kind == "leaf" and not node.requires_grad else "")
        pairs += [("shape", "box"), ("style", quote(style)), ("margin", quote("0.06,0.02")),
                  ("label", tensor_label(node, words))]
        if node.is_root:
            pairs.append(("penwidth", "2.5"))
    pairs += [("color", quote(border)), ("fillcolor", quote(fill))]
    return f"  {node.id} {_attrs(pairs)}"


def edge_statement(edge, src, view, beside=None, words=None):
    """``beside``: the layout of :func:`op_beside_output`, or None."""
    pairs = [("id", quote(f"gv-{edge.id}")), ("class", quote(" ".join(edge_classes(edge, src))))]
    ends = f"{edge.src} -> {edge.dst}"
    if beside is not None:
        if edge.kind == "output" and edge.src in beside[1]:  # drawn from the op leftwards
            ends, pairs = f"{edge.dst} -> {edge.src}", pairs + [("dir", "back")]
        elif edge.kind == "input" and src.kind == "value":   # the chain itself: kept straight
            pairs.append(("weight", "8"))
    if "gv-nograd" in edge_classes(edge, src):
        pairs.append(("style", "dashed"))
    if view == "pytorch":
        pairs.append(("dir", "back"))   # arrows point the way next_functions (and backward) go
    if edge.kind == "cut":      # values went along it, gradients never will
        pairs += [("style", "dotted"), ("arrowhead", "tee"), ("label", quote(say(words, "cut_by", how=edge.cut))),
                  ("fontcolor", quote(PALETTE["muted"]))]
    elif edge.kind == "group" and edge.count > 1:
        pairs.append(("label", quote(f"×{edge.count}")))
    elif edge.grad is not None and edge.kind != "output":  # an output edge's gradient is its value node's
        # a little room on each side: two labels side by side never read as one
        label = f'<TABLE BORDER="0" CELLPADDING="0" CELLSPACING="0"><TR><TD WIDTH="4"></TD>' \
                f'{_cell(f"gv-{edge.id}-grad", _font(edge.grad, face=MONO, size=13, color=PALETTE["grad"]), say(words, "tip_edge"))}' \
                f'<TD WIDTH="4"></TD></TR></TABLE>'
        pairs.append(("label", f"<{label}>"))
    return f"  {ends} {_attrs(pairs)}"


def op_beside_output(graph):
    """Where each op goes in a top-to-bottom dataflow picture: on the rank of the tensor it makes.

    A chain of n ops is then n ranks, not 2n (issue 8: lesson 6's network on a batch fits its
    box).  An output goes left of its op when it is used after an operand written before it (the
    ``5`` of ``5 * b``, the bias of ``bias + x Wᵀ``, which then sits left of it), else right and
    left in turn down a chain; the chain's edges weigh more than a leaf's, so the chain runs straight down
    instead of drifting sideways.  Ops side by side at one depth (a tensor several ops use) keep
    their outputs below them: one wide rank is worse.  Returns ``({id of a tensor drawn beside its
    op: the op's id}, ids of ops whose output goes left)``.
    """
    made_by = {e.dst: e.src for e in graph.edges if e.kind == "output"}
    origin = dict(made_by)                  # a detached tensor goes on with its origin's chain
    origin.update({e.dst: made_by[e.src] for e in graph.edges if e.kind == "cut" and e.src in made_by})
    inputs, first_use = {}, {}
    for e in graph.edges:
        if e.kind == "input":
            if e.src in origin:
                inputs.setdefault(e.dst, []).append(origin[e.src])
            first_use.setdefault(e.src, e)
    depth = {}
    for n in graph.nodes:                   # forward order: an op's inputs were made before it
        if n.kind == "op":
            depth[n.id] = 1 + max((depth.get(op, 0) for op in inputs.get(n.id, ())), default=-1)
    alone = collections.Counter(depth.values())
    beside = {v: op for v, op in made_by.items() if alone[depth.get(op)] == 1}

    def left(v, op):
        use = first_use.get(v)
        return bool(use is not None and use.position) or depth[op] % 2 == 1
    return beside, {op for v, op in beside.items() if left(v, op)}


def to_dot(graph, rankdir="TB", title=None, words=None):
    """The DOT text for a :class:`gradviz.drawing.graph.Graph` (deterministic: same graph, same text).

    ``words``: the tooltips' and labels' words in another language (keys of :data:`WORDS`)."""
    nodes = {n.id: n for n in graph.nodes}
    lines = [
        "digraph gradviz {",
        f"  graph [rankdir={rankdir} nslimit=3 bgcolor=\"white\" pad=\"0.15\" nodesep=\"0.15\" ranksep=\"0.2\" "
        f"fontname=\"{FONT}\" id=\"gv-graph\" class=\"gv-{graph.view}\""
        + (f" label={quote(title)} labelloc=t fontsize=16" if title else "") + "]",
        f"  node [fontname=\"{FONT}\" fontsize=14 fontcolor=\"{PALETTE['text']}\" penwidth=1.5]",
        f"  edge [fontname=\"{FONT}\" fontsize=11 color=\"{PALETTE['edge']}\" arrowsize=0.7 penwidth=1.3]",
    ]
    lines += [node_statement(n, graph.view, words) for n in graph.nodes]
    beside = op_beside_output(graph) if graph.view == "dataflow" and rankdir in ("TB", "BT") else None
    lines += [edge_statement(e, nodes[e.src], graph.view, beside, words) for e in graph.edges]
    if beside is not None:
        lines += [f"  {{rank=same {op} {v}}}" for v, op in beside[0].items()]
    lines.append("}")
    return "\n".join(lines) + "\n"
