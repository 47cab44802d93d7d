r"""The SVG a drawing is shown as: Graphviz's output decorated with the ids, classes and slots the widget animates.

The SVG contract the widget relies on (:meth:`Drawing.svg`)::

    <svg class="gv-graph gv-dataflow" data-gv-view="dataflow">   (gv-pytorch for the other view)
      <style>...CSS...</style>                              the same text as gradviz.drawing.svg.CSS
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

from xml.etree import ElementTree
from pathlib import Path

from .dot_text import say, slot_tips

__all__ = ["decorate_svg", "CSS", "SLOTS"]

CSS = (Path(__file__).parent / "static" / "graph.css").read_text(encoding="utf-8")

SVG_NS, XLINK_NS = "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"
ElementTree.register_namespace("", SVG_NS)
ElementTree.register_namespace("xlink", XLINK_NS)
_S, _XL = f"{{{SVG_NS}}}", f"{{{XLINK_NS}}}"
_SHAPES = {_S + t for t in ("path", "polygon", "ellipse", "polyline", "rect", "circle")}

SLOTS = ("name", "meta", "val", "grad", "sym", "fn", "title")
_SLOT_CLASS = {s: "gv-" + s for s in SLOTS}


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
    new = ElementTree.Element(_S + "g", {"id": slot_id, "class": f"gv-slot {cls}", "data-gv-slot": slot})
    tip = None
    texts = []
    for a in group:
        tip = a.get(_XL + "title", tip)
        texts.extend(a.iter(_S + "text"))
    tip = tips.get(slot, tip)
    if tip:
        ElementTree.SubElement(new, _S + "title").text = tip
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
    root = ElementTree.fromstring(svg)
    _classes(root, "gv-graph", "gv-" + graph.view)
    root.set("data-gv-view", graph.view)
    style = ElementTree.Element(_S + "style")
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
    text = ElementTree.tostring(root, encoding="unicode")
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
