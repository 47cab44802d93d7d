r"""Tensors -> a neutral computation graph: plain nodes and edges, deterministic ids, the caller's names.

>>> import gradviz as torch
>>> x = torch.ones(2, requires_grad=True)
>>> y = 5 * (x + 1) ** 2
>>> o = (1/2) * torch.sum(y)
>>> from gradviz.drawing.picture import build_graph      # traces the tensors, then graph_of(trace)
>>> g = build_graph(o)
>>> [(n.id, n.kind, n.label) for n in g.nodes][:6]
[('n0', 'leaf', 'x'), ('n1', 'const', '1'), ('n2', 'op', '+'), ('n3', 'value', 'a'), ('n4', 'const', '2'), ('n5', 'op', '^')]
>>> g.node(g.id_of(o)).name, g.node(g.id_of(o)).value
('o', '20.')
>>> g.id_of(o.grad_fn), g.id_of(x)
('n13', 'n0')

Two views of the same tensors:

* ``"dataflow"`` (the default): what the student wrote, forward.  Value nodes (kinds ``leaf``,
  ``value``, ``const``) alternate with op nodes (kind ``op``, one per ``grad_fn``).  Constants
  appear where the expression has them: a wrapped Python number (the ``1`` in ``x + 1``, the
  ``5`` in ``5 * u``) and an operand kept as a parameter (the ``2`` in ``u ** 2``, the ``1`` in
  ``1 - u``) each become a ``const`` node feeding their op.
* ``"pytorch"``: what ``grad_fn.next_functions`` really holds, as torchviz draws it: one ``op``
  node per ``*Backward*`` node, an ``accumulate`` node per ``AccumulateGrad`` with its leaf
  (kind ``leaf``) feeding it, and the root tensors (kind ``value``).  ``(None, 0)`` entries of
  ``next_functions`` are not drawn; they are listed in the op node's ``next``.

Ids are ``n0, n1, ...`` and ``e0, e1, ...`` in forward (creation) order, renumbered within the
graph from the core's sequence numbers, so the same code gives the same graph every run.  Edges
always point the way data flows (input -> op -> output).

Names come from ``name=`` (the first root), ``names={"w": w}`` and otherwise from the calling
frame: a tensor bound to a variable (``x``, ``y``, ``o`` in a notebook) gets that variable's name
(names starting with ``_`` are skipped).  Only tensors that are still alive can be named.

A coefficient is drawn (and written in ``latex``) first: ``5 * u`` and ``u * 5`` build the same
graph, so ``mul`` puts its constant operand at position 0, as in ``3y^2``.

Gradients: ``grad`` is the tensor's own ``.grad`` (leaves, ``retain_grad()``); ``flow`` and each
edge's ``grad`` come from ``recording=`` (a ``gradviz.trace.record()`` around ``backward()``) --
build after recording to lay out every gradient slot at its final size.  Graphs bigger than
:data:`MAX_NODES` can be folded with ``Graph.summarized_graph(max_nodes)``.

Values of intermediate tensors nobody holds any more are recomputed from the op table (after an
in-place update of a leaf, that shows today's leaf, not the one the forward pass saw).  A tensor
that was detached or made under ``no_grad`` is a leaf without ``requires_grad``, drawn as data;
the core remembers (weakly) what it was cut from, so the dataflow view also draws that tensor and
its history, joined to the data leaf by a ``cut`` edge labelled ``detach()`` or ``no_grad()``:
the values flowed along it, gradients never will.

``Graph.to_dict()`` -- the JSON contract the widget reads (all strings may hold any character:
escape them before putting them in HTML)::

    {
      "view": "dataflow" | "pytorch",
      "summarized": false,            # true: some nodes were folded into "group" nodes
      "nodes": [{                     # forward order
        "id": "n0",                   # also the SVG ids: gv-n0, gv-n0-name, gv-n0-val, gv-n0-grad
        "kind": "leaf" | "const" | "op" | "value" | "accumulate" | "group",
        "label": "x",                 # the title drawn: name, number, op symbol, Backward name
        "name": "x" | null,           # variable name, if any
        "seq": 12 | null,             # core sequence number: grad_fn._seq (op), AccumulateGrad
                                      #   and tensor: tensor._seq (null if the tensor is gone)
        "fn_seq": 15 | null,          # value nodes: the grad_fn._seq of the op that made it
        "shape": [2] | null, "dtype": "float32" | null,
        "value": "[1., 1.]" | null,   # as drawn (node_text): one short row in PyTorch format,
                                      #   else a summary ("norm 2.6253", "all 0.2500", "zeros(4, 4)")
        "grad": "[10., 10.]" | null,  # the tensor's .grad (leaves, retain_grad()), as drawn
        "flow": "[0.5000]" | null,    # dL/d(this tensor) recorded by a trace.record() run, as drawn
        "is_leaf": true, "requires_grad": true, "retains_grad": false, "is_root": false,
        "grad_fn": "MulBackward0" | null, "op": "mul" | null, "symbol": "×" | null,
        "params": {"n": "2"},         # op parameters, as short strings
        "latex": "5 \\cdot x" | null,    # op nodes: the forward expression with input names
        "dlatex": ["..."] | null,     # op nodes: local derivative per input
        "repr": "tensor([1., 1.], requires_grad=True)" | null,
        "next": ["n3", null] | null,  # pytorch-view op nodes: next_functions as node ids
        "members": ["n5", ...] | null # group nodes: the ids they fold (of the unsummarized graph)
      }],
      "edges": [{
        "id": "e0", "src": "n0", "dst": "n2",   # data-flow direction
        "kind": "input" | "output" | "accumulate" | "next" | "root" | "group",
        "position": 0 | null,         # operand position as written (c - x: c is 0, x is 1)
        "input": 0 | null,            # index into grad_fn.next_functions (null: a parameter)
        "shape": [2] | null, "value": "[2., 2.]" | null,
        "grad": "[5., 5.]" | null,    # gradient sent back along this edge (from a recording), as drawn
        "count": 1                    # group edges: how many edges were folded
      }],
      "roots": ["n14"],
      "op_ids": {"15": "n2"},         # grad_fn._seq -> op node id (pytorch view: Backward nodes)
      "value_ids": {"15": "n3"},      # grad_fn._seq -> id of the node showing that op's output
      "tensor_ids": {"0": "n0"},      # tensor._seq -> node id (tensors still alive, constants)
      "accumulate_ids": {"0": "n1"}   # leaf._seq -> AccumulateGrad node id (pytorch view)
    }
"""

