"""What the widget knows about one graph: its ops in forward order, every value, every name.

Intermediate tensors are often gone by the time the widget is built (``y = 5 * (x + 1) ** 2``
keeps no reference to ``x + 1``), so a value whose tensor is dead is computed again from its
inputs with the op's own forward rule -- the same numbers the forward pass produced.
"""

import math

import numpy as np

from ..autograd import AccumulateGrad
from ..tensor import Tensor
from ..graph import format_number, format_value, latex_name
from ..trace import forward_nodes

__all__ = ["Lesson", "num", "short", "latex_name"]

_AUTO = "abcdfghkmpqrstuvwz"


def num(a):
    """A value as PyTorch prints it (what the graph shows), on one line: ``[10., 10.]``, ``0.5000``."""
    if a is None:
        return "None"
    return " ".join(format_value(np.asarray(a)).split())


def short(a, limit=6):
    """A short text for a value in a formula: ``10``, ``0.5``, ``[10, 10]``, ``[1, 2, 3, …] (4×5)``."""
    if a is None:
        return "None"
    a = np.asarray(a)
    if a.size == 1:
        return _scalar(a.reshape(-1)[0])
    if a.size <= limit and a.ndim == 1:
        return "[" + ", ".join(_scalar(v) for v in a) + "]"
    if a.size <= limit and a.ndim == 2:
        return "[" + ", ".join("[" + ", ".join(_scalar(v) for v in row) + "]" for row in a) + "]"
    head = ", ".join(_scalar(v) for v in a.reshape(-1)[:3])
    return f"[{head}, …] ({'×'.join(str(n) for n in a.shape)})"


def _scalar(v):
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        return str(v)
    if v.is_integer() and abs(v) < 1e6:
        return str(int(v))
    return f"{v:.4g}"


class Lesson:
    """The graph behind ``root``: ops in forward order, inputs, values, leaves and names.

    ``names`` maps a name to a tensor (``{"x": x, "y": y}``); every other tensor gets a short
    letter that is not taken, so the derivation and the captions can talk about all of them.
    """

    def __init__(self, root, names=None):
        self.root = root
        self.nodes = forward_nodes(root) if root.grad_fn is not None else []
        self.by_seq = {n._seq: n for n in self.nodes}
        self.values = {}                       # node seq -> its output array
        self.leaves = []                       # tensors that require grad, in creation order
        self.consts = {}                       # (node seq, input i) -> constant tensor
        self._inputs = {}                      # node seq -> the arrays its op read
        seen = set()
        for node in self.nodes:
            arrays = []
            for i, (fn, _) in enumerate(node.next_functions):
                if fn is None:
                    t = node._nograd_inputs.get(i)
                    self.consts[(node._seq, i)] = t
                    a = t._data if t is not None else np.zeros(node._metas[i][0])
                elif isinstance(fn, AccumulateGrad):
                    if fn.variable._seq not in seen:
                        seen.add(fn.variable._seq)
                        self.leaves.append(fn.variable)
                    a = fn.variable._data
                else:
                    a = self.values[fn._seq]
                shape, dtype = node._metas[i]
                arrays.append(np.asarray(a).astype(dtype, copy=False))
            out = node._out()
            if out is not None:
                self.values[node._seq] = out._data
            else:
                with np.errstate(all="ignore"):      # the forward pass already warned, if at all
                    self.values[node._seq] = np.asarray(node.op.forward(*arrays, **(node._params or {})))
            self._inputs[node._seq] = arrays
        self.leaves.sort(key=lambda t: t._seq)
        if root.grad_fn is None and root.requires_grad:
            self.leaves = [root]
        self._name_all(names or {})

    # -- values --------------------------------------------------------------------------------

    def inputs(self, node):
        """The arrays ``node``'s op read in the forward pass, one per input."""
        return self._inputs[node._seq]

    def output(self, node):
        return self.values[node._seq]

    def kinds(self, node):
        """One ``(kind, thing)`` per input: ``("op", node)``, ``("leaf", tensor)``, ``("const", tensor)``."""
        out = []
        for i, (fn, _) in enumerate(node.next_functions):
            if fn is None:
                out.append(("const", self.consts.get((node._seq, i))))
            elif isinstance(fn, AccumulateGrad):
                out.append(("leaf", fn.variable))
            else:
                out.append(("op", fn))
        return out

    def consumers(self):
        """For each node seq or leaf seq: the ``(node, i)`` uses of its output, in forward order."""
        uses = {}
        for node in self.nodes:
            for i, (fn, _) in enumerate(node.next_functions):
                if fn is not None:
                    key = fn.variable._seq if isinstance(fn, AccumulateGrad) else fn._seq
                    uses.setdefault(key, []).append((node, i))
        return uses

    # -- names ---------------------------------------------------------------------------------

    def _name_all(self, names):
        """``names``: ``{"x": x}`` (tensors) or ``{seq: "x"}`` (leaf, constant or grad_fn seq)."""
        by_id, by_seq = {}, {}
        for key, value in names.items():
            if isinstance(value, Tensor):
                by_id.setdefault(id(value), key)
            elif isinstance(key, int) and value:
                by_seq[key] = value
        self.name_of = {}                      # seq (leaf tensor seq, node seq, const tensor seq) -> name
        for t in self.leaves:
            self.name_of[t._seq] = by_seq.get(t._seq) or by_id.get(id(t))
        if self.root.grad_fn is None and self.root._seq not in self.name_of:   # made under no_grad()...
            self.name_of[self.root._seq] = by_seq.get(self.root._seq) or by_id.get(id(self.root))
        for node in self.nodes:
            out = node._out()
            self.name_of[node._seq] = by_seq.get(node._seq) or (by_id.get(id(out)) if out is not None else None)
        for t in self.consts.values():
            if t is not None and not t._literal:
                name = by_seq.get(t._seq) or by_id.get(id(t))
                if name:
                    self.name_of[t._seq] = name
        taken = {v for v in self.name_of.values() if v}
        self.auto = set()                      # seqs whose names the widget made up
        letters = (c for c in _AUTO if c not in taken)
        fallback = (f"v{k}" for k in range(1, 10 ** 6) if f"v{k}" not in taken)
        for t in self.leaves:
            if self.name_of[t._seq] is None:
                self.name_of[t._seq] = next(letters, None) or next(fallback)
                self.auto.add(t._seq)
        for node in self.nodes:
            if self.name_of[node._seq] is None:
                if node is self.root.grad_fn and "out" not in taken:
                    self.name_of[node._seq] = "out"
                else:
                    self.name_of[node._seq] = next(letters, None) or next(fallback)
                self.auto.add(node._seq)

    def name(self, thing):
        """The name of a leaf tensor, of a node's output, or of a named constant (else None)."""
        if isinstance(thing, Tensor):
            return self.name_of.get(thing._seq)
        return self.name_of.get(thing._seq)

    @property
    def root_name(self):
        if self.root.grad_fn is not None:
            return self.name_of[self.root.grad_fn._seq]
        return self.name_of.get(self.root._seq) or "out"

    def input_text(self, kind, thing):
        """How a caption names an input: its name, or a constant's value."""
        if kind == "const":
            if thing is None:
                return "?"
            a = np.asarray(thing._data)
            return self.name_of.get(thing._seq) or (format_number(a[()]) if a.ndim == 0 else num(a))
        return self.name(thing)
