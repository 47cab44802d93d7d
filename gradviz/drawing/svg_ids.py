"""Where things are drawn: the SVG ids of each op, value, leaf, constant and edge of a drawn graph.

The frames (:mod:`gradviz.widget.frames`) light up and fill slots by these ids; :func:`ids_from_graph`
reads them off the graph dict a drawing was made from (:meth:`gradviz.drawing.graph.Graph.to_dict`).
"""

__all__ = ["Ids", "ids_from_graph"]


class Ids:
    """Where things are drawn: node and edge ids of the rendered graph, looked up by tensor/node.

    Built from the drawing layer's graph dict (see :meth:`from_graph`) or, when there is no
    drawing, made up (captions and the derivation still play; nothing is highlighted).
    """

    def __init__(self, op=None, value=None, leaf=None, const=None, edge_in=None, edge_out=None, folded=None):
        self._folded = folded or {}    # "op" | "value" | "tensor" -> {seq: id of the group folding it}
        self._folded_op, self._folded_value, self._folded_tensor = (
            self._folded.get(k) or {} for k in ("op", "value", "tensor"))
        self._op = op or {}            # node seq -> op node id
        self._value = value or {}      # node seq -> id of the node showing its output value
        self._leaf = leaf or {}        # leaf tensor seq -> node id
        self._const = const or {}      # (node seq, i) -> node id
        self._edge_in = edge_in or {}  # (node seq, i) -> id of the edge carrying input i (and its gradient)
        self._edge_out = edge_out or {}  # node seq -> id of the edge op -> output value

    def op(self, node):
        return self._op.get(node.seq) or self.group(node) or f"op{node.seq}"

    def value(self, node):
        return self._value.get(node.seq) or self._folded_value.get(node.seq) or self.op(node)

    def leaf(self, t):
        return self._leaf.get(t.seq) or self.group_of_leaf(t) or f"leaf{t.seq}"

    def group(self, node):
        """The group node folding this op in a summarized picture (None: drawn on its own)."""
        return self._folded_op.get(node.seq)

    def band(self, group):
        """Where a group runs forward among the groups (by depth, inputs first)."""
        if not hasattr(self, "_bands"):
            self._bands = {g: k for k, g in enumerate(self._folded.get("groups", []))}
        return self._bands.get(group, 0)

    def group_of_leaf(self, t):
        return self._folded_tensor.get(t.seq)

    def own_value(self, node):
        """Whether the op's output has a node of its own (not folded into a group)."""
        return self.group(node) is None or node.seq in self._value

    def const(self, node, i):
        return self._const.get((node.seq, i))

    def edge_in(self, node, i):
        return self._edge_in.get((node.seq, i))

    def edge_out(self, node):
        return self._edge_out.get(node.seq)

    def input(self, lesson, node, i):
        kind, thing = lesson.kinds(node)[i]
        if kind == "leaf":
            return self.leaf(thing)
        if kind == "op":
            return self.value(thing)
        return self.const(node, i)

    def all_edges(self):
        return sorted(set(self._edge_in.values()) | set(self._edge_out.values()))


def ids_from_graph(g, folded=None):
    """Where the widget finds each op, value, leaf, constant and edge of a graph dict.

    ``folded``: a summarized graph's ``Graph.folded`` (which group stands for which op and tensor).
    """
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
    return Ids(op=op_ids, value=value, leaf=leaf, const=const, edge_in=edge_in, edge_out=edge_out, folded=folded)