import dataclasses
import math
import weakref

import numpy as np

from .. import autograd
from .._dtype import _BY_NP
from .._format import tensor_repr
from .. import formula                              # formulas are written in one place
from ..formula import latex_name
from ..ops import OPS
from ..value_text import SMALL, format_number, node_text

__all__ = ["Graph", "GraphNode", "GraphEdge", "graph_of", "latex_name", "VIEWS", "KINDS", "MAX_NODES"]

VIEWS = ("dataflow", "pytorch")
KINDS = ("leaf", "const", "op", "value", "accumulate", "group")
MAX_NODES = 200     # beyond this, Graph.summarized() folds the interior into group nodes


def _drawing(step):
    """The op-table entry that says how a step is drawn and written (None: a node the table does not know)."""
    return OPS.get(step.key)



# --- the plain data -----------------------------------------------------------------------------

@dataclasses.dataclass
class GraphNode:
    """One drawn node; every field is plain data (see the module docstring for each field)."""

    id: str
    kind: str
    label: str = ""
    name: str = None
    seq: int = None
    fn_seq: int = None
    shape: tuple = None
    dtype: str = None
    value: str = None
    grad: str = None
    flow: str = None
    is_leaf: bool = True
    requires_grad: bool = False
    retains_grad: bool = False
    is_root: bool = False
    grad_fn: str = None
    op: str = None
    symbol: str = None
    params: dict = dataclasses.field(default_factory=dict)
    latex: str = None
    dlatex: list = None
    repr: str = None
    next: list = None
    members: list = None
    order: tuple = dataclasses.field(default=(), repr=False, compare=False)

    def to_dict(self):
        d = {f: getattr(self, f) for f in _NODE_FIELDS}
        d["shape"] = None if self.shape is None else list(self.shape)
        d["params"] = dict(self.params)
        for key in ("dlatex", "next", "members"):
            if d[key] is not None:
                d[key] = list(d[key])
        return d


@dataclasses.dataclass
class GraphEdge:
    """One drawn edge, pointing the way data flows (``src`` feeds ``dst``)."""

    id: str
    src: str
    dst: str
    kind: str
    position: int = None
    input: int = None
    shape: tuple = None
    value: str = None
    grad: str = None
    count: int = 1
    cut: str = None           # kind "cut": how the graph was cut here, "detach()" or "no_grad()"

    def to_dict(self):
        d = {f: getattr(self, f) for f in _EDGE_FIELDS}
        d["shape"] = None if self.shape is None else list(self.shape)
        return d


