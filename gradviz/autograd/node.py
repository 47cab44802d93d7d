"""grad_fn nodes: what ``y.grad_fn`` is (a :class:`Node` of PyTorch's class name, its saved values
as ``_saved_self``...), a leaf's :class:`AccumulateGrad`, and the errors a student meets reading a
node whose values were freed or changed in place.  The engine (:mod:`gradviz.autograd.engine`)
makes and runs them.
"""

import math
import operator
import types
import weakref

import numpy as np

from .. import _hooks
from .._dtype import from_numpy_dtype
from .._types import as_written
from ..ops import OPS
from .grad_mode import _Observing

__all__ = ["Node", "Pending", "AccumulateGrad", "node_class", "shown", "fill", "accumulator", "SECOND_BACKWARD"]


def _read_only(slot, name, doc, seen=None):
    """A node's attribute ``name`` read from ``slot`` and, as in PyTorch, refused to an assignment or
    a ``del`` in PyTorch's words (a custom Function's node is a torch._C._FunctionBase there).
    ``seen(value)``: what is read, when it is not the slot's value as it is."""
    def refuse(node, value=None):
        cls = type(shown(node))
        owner = cls.__name__ if cls.__module__ == "builtins" else "torch._C._FunctionBase"
        raise AttributeError(f"attribute '{name}' of '{owner}' objects is not writable")
    read = operator.attrgetter(slot)
    return property(read if seen is None else lambda node: seen(read(node)), refuse, refuse, doc)


def shown(node):
    """``node`` as a student sees it: an object of its PyTorch class (``MulBackward0``...).

    The engine makes every node it records a plain :class:`Node`, and gives it its class (in place:
    the same object) the first time it leaves the engine: through ``grad_fn``, ``next_functions``,
    a gradient edge, its name or its repr.  CPython 3.11 reads an attribute at full speed only where
    it always meets one class, and the engine reads a node's dozen attributes at every op and
    every step of backward: a training step of a small MLP takes 4% more when each node is born of
    its own class."""
    if type(node) is Pending:
        fill(node)
    if type(node) is Node:
        node.__class__ = _NODE_CLASSES.get(node.op.name) or node_class(node.op.name)
    return node


def _shown_edges(edges):
    for fn, _ in edges:
        if fn is not None:
            shown(fn)
    return edges


class Node:
    """A ``grad_fn``: one recorded op, its inputs' edges and what it saved for backward.

    ``next_functions`` is PyTorch's: one ``(node, 0)`` pair per input -- the input's own
    ``grad_fn``, an ``AccumulateGrad`` for a leaf that requires grad, or ``None`` (read-only, as
    in PyTorch; the engine reads and writes them as ``_edges``).
    """

    __slots__ = ("op", "_edges", "_saved", "_metas", "_params", "_out", "_out_meta", "_outs",
                 "_seq", "_freed", "_nograd_inputs", "_metadata", "_hooks", "_packed", "_pending", "__weakref__")

    def name(self):
        name = type(shown(self)).__name__   # PyTorch's nodes written by hand in C++ say so in their name
        return "torch::autograd::" + name if name in ("NotImplemented", "CopySlices", "CopyBackwards") else name

    next_functions = _read_only("_edges", "next_functions",
                                "((node, output number), ...) per input: where its gradient goes",
                                _shown_edges)

    def __repr__(self):
        cls = type(shown(self))  # custom Functions' nodes print with their module, as in PyTorch
        name = cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"
        return f"<{name} object at {hex(id(self))}>"

    @property
    def saved_values(self):
        """The arrays this node keeps for backward (``None`` once freed)."""
        if self._freed:
            return None
        return tuple(s[0] for s in self._saved if s is not None)

    def _release(self):
        """Free what this node saved, once a pass without ``retain_graph`` has run it (PyTorch's
        ``release_variables``): running it again, or reading a saved value, is then an error."""
        saved = self._saved
        if saved.count(None) != len(saved):
            self._freed = True
            self._saved = [None] * len(saved)

    @property
    def metadata(self):
        """A dict of the user's own notes on this node, made when first asked for (most nodes never are)."""
        try:
            return self._metadata
        except AttributeError:   # (the slot is left empty until then: recording a node stays cheap)
            self._metadata = {}
            return self._metadata

    @metadata.setter
    def metadata(self, value):
        raise AttributeError(f"attribute 'metadata' of '{type(shown(self)).__name__}' objects is not writable")

    def output(self):
        """The tensor this node produced, if it is still alive."""
        return self._out()

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after this node runs; a tuple it returns replaces grad_inputs."""
        return _hooks.add_hook(self._hooks_made().post, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before this node runs; a tuple it returns replaces grad_outputs."""
        return _hooks.add_hook(self._hooks_made().pre, fn)

    def _hooks_made(self):
        if self._hooks is None:
            self._hooks = _hooks.NodeHooks()
        return self._hooks

    def __dir__(self):
        # (the _saved_... of this node's entry, not every one the class has a property for)
        own = {n for n in object.__dir__(self) if not n.startswith(("_saved_", "_raw_saved_"))}
        return sorted(own | {"_saved_" + k for k in (self.op.saved or () if self.op is not None else ())})