_NODE_FIELDS = [f.name for f in dataclasses.fields(GraphNode) if f.name != "order"]
_EDGE_FIELDS = [f.name for f in dataclasses.fields(GraphEdge)]


class Graph:
    """Nodes and edges in forward order, with lookups from tensors and grad_fn nodes to ids."""

    def __init__(self, view, nodes, edges, roots, op_ids, value_ids, tensor_ids, accumulate_ids,
                 refs=None, summarized=False, folded=None):
        self.view, self.nodes, self.edges, self.roots = view, nodes, edges, roots
        self.op_ids, self.value_ids = op_ids, value_ids
        self.tensor_ids, self.accumulate_ids = tensor_ids, accumulate_ids
        self.summarized = summarized
        # summaries: what each group folds, {"op" | "value" | "tensor": {seq: group node id}}, and
        # "groups": the group ids by depth, inputs first (the order they run forward)
        self.folded = folded or {"op": {}, "value": {}, "tensor": {}, "groups": []}
        self._refs = refs or {}          # id(obj) -> (weakref(obj), node id): no object kept alive
        self._by_id = {n.id: n for n in nodes}

    def __repr__(self):
        return f"<gradviz.Graph {self.view}: {len(self.nodes)} nodes, {len(self.edges)} edges>"

    def __len__(self):
        return len(self.nodes)

    def node(self, node_id):
        """The :class:`GraphNode` with this id."""
        return self._by_id[node_id]

    def id_of(self, obj, default=KeyError):
        """The node id drawn for a tensor, a ``grad_fn`` node or an ``AccumulateGrad``.

        A non-leaf tensor maps to the node showing its value (dataflow view) or to its root node
        (pytorch view); an ``AccumulateGrad`` maps to its own node in the pytorch view and to its
        leaf in the dataflow view.
        """
        entry = self._refs.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        fn = getattr(obj, "_grad_fn", None)
        if fn is not None and fn._seq in self.value_ids:
            return self.value_ids[fn._seq]
        if isinstance(obj, autograd.AccumulateGrad) and obj.variable is not None:
            return self.id_of(obj.variable, default)
        if default is KeyError:
            raise KeyError(f"{obj!r} is not drawn in this graph")
        return default

    def in_edges(self, node_id):
        return [e for e in self.edges if e.dst == node_id]

    def out_edges(self, node_id):
        return [e for e in self.edges if e.src == node_id]

    def to_dict(self):
        """Plain JSON-able data for the widget (schema in this module's docstring)."""
        return {
            "view": self.view,
            "summarized": self.summarized,
            "nodes": [n.to_dict() for n in self.nodes],
            "edges": [e.to_dict() for e in self.edges],
            "roots": list(self.roots),
            "op_ids": {str(k): v for k, v in self.op_ids.items()},
            "value_ids": {str(k): v for k, v in self.value_ids.items()},
            "tensor_ids": {str(k): v for k, v in self.tensor_ids.items()},
            "accumulate_ids": {str(k): v for k, v in self.accumulate_ids.items()},
        }

    def summarized_graph(self, max_nodes=MAX_NODES):
        """This graph if it has at most ``max_nodes`` nodes, else a summary that fits.

        Roots and named tensors stay; everything else is folded, by depth from the inputs,
        into ``group`` nodes ("ops 3–9: MulBackward0 ×40, AddBackward0 ×40 · 80 tensors").
        """
        if len(self.nodes) <= max_nodes:
            return self
        return _summarize(self, max_nodes)


def _dtype_name(npd):
    d = _BY_NP.get(np.dtype(npd))
    return d.name if d is not None else str(npd)


class _Shown:
    """Enough of a tensor for ``tensor_repr`` (for values whose tensor is gone)."""

    def __init__(self, data, grad_fn, requires_grad):
        self._data, self.grad_fn, self.requires_grad = data, grad_fn, requires_grad
        self.dtype = _BY_NP[data.dtype]


def _repr(data, grad_fn=None, requires_grad=False):
    if data is None or np.asarray(data).dtype not in _BY_NP:
        return None
    text = tensor_repr(_Shown(np.asarray(data), grad_fn, requires_grad))
    return text if len(text) <= 2000 else text[:2000] + " ..."


def _param_str(v):
    if isinstance(v, np.ndarray):
        return f"array{list(v.shape)}"
    if isinstance(v, type) or isinstance(v, np.dtype):
        return np.dtype(v).name
    if isinstance(v, slice):
        return ":".join("" if x is None else str(x) for x in (v.start, v.stop)) + \
            ("" if v.step is None else f":{v.step}")
    if isinstance(v, tuple) and len(v) == 1 and isinstance(v[0], (int, np.integer)):
        return str(int(v[0]))
    return format_number(v)


# --- building -----------------------------------------------------------------------------------

def graph_of(trace, view="dataflow", max_nodes=None):
    """The computation graph of a :class:`gradviz.trace.Trace` (either engine's), in ``view``
    (``"dataflow"`` or ``"pytorch"``); the trace's last run fills each node's ``flow`` and each
    edge's ``grad``.  ``max_nodes``: fold a bigger graph into groups (``Graph.summarized_graph``)
    before any value is written out, so a 20,000-op graph costs what its summary shows.
    (:func:`gradviz.drawing.picture.build_graph` traces tensors first.)
    """
    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}, not {view!r}")
    return _Builder(view, trace).build(max_nodes)


class _Recorded:
    """The last backward pass of a trace: step -> grad_in and grads_out, leaf -> grad_in."""

    def __init__(self, trace):
        self.node_in, self.node_out, self.leaf_in = {}, {}, {}
        if not trace.runs:
            return
        for e in trace.runs[-1].events:
            if e.variable is not None:
                self.leaf_in[id(e.variable)] = e.grad_in
            elif e.node is not None:
                self.node_in[id(e.node)], self.node_out[id(e.node)] = e.grad_in, e.grads_out


def _small(node):
    """The node's value for an edge label, when the tensor is small."""
    return node.value if node.shape is not None and math.prod(node.shape) <= SMALL else None


_NODE_TYPES = {}


def _node_type(name):
    """A stand-in class named like the node, so a repr reads ``grad_fn=<MulBackward0>``."""
    if name not in _NODE_TYPES:
        _NODE_TYPES[name] = type(name, (), {})
    return _NODE_TYPES[name]()