class Pending(Node):
    """A node the forward pass has just recorded: its op, its inputs' edges (a leaf standing for the
    AccumulateGrad it will get) and their versions are captured, and its edges, metadata and saved
    values are worked out by :func:`fill` the first time anything reads one.  It is then a plain
    :class:`Node`, as if it had been filled at once.

    Most graphs are read once, by their backward pass, which fills each node as it walks the
    graph: a forward pass records an op in about 0.9 µs less (a 2x2 ``a + b``: 26,840 instructions
    instead of 40,830), and its backward pass does that work instead.  A class with ``__getattr__``
    reads every attribute slowly in CPython 3.11, so the engine's loops only ever meet filled nodes.

    What the capture holds until then: the inputs and their arrays (PyTorch keeps only what the
    rules save), and a leaf, not its AccumulateGrad, when none is alive (one made later and dropped
    before this node is filled takes the hooks put on it away with it)."""

    __slots__ = ()

    def __getattr__(self, name):      # (only called for a field not set yet)
        if name in _FILLED:
            fill(self)
            return getattr(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


_FILLED = frozenset({"_edges", "_metas", "_saved", "_nograd_inputs", "_out_meta"})


def fill(node):
    """Work out a :class:`Pending` node's edges, metadata and saved values from what was captured
    when it was recorded (``record(..., defer=True)``), as :func:`gradviz.autograd.engine.record`
    would have then: each input's edge (a leaf's shared AccumulateGrad, made now if none is alive),
    its shape, dtype and layout (what backward knows of a value it did not save), and the values
    the rules of the inputs a gradient will reach need, with their versions at the time."""
    inputs, arrays, links, versions, out, out_box, out_version = node._pending
    node.__class__, node._pending = Node, None
    n, nograd = len(inputs), None
    if n == 2:      # (most ops: the loop below written out, with no lists to make and copy)
        a, b = arrays
        e, f = links
        node._metas = ((a.shape, a.dtype, a.strides), (b.shape, b.dtype, b.strides))
        node._edges = edges = (e if type(e) is tuple else (accumulator(e), 0),
                               f if type(f) is tuple else (accumulator(f), 0))
        if edges[0][0] is None or edges[1][0] is None:
            nograd = {k: x for k, x in enumerate(inputs) if edges[k][0] is None}
    elif n == 1:
        a, e = arrays[0], links[0]
        node._metas = ((a.shape, a.dtype, a.strides),)
        node._edges = edges = (e if type(e) is tuple else (accumulator(e), 0),)
        nograd = None if edges[0][0] is not None else {0: inputs[0]}
    else:
        edges, metas = [], []
        for k, (t, a, e) in enumerate(zip(inputs, arrays, links)):
            metas.append((a.shape, a.dtype, a.strides))
            e = e if type(e) is tuple else (accumulator(e), 0)
            if e[0] is None:     # (input k: no gradient goes to it)
                nograd = {} if nograd is None else nograd
                nograd[k] = t
            edges.append(e)
        node._edges, node._metas = tuple(edges), tuple(metas)
    node._out_meta = (out.shape, out.dtype)
    # saved for the inputs a gradient will reach (PyTorch's should_compute_output): a view made in
    # no_grad() of a tensor that requires grad has no edge, so what only its rule reads is not kept
    op = node.op
    if nograd is None:     # (the usual case: every input has an edge, which the count of them says)
        node._nograd_inputs, key = _NO_INPUTS, (op, n)
    else:                  # (the data a model is fed, a target: inputs numbered in nograd have none)
        node._nograd_inputs, key = nograd, (op, n, tuple(nograd))
    plan = _SAVE_PLANS.get(key)
    if plan is None:   # (worked out once per op and inputs needed)
        plan = _SAVE_PLANS[key] = _save_plan(op, [i not in node._nograd_inputs for i in range(n)])
    saved = [None] * (n + 1)
    for k in plan:
        if k == -1:
            saved[-1] = (out, out_box, out_version, None)
        elif k < n:    # (a variadic op's rule may read inputs it was not given this time)
            t = inputs[k]
            saved[k] = (arrays[k], t._vbox, versions[k], t)
    node._saved = saved
    return node


_NO_INPUTS = types.MappingProxyType({})   # a node whose every input has an edge: no inputs without one
_SAVE_PLANS = {}


def _save_plan(op, needs):
    """Which values to save (input positions; -1 for the output): the inputs the needed rules use,
    and the output if any rule uses it (PyTorch keeps a result whenever it records the node, so
    writing into it in place is caught even when only another input's rule reads it)."""
    keys = {"o"} if any("o" in u for u in op.uses) else set()
    for i, need in enumerate(needs):
        if need:
            keys.update(op.uses[min(i, len(op.uses) - 1)])
    return tuple(sorted(-1 if k == "o" else int(k) for k in keys))


class AccumulateGrad(Node):
    """The sink of a leaf: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("_variable",)
    __module__ = "builtins"   # PyTorch's node classes print as <class 'AccumulateGrad'>
    # what every sink has: no inputs, no op, nothing saved, one output (read-only, as in PyTorch)
    _edges, op, _saved, _freed, _outs, _packed = (), None, None, False, None, None

    variable = _read_only("_variable", "variable", "The leaf whose .grad this node fills")

    def name(self):
        return "torch::autograd::AccumulateGrad"


# grad_fn._saved_self, _saved_result, _saved_exponent... (and _raw_saved_...): what the op table's
# entry says the node keeps, by PyTorch's names. They are properties of Node, one per name some entry
# saves, not a __getattr__: a class with __getattr__ makes every attribute a node reads (the engine
# reads a dozen per node) three times slower in CPython 3.11, which cannot specialise its lookups.

def _saved_attribute(key, raw):
    name = ("_raw_saved_" if raw else "_saved_") + key

    def get(self):
        op = self.op
        spec = op.saved.get(key) if op is not None and op.saved else None
        if spec is None or raw and not (isinstance(spec, int) or spec == "o"):
            raise AttributeError(f"'{type(shown(self)).__name__}' object has no attribute '{name}'")
        return _hooks.SavedTensor(self, -1 if spec == "o" else spec) if raw else _saved_value(self, spec)
    return property(get, doc=f"What the node saved as ``{key}`` (PyTorch's ``{name}``).")


def _saved_attributes(ops):
    """Give Node a ``_saved_<key>`` and ``_raw_saved_<key>`` property for each key an entry saves."""
    for op in ops:
        for key in op.saved or ():
            for raw in (False, True):
                name = ("_raw_saved_" if raw else "_saved_") + key
                if name not in Node.__dict__:
                    setattr(Node, name, _saved_attribute(key, raw))


_saved_attributes(OPS.values())


_NODE_CLASSES = {}


def node_class(name, module="builtins"):
    """The grad_fn class called ``name`` (``MulBackward0``...), made once.

    PyTorch's own nodes print as ``<class 'MulBackward0'>``; a custom Function's node names its module.
    """
    if name not in _NODE_CLASSES:
        _saved_attributes(OPS.values())     # (any entry declared since)
        _NODE_CLASSES[name] = type(name, (Node,), {"__slots__": (), "__module__": module})
    return _NODE_CLASSES[name]


def accumulator(t):
    """The leaf's AccumulateGrad node, shared by every op that uses the leaf (as in PyTorch)."""
    acc = t._acc() if t._acc is not None else None
    if acc is None:     # (made here, without a constructor's call: every leaf of every new graph has one)
        acc = object.__new__(AccumulateGrad)
        acc._variable, acc._seq, acc._hooks = t, t._seq, None
        t._acc = weakref.ref(acc)
    return acc


def _short_name(fn):
    """A node's name as PyTorch's messages write it: MulBackward0 is Mul (an op-table entry: its node's)."""
    name = fn.name() if isinstance(fn, Node) else fn.name
    return name[:-len("Backward0")] if name.endswith(("Backward0", "Backward1")) else name


SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")


def _size_str(shape):
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _saved_value(node, spec):
    """One saved value: a parameter or a size as it is (a dim as written), a tensor as PyTorch unpacks it -- the input
    itself, or for the result a new tensor on the same values whose grad_fn is this node."""
    if isinstance(spec, str) and spec[0] in "@#%":
        if spec[0] == "@":                          # "@alpha=1": a parameter, 1 when not given
            name, _, default = spec[1:].partition("=")
            name, _, part = name.partition(".")     # "@s.start": a part of one (a slice's start)
            value = node._params.get(name, int(default) if default else None)
            value = getattr(value, part) if part else value
            # (a dim or index the op wrapped into range: as the user wrote it, -1 as 2**64 - 1)
            return _wrap_for(node, value) if isinstance(value, np.ndarray) else as_written(value)
        shape = node._metas[int(spec[1:])][0]
        return tuple(shape) if spec[0] == "#" else math.prod(shape)
    if node._freed:
        raise RuntimeError(SECOND_BACKWARD)
    is_output = spec == "o"
    entry = node._saved[-1 if is_output else spec]
    if entry is None:
        return None
    if node._packed is not None and not _Observing.on:     # (PyTorch unpacks on every access)
        _hooks.unpacked(node, node._saved, only=-1 if is_output else spec)
    if entry[1][0] != entry[2]:
        raise _modified_error(node, entry, is_output)
    if not is_output:
        return entry[3] if not entry[3]._literal else _wrapped_number(node, entry[3])
    result = _wrap_for(node, entry[0])
    result._grad_fn, result._requires_grad = node, True
    return result


def _wrapped_number(node, t):
    """A saved Python number as PyTorch shows it: a tensor of the number's own type (an int is
    int64, a float float64, a bool bool), whatever dtype the op computed in; None for a stand-in."""
    number = t.__dict__.get("_number")
    if number is None:
        return None
    kind = bool if isinstance(number, (bool, np.bool_)) else int if isinstance(number, (int, np.integer)) \
        else complex if isinstance(number, complex) else float
    return _wrap_for(node, np.array(number, {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}[kind]))


def _wrap_for(node, array):
    """A new tensor of the graph's own class (the engine imports no tensor class: it asks one of the
    node's own tensors to wrap the array)."""
    tensors = [node._out()] + [e[3] for e in node._saved if e is not None] + list(node._nograd_inputs.values())
    tensors += [fn.variable for fn, _ in node._edges if isinstance(fn, AccumulateGrad)]
    found = next((t for t in tensors if t is not None), None)
    return (found if found is not None else _tensor_below(node))._wrap(array)


def _tensor_below(node):
    """A tensor of the graph below ``node`` (whose own result is gone and which saved none): the
    first live result or leaf met walking down its edges (every graph ends at a leaf)."""
    todo, seen = [fn for fn, _ in node._edges if fn is not None], set()
    while todo:
        fn = todo.pop(0)
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        out = getattr(fn, "_out", None)
        t = fn.variable if isinstance(fn, AccumulateGrad) else out() if out is not None else None
        if t is not None:
            return t
        todo += [nxt for nxt, _ in fn._edges if nxt is not None]
    raise RuntimeError("no tensor of this graph is alive to show the saved value with")


def _modified_error(node, entry, is_output):
    arr, vbox, version, tensor = entry
    shape, name = arr.shape, None if is_output or tensor._grad_fn is None else _short_name(tensor._grad_fn)
    if is_output:   # (CopySlices keeps the written base for the in-place op's result: the view)
        inner = node._params.get("inner") if node.op is OPS["copy_slices"] else None
        shape, name = (node._params["size"], _short_name(inner)) if inner else (shape, _short_name(node))
    what = f"[gradviz.{from_numpy_dtype(arr.dtype).legacy} {_size_str(shape)}]"
    if name is not None:
        what += f", which is output 0 of {name},"
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {what} is at version {vbox[0]}; expected version {version} instead. Hint: "
        "enable anomaly detection to find the operation that failed to compute its gradient, "
        "with torch.autograd.set_detect_anomaly(True, check_nan=False).")