class _Builder:
    def __init__(self, view, trace):
        self.view, self.trace, self.rec = view, trace, _Recorded(trace)
        self.nodes, self.edges = [], []
        self.value_node = {}      # id(Value) -> GraphNode (leaves, data, outputs)
        self.fn_node = {}         # id(Step) -> op GraphNode
        self.out_node = {}        # id(Step) -> GraphNode showing its output
        self.acc_node = {}        # id(leaf Value) -> AccumulateGrad GraphNode
        self.refs = []            # (engine object, node): for Graph.id_of
        # Values are written as text only for what is shown: a summary folds most nodes away, and
        # formatting is most of a big graph's cost.  id(node or edge) -> (it, {field: function giving it})
        self.later_nodes, self.later_edges = {}, {}
        self.brief = False

    def lazily(self, item, **fields):
        later = self.later_nodes if type(item) is GraphNode else self.later_edges
        entry = later.get(id(item))
        if entry is None:
            later[id(item)] = (item, fields)
        else:                        # a second call for the same item adds to the first
            entry[1].update(fields)
        return item

    # -- nodes -----------------------------------------------------------------------------------

    def add(self, order, **fields):
        node = GraphNode(id="", order=order, **fields)
        self.nodes.append(node)
        return node

    def edge(self, src, dst, kind, **fields):
        edge = GraphEdge(id="", src=src, dst=dst, kind=kind, **fields)
        self.edges.append(edge)
        return edge

    def tensor(self, v):
        """The node for a leaf or data tensor (shared by every use) or a literal constant (one per use)."""
        node = self.value_node.get(id(v))
        if node is not None and not v.literal:
            return node
        a = v.data
        name = None if v.literal or v.auto else v.name
        flow = self.rec.leaf_in.get(id(v))
        node = self.add(
            tuple(v.order) + (len(self.nodes),),
            kind="const" if v.literal else "leaf",
            label=format_number(a[()]) if v.literal and a is not None and a.ndim == 0 else
            ("" if v.literal else v.name or ""),
            name=name, seq=v.seq, shape=tuple(v.shape), dtype=_dtype_name(v.dtype),
            is_leaf=v.is_leaf, requires_grad=v.requires_grad, retains_grad=v.retains_grad)
        self.lazily(node, value=lambda: node_text(a), grad=lambda: node_text(v.grad),
                    flow=lambda: node_text(flow), repr=lambda: _repr(a, None, v.requires_grad))
        self.value_node[id(v)] = node
        t = v.tensor()
        if t is not None:
            self.refs.append((t, node))
        return node

    def unknown(self, step, i):
        """A constant input nothing is known of (a torch scalar that was not saved)."""
        inp = step.inputs[i]
        return self.add((step.seq, -1, i), kind="const", label="?", shape=tuple(inp.shape),
                        dtype=_dtype_name(inp.dtype) if inp.dtype is not None else None)

    def param(self, step, key, position):
        v = step.params[key]
        return self.add((step.seq, -1, position), kind="const", label=format_number(v),
                        value=format_number(v), shape=(), dtype=None, params={"param": key})

    def op(self, step):
        if self.brief:   # folded for sure: a summary shows an op only as a count of its grad_fn name
            node = self.add((step.seq, 0, 0), kind="op", label=step.name, seq=step.seq, grad_fn=step.name,
                            op=step.key, is_leaf=False, requires_grad=True)
        else:
            node = self._op_node(step)
        self.fn_node[id(step)] = node
        fn = step.fn() if step.fn is not None else None
        if fn is not None:
            self.refs.append((fn, node))
        return node

    def _op_node(self, step):
        params = {k: _param_str(v) for k, v in (step.params or {}).items()}
        symbol = step.symbol
        operand = getattr(_drawing(step), "operand", None)   # a number written as an operand: x ** 2
        if self.view == "dataflow" and operand:
            symbol = operand[2]
        symbol = formula.fill(symbol, params, text=True)              # ^@n -> ^2
        label = symbol if self.view == "dataflow" else step.name
        return self.add((step.seq, 0, 0), kind="op", label=label, seq=step.seq, grad_fn=step.name,
                        op=step.key, symbol=symbol, params=params, is_leaf=False, requires_grad=True,
                        shape=tuple(step.out.shape), dtype=_dtype_name(step.out.dtype))

    def output(self, step, is_root=False):
        """The node showing what ``step`` produced (its tensor may be gone: value replayed)."""
        v = step.out
        data = v.data
        name = None if v.auto else v.name
        flow = self.rec.node_in.get(id(step))
        node = self.add(     # a made-up letter is drawn (as animate() names it) but is no variable's name
            (step.seq, 1, 0), kind="value", label=v.name or "", name=name,
            seq=v.seq, fn_seq=step.seq,
            shape=tuple(v.shape), dtype=_dtype_name(v.dtype), is_leaf=False, requires_grad=True,
            retains_grad=v.retains_grad, is_root=is_root, grad_fn=step.name)
        self.lazily(node, value=lambda: node_text(data), grad=lambda: node_text(v.grad),
                    flow=lambda: node_text(flow), repr=lambda: _repr(data, _node_type(step.name), True))
        self.out_node[id(step)] = node
        self.value_node[id(v)] = node
        t = v.tensor()
        if t is not None:
            self.refs.append((t, node))
        return node

    # -- the two views ---------------------------------------------------------------------------

    def source(self, step, i):
        """The node feeding input ``i`` of ``step`` in the dataflow view."""
        inp = step.inputs[i]
        if inp.kind == "op":
            return self.out_node[id(inp.src)]
        if inp.src is None:
            return self.unknown(step, i)
        node = self.tensor(inp.src)
        if inp.kind == "leaf":
            fn = step.fn() if step.fn is not None else None
            acc = _accumulate_grad(fn, i)
            if acc is not None:
                self.refs.append((acc, node))
        return node

    def dataflow(self, steps):
        roots = self.trace.roots
        root_steps = set()
        for r in roots:
            s = self.trace.step_of(r)
            if s is None:
                self.tensor(r).is_root = True
            else:
                root_steps.add(id(s))
        for step in steps:
            grads_out = self.rec.node_out.get(id(step)) or ()
            inputs = []
            for i, inp in enumerate(step.inputs):
                src = self.source(step, i)
                g = grads_out[i] if i < len(grads_out) else None
                inputs.append((src, i, inp.shape, g))
            operand = getattr(_drawing(step), "operand", None)   # a number written as an operand: x ** 2
            if operand and operand[0] in step.params:
                pos = operand[1]
                inputs.insert(pos, (self.param(step, operand[0], pos), None, (), None))
            # a coefficient is written first (5 * u, 3 y²), whichever side Python had it on
            swapped = (getattr(_drawing(step), "coefficient_first", False) and len(inputs) == 2
                       and inputs[1][0].kind == "const" and inputs[0][0].kind != "const")
            if swapped:
                inputs.reverse()
            node = self.op(step)
            for position, (src, i, shape, g) in enumerate(inputs):
                e = self.edge(src, node, "input", position=position, input=i, shape=tuple(shape))
                self.lazily(e, value=lambda src=src: _small(src), grad=lambda g=g: node_text(g))
            out = self.output(step, is_root=id(step) in root_steps)
            e = self.edge(node, out, "output", shape=out.shape)
            self.lazily(e, value=lambda out=out: _small(out), grad=lambda out=out: out.flow)
            # written in forward order when the values are (each may inline its inputs' expressions)
            self.lazily(node, _latex=lambda step=step, inputs=inputs, out=out, swapped=swapped, node=node:
                        self.latex(step, inputs, out, swapped, node))
        for data, origin, how in self.trace.cuts:
            step = self.trace.step_of(origin)
            src = self.out_node.get(id(step)) if step is not None else self.tensor(origin)
            if src is not None:
                self.edge(src, self.tensor(data), "cut", shape=tuple(data.shape), cut=how)

    def pytorch(self, steps):
        leaves = {}
        for step in steps:
            for i, inp in enumerate(step.inputs):
                if inp.kind == "leaf" and id(inp.src) not in leaves:
                    fn = step.fn() if step.fn is not None else None
                    leaves[id(inp.src)] = (inp.src, _accumulate_grad(fn, i))
        for v, acc in sorted(leaves.values(), key=lambda pair: pair[0].order):
            leaf = self.tensor(v)
            node = self.add(v.order[:1] + (0.5, 0), kind="accumulate", label="AccumulateGrad",
                            seq=v.seq, grad_fn="AccumulateGrad", shape=leaf.shape, dtype=leaf.dtype,
                            requires_grad=True)
            flow = self.rec.leaf_in.get(id(v))
            self.lazily(node, flow=lambda flow=flow: node_text(flow))
            self.acc_node[id(v)] = node
            if acc is not None:
                self.refs.append((acc, node))
            e = self.edge(leaf, node, "accumulate", shape=leaf.shape)
            self.lazily(e, grad=lambda flow=flow: node_text(flow))
        for step in steps:
            node = self.op(step)
            grads_out = self.rec.node_out.get(id(step)) or ()
            node.next = []
            for i, inp in enumerate(step.inputs):
                if inp.kind == "const":
                    node.next.append(None)
                    continue
                src = self.acc_node[id(inp.src)] if inp.kind == "leaf" else self.fn_node[id(inp.src)]
                node.next.append(src)
                g = grads_out[i] if i < len(grads_out) else None
                e = self.edge(src, node, "next", position=i, input=i, shape=tuple(inp.shape))
                self.lazily(e, grad=lambda g=g: node_text(g))
            flow = self.rec.node_in.get(id(step))
            self.lazily(node, flow=lambda flow=flow: node_text(flow))
        done = set()
        for r in self.trace.roots:
            step = self.trace.step_of(r)
            if step is None:
                self.tensor(r).is_root = True
            elif id(step) not in done:
                done.add(id(step))
                out = self.output(step, is_root=True)
                e = self.edge(self.fn_node[id(step)], out, "root", shape=out.shape)
                self.lazily(e, grad=lambda out=out: out.flow)

    def latex(self, step, inputs, out, swapped=False, node=None):
        """The op's forward expression and local derivatives, with its inputs' names filled in.

        ``node``: the op node to write them into.
        """
        subs = {}
        prec = getattr(_drawing(step), "precedence", 4)   # parentheses around an inlined operand only where needed
        n = len(step.inputs)
        for src, i, _, _ in inputs:
            if i is None:
                subs["@" + src.params["param"]] = src.label
            else:
                base = step.key in ("pow", "pow_tt") and i == 0
                braced = f"{{@{i}}}" in step.latex    # \frac{@0}{@1}, e^{@0}: already delimited
                subs[f"@{i}"] = self.operand_latex(src, i, n, 0 if braced else prec, base)
        for k, v in step.params.items():
            subs.setdefault("@" + k, _param_str(v))
        subs["@y"] = latex_name(out.name) if out.name else "y"
        forward = dict(subs)
        if swapped:  # commutative: write it in the order it is drawn
            forward["@0"], forward["@1"] = subs["@1"], subs["@0"]

        def fill(s, table):       # formulas are written in one place: gradviz.formula
            return formula.fill(s, {k[1:]: v for k, v in table.items()})
        out._expr, out._prec = fill(step.latex, forward), prec
        dlatex = [fill(step.dlatex[min(i, len(step.dlatex) - 1)], subs) for i in range(n)] if step.dlatex else None
        if node is not None:
            node.latex, node.dlatex = out._expr, dlatex
        return out._expr, dlatex

    @staticmethod
    def operand_latex(src, i, n_inputs, prec, base):
        if src.kind == "const":
            return src.label
        if src.name:
            return latex_name(src.name)
        expr = getattr(src, "_expr", None)
        if expr and len(expr) <= 80:  # an unnamed intermediate: inline its expression
            inner = getattr(src, "_prec", 4)
            return rf"\left({expr}\right)" if base or inner < prec else expr
        return "x" if n_inputs == 1 else f"x_{{{i}}}"

    # -- finishing -------------------------------------------------------------------------------

    def finish(self, only=None):
        """Write the values out: of every node and edge, or of the nodes in ``only`` (ids of objects).

        Nodes first: an edge's label is its source node's text.
        """
        if only is None:
            todo = list(self.later_nodes.values()) + list(self.later_edges.values())
        else:
            todo = [entry for i, entry in self.later_nodes.items() if i in only]   # forward order
        for item, fields in todo:
            for key, make in fields.items():
                if key.startswith("_"):      # writes several fields itself
                    make()
                else:
                    setattr(item, key, make())
        self.later_nodes, self.later_edges = {}, {}

    def build(self, max_nodes=None):
        steps = self.trace.steps if self.view == "dataflow" else [s for s in self.trace.steps if not s.cut_only]
        # every step is an op node (and a value node, in the dataflow view): past max_nodes, the
        # graph will be folded, and a summary never shows an op node itself
        self.brief = bool(max_nodes) and len(steps) * (2 if self.view == "dataflow" else 1) > max_nodes
        if self.view == "dataflow":
            self.dataflow(steps)
        else:
            self.pytorch(steps)
        fold = bool(max_nodes) and len(self.nodes) > max_nodes
        if not fold:
            self.finish()
        # Forward order from the core's sequence numbers, renumbered: n0, n1, ... every run.
        self.nodes.sort(key=lambda n: n.order)
        for k, node in enumerate(self.nodes):
            node.id = f"n{k}"
            node.__dict__.pop("_expr", None)
            node.__dict__.pop("_prec", None)
        rank = {id(n): k for k, n in enumerate(self.nodes)}
        self.edges.sort(key=lambda e: (rank[id(e.dst)], e.position if e.position is not None else -1,
                                       rank[id(e.src)]))
        for k, e in enumerate(self.edges):
            e.id, e.src, e.dst = f"e{k}", e.src.id, e.dst.id
        for node in self.nodes:
            if node.next is not None:
                node.next = [None if n is None else n.id for n in node.next]
        op_ids = {n.seq: n.id for n in self.nodes if n.kind == "op"}
        value_ids = {n.fn_seq: n.id for n in self.nodes if n.fn_seq is not None}
        if self.view == "dataflow":
            value_ids.update({n.seq: n.id for n in self.nodes if n.kind == "op"
                              and n.seq not in value_ids})
        tensor_ids = {n.seq: n.id for n in self.nodes
                      if n.kind in ("leaf", "const", "value") and n.seq is not None}
        accumulate_ids = {n.seq: n.id for n in self.nodes if n.kind == "accumulate"}
        refs = {}
        for obj, node in self.refs:
            try:
                refs.setdefault(id(obj), (weakref.ref(obj), node.id))
            except TypeError:  # torch's grad_fn nodes: held (the trace holds them too) so id() stays theirs
                refs.setdefault(id(obj), ((lambda obj=obj: obj), node.id))
        root_ids = []
        for r in self.trace.roots:
            rid = self.value_node[id(r)].id
            if rid not in root_ids:
                root_ids.append(rid)
        graph = Graph(self.view, self.nodes, self.edges, root_ids, op_ids, value_ids, tensor_ids,
                      accumulate_ids, refs)
        if fold:
            return _summarize(graph, max_nodes, prepare=lambda keep: self.finish({id(n) for n in keep}))
        return graph


def _accumulate_grad(fn, i):
    """The AccumulateGrad object at ``fn.next_functions[i]`` (either engine), for ``Graph.id_of``."""
    try:
        return fn.next_functions[i][0] if fn is not None else None
    except Exception:  # a freed or foreign node: nothing to look up by
        return None


# --- summarizing big graphs ---------------------------------------------------------------------

def _summarize(graph, max_nodes, prepare=None):
    """Keep roots and named nodes; fold the rest into one group node per band of depths.

    ``prepare(kept nodes)`` is called before they are copied (the builder writes their values).
    """
    depth = {}
    preds = {}
    for e in graph.edges:
        preds.setdefault(e.dst, []).append(e.src)
    succs = {}
    for e in graph.edges:
        succs.setdefault(e.src, []).append(e.dst)
    for n in graph.nodes:  # forward order is a topological order
        depth[n.id] = 1 + max((depth[p] for p in preds.get(n.id, ())), default=-1)
    for n in reversed(graph.nodes):  # inputs sit just above their first use, not all at the top
        if n.id not in preds and n.id in succs:
            depth[n.id] = max(0, min(depth[s] for s in succs[n.id]) - 1)
    keep = [n for n in graph.nodes if n.is_root]
    named = [n for n in graph.nodes if n.name and not n.is_root]
    if len(named) <= max_nodes // 4:
        keep += named
    chosen = {id(n) for n in keep}      # (by identity: comparing dataclasses field by field is slow)
    params = [n for n in graph.nodes if n.kind == "leaf" and n.requires_grad and id(n) not in chosen]
    if len(keep) + len(params) <= max_nodes // 4:  # what gradients are for: keep them visible
        keep += params
    kept = {n.id for n in keep}
    budget = max(4, min(24, max_nodes - len(keep)))
    top = max(depth.values())
    width = max(1, math.ceil((top + 1) / budget))
    bands = {}
    for n in graph.nodes:
        if n.id not in kept:
            bands.setdefault(depth[n.id] // width, []).append(n)
    new_nodes, where = [], {}
    for n in graph.nodes:
        if n.id in kept:
            where[n.id] = n
    groups = []
    for band, members in sorted(bands.items()):
        counts = {}
        for m in members:
            key = m.grad_fn if m.kind in ("op", "accumulate") else m.kind
            counts[key] = counts.get(key, 0) + 1
        ops = sorted(((k, v) for k, v in counts.items() if k not in KINDS), key=lambda kv: (-kv[1], kv[0]))
        n_ops = sum(v for _, v in ops)
        n_tensors = len(members) - n_ops
        lo, hi = band * width, min(top, band * width + width - 1)
        parts = []
        if n_ops:
            shown = ", ".join(f"{k} ×{v}" for k, v in ops[:3]) + (", ..." if len(ops) > 3 else "")
            parts.append(f"{n_ops} op{'s' if n_ops > 1 else ''} ({shown})")
        if n_tensors:
            parts.append(f"{n_tensors} tensor{'s' if n_tensors > 1 else ''}")
        group = GraphNode(id="", kind="group", label=f"depth {lo}–{hi}" if hi > lo else f"depth {lo}",
                          value=" · ".join(parts), members=[m.id for m in members],
                          order=members[0].order, is_leaf=False)
        groups.append(group)
        for m in members:
            where[m.id] = group
    if prepare is not None:
        prepare(keep)
    new_nodes = sorted([where[n.id] for n in keep] + groups, key=lambda n: n.order)
    seen, ordered = set(), []
    for n in new_nodes:
        if id(n) not in seen:
            seen.add(id(n))
            ordered.append(n)
    renamed = {}
    out_nodes = []
    for k, n in enumerate(ordered):
        copy = dataclasses.replace(n, id=f"n{k}")
        renamed[id(n)] = copy
        out_nodes.append(copy)
    old_to_new = {old: renamed[id(where[old])].id for old in where}
    edges = {}
    for e in graph.edges:
        s, d = old_to_new[e.src], old_to_new[e.dst]
        if s == d:
            continue
        key = (s, d)
        if key in edges:
            edges[key].count += 1
        else:
            kept_both = e.src in kept and e.dst in kept
            edges[key] = GraphEdge(id="", src=s, dst=d, kind=e.kind if kept_both else "group",
                                   position=e.position, input=e.input, shape=e.shape,
                                   cut=e.cut if kept_both else None)
    rank = {n.id: k for k, n in enumerate(out_nodes)}
    out_edges = sorted(edges.values(), key=lambda e: (rank[e.dst], rank[e.src]))
    for k, e in enumerate(out_edges):
        e.id = f"e{k}"

    def remap(mapping):
        return {k: old_to_new[v] for k, v in mapping.items() if v in kept}
    refs = {k: (ref, old_to_new[v]) for k, (ref, v) in graph._refs.items()}
    # groups by band, inputs first: an order in which a group only reads groups before it
    folded = {"op": {}, "value": {}, "tensor": {}, "groups": [renamed[id(g)].id for g in groups]}
    for n in graph.nodes:
        if n.id in kept:
            continue
        if n.kind == "op":
            folded["op"][n.seq] = old_to_new[n.id]
        elif n.fn_seq is not None:
            folded["value"][n.fn_seq] = old_to_new[n.id]
        elif n.seq is not None and n.kind in ("leaf", "const"):
            folded["tensor"][n.seq] = old_to_new[n.id]
    return Graph(graph.view, out_nodes, out_edges, [old_to_new[r] for r in graph.roots],
                 remap(graph.op_ids), remap(graph.value_ids), remap(graph.tensor_ids),
                 remap(graph.accumulate_ids), refs, summarized=True, folded=folded)
