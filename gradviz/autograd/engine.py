"""The engine: each op recorded as a grad_fn node, the backward pass in topological order, ``.grad`` filled.

The lecture version of backward, which :func:`run_backward` implements::

    1. seed the root with dL/dL = 1 (or the ``gradient=`` given)
    2. visit the graph's nodes so that each runs only after every node that feeds it
    3. at each node, apply its op's vector-Jacobian products: one gradient per input
    4. where a tensor fed several ops, add the gradients that come back (the chain rule's sum)
    5. at a leaf, add the result into ``.grad``

The file reads in that order: :func:`apply` (every op), :func:`record` (its node),
:func:`run_backward`, :func:`apply_node`, :func:`_accumulate`; then edges, and the history a view
written in place gets anew.  (An op's node is captured as it runs and worked out the first time
anything reads it, by backward's walk of the graph most often: :class:`.node.Pending`.)
Around it: the nodes (:mod:`.node`), grad modes (:mod:`.grad_mode`), views (:mod:`.views`), ops
with several outputs (:mod:`.multi_output`), what a node receives through the user's hooks
(:mod:`.received`), the pass with everything that may watch it (hooks, targets, a trace recorder,
the widget: :mod:`.watched`), the steps of ``create_graph=True`` (:mod:`.double_backward`) and
the ``backward()``/``grad()`` a user calls (:mod:`._backward_grad`).

The engine never imports :mod:`gradviz.tensor`: it makes every tensor it needs (an op's result,
a gradient for ``.grad`` or a hook) through the class of the tensors it is handed
(``t._wrap(array)``), and recognises tensors (the recorded gradients of ``create_graph=True``,
in :mod:`.watched`) by :class:`gradviz._types.TensorBase`.
"""

import heapq
import itertools
import weakref

import numpy as np

from .._broadcast import unbroadcast
from .. import _errstate, _hooks, _layout, _strided
from ..ops import OPS, Meta
from .grad_mode import _GradMode, _Observing
from .received import hook_wrapper, received
from .watched import accumulate_leaf, add_gradient, arrays_of, receive, run_hooked, run_watched, send_on
from .views import made_view, view_error, view_meta
from .node import SECOND_BACKWARD, AccumulateGrad, Node, Pending, _modified_error, accumulator, fill, node_class

__all__ = ["apply", "record", "record_copy_slices", "current_grad_fn", "run_backward", "walk", "edge"]

_seq = itertools.count()        # creation order of nodes and tensors: the forward order
_recorders = []                 # active gradviz.trace.record() contexts (empty: recording is off)


# --- 1. apply: every op runs forward here, and is recorded when it needs a gradient --------------

def apply(op, inputs, arrays=None, **params):
    """Run ``op`` forward on tensors and record its grad_fn if any input needs a gradient.

    ``arrays`` are the inputs' values when they differ from ``t._data`` (promoted to one dtype);
    the result is a tensor of the inputs' own class.
    """
    if arrays is None:   # (every op passes here: written for CPython's speed, whose comprehensions are calls)
        n = len(inputs)
        own = arrays = [inputs[0]._data] if n == 1 else [inputs[0]._data, inputs[1]._data] if n == 2 \
            else [t._data for t in inputs]
    else:   # (the layout PyTorch gives a pointwise result is that of the inputs before promotion)
        own = [t._data for t in inputs] if op.inputs in _layout.POINTWISE else arrays
    out = op.forward(*arrays, **params) if params else op.forward(*arrays)   # (no empty ** to unpack)
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if (out.ndim > 1 or not out.flags.c_contiguous) and not (op.is_view or op.column_major):
        for a in own:   # PyTorch's results are row-major for row-major inputs (or always)
            if not a.flags.c_contiguous and not op.contiguous:
                if out.ndim > 1:   # a pointwise op keeps its inputs' layout, as PyTorch's do
                    out = _layout.laid_out(op, out, own, params)
                break
        else:
            out = out if out.flags.c_contiguous else np.ascontiguousarray(out)
    result = inputs[0]._wrap(out)
    if op.is_view:  # shares storage: same version counter, and remembers its base tensor
        made_view(result, inputs[0], view_meta(inputs[0]))
    for t in inputs:     # does any input require grad (a view: through its base)?
        if t._requires_grad or t._view is not None and t._base._requires_grad:
            if not _GradMode.enabled:
                # no graph, but a drawing can show where the graph was cut (weakly: nothing is kept alive)
                result._cut = ("no_grad()", tuple([weakref.ref(t) for t in inputs if t._requires_grad]))
            elif out.dtype.kind == "f":   # integer results have no gradient
                record(op, inputs, arrays, result, params, defer=True)
            break
    return result


# --- 2. record: a grad_fn node, with edges to the inputs and the values backward will need -------

def record(op, inputs, arrays, result, params, defer=False):
    """Attach a new grad_fn to ``result``: edges to the inputs and the values backward needs.

    What may change after the op (an input's history, its version, whether a leaf requires grad)
    is captured now; the rest (edges, metadata, saved values) is worked out by
    :func:`~gradviz.autograd.node.fill`: at once, or with ``defer`` (every op :func:`apply`
    runs) the first time anything reads the node (a :class:`~gradviz.autograd.node.Pending`)."""
    defer = defer and not _hooks.saved_hooks      # (saved_tensors_hooks pack the values now)
    node = Pending() if defer else Node()   # (given its own class, MulBackward0..., when first seen: node.shown)
    node.op, node._params, node._seq = op, params, next(_seq)   # (three stores a line, as in Tensor._wrap)
    node._freed, node._hooks, node._packed = False, None, None
    if len(inputs) == 2:     # (most ops: no comprehensions, which are calls in CPython 3.11)
        t, u = inputs
        links, versions = (_link(t), _link(u)), (t._vbox[0], u._vbox[0])
    elif len(inputs) == 1:
        t = inputs[0]
        links, versions = (_link(t),), (t._vbox[0],)
    else:
        links, versions = tuple([_link(t) for t in inputs]), tuple([t._vbox[0] for t in inputs])
    box = result._vbox
    node._pending = (inputs, arrays, links, versions, result._data, box, box[0])
    node._out, node._outs = weakref.ref(result), None
    result._grad_fn, result._requires_grad = node, True
    if not defer:
        fill(node)
        if _hooks.saved_hooks:     # saved_tensors_hooks(pack, unpack): the values go through pack now
            _hooks.pack_saved(node, [k for k in grad_order(op, len(inputs))] + [-1], *_hooks.saved_hooks[-1])
    return node


def _link(t):
    """What :func:`edge` gives ``t``, except that a leaf whose AccumulateGrad is not alive stands for
    it (made when the node is filled: most ops of a forward pass are only ever read by backward)."""
    fn = t._grad_fn if t._view is None else current_grad_fn(t)
    if fn is not None:   # (only a node with several outputs has outputs other than 0)
        return (fn, 0) if fn._outs is None else (fn, t.__dict__.get("_output_nr", 0))
    if t._requires_grad:     # (a view made in no_grad() mode requires grad through its base, but is
        acc = t._acc() if t._acc is not None else None    # no leaf of its own: PyTorch gives it no edge)
        return t if acc is None else (acc, 0)
    return _NO_EDGE


_NO_EDGE = (None, 0)


# --- 3. run_backward: each node once, when every gradient for it has arrived ---------------------

def run_backward(roots, root_grads, retain_graph=False, targets=None, accumulate=True, root_outputs=None,
                 create_graph=False, steps=None):
    """Propagate ``root_grads`` from ``roots`` (grad_fn nodes) down to the leaves.

    ``targets`` (nodes) limits the run to what they need; with ``accumulate=False`` their
    incoming gradients are returned instead of added into ``.grad`` (``autograd.grad``).
    ``root_outputs`` says which output of each root is seeded (0 unless a root has several).
    With ``create_graph=True`` the gradients are tensors and every step on them is recorded
    (grad mode on): ``steps`` is then :data:`gradviz.autograd.double_backward.STEPS`, which run a
    node and fill a ``.grad`` by recorded ops instead of :func:`apply_node` and :func:`_accumulate`.
    Otherwise, as in PyTorch, hooks and custom backward()s record no graph.
    """
    # (enable_grad() if create_graph else no_grad(), written out: a pass is short on small graphs)
    previous, _GradMode.enabled = _GradMode.enabled, bool(create_graph)
    quiet = _errstate.silence()     # nan and inf come silently, as in PyTorch (once a pass, not per node)
    rec = _recorders[-1] if _recorders else None
    try:
        if rec is not None:
            rec._begin(roots, [arrays_of(g) for g in root_grads] if create_graph else root_grads, retain_graph)
        deps, live = _graph_nodes(roots), None
        if targets is not None:  # run only the part of the graph that leads to a target
            live, deps = _reaching(deps, targets)
        buffers, leaves, ready = _seeded(roots, root_grads, root_outputs, deps)
        # (what hooks may ask of the pass: its number, the nodes it runs, whether it is autograd.grad's)
        _hooks.tasks.append((next(_hooks.task_ids), deps, live is not None))
        try:
            if live is None and rec is None and steps is None and not _Observing.on:
                _run_plain(roots, buffers, deps, leaves, ready, retain_graph)
                return {}
            captured = run_watched(roots, root_grads, buffers, deps, leaves, ready, retain_graph, targets, live,
                                   accumulate, create_graph, steps or (apply_node, _accumulate), rec)
        finally:
            _hooks.tasks.pop()
        if rec is not None:
            rec._end()
        return captured
    finally:
        _GradMode.enabled = previous
        _errstate.restore(quiet)


def _seeded(roots, root_grads, root_outputs, deps):
    """Step 1: ``(buffers, leaves, ready)``, the roots' gradients and the nodes ready at once.

    The order PyTorch runs ready nodes in: an AccumulateGrad at once (in the order they became
    ready), then the most recently created node first (``ready`` is a heap of ``(-seq, node)``)."""
    if len(roots) == 1 and roots[0]._outs is None:     # (one root of one output: most passes)
        node = roots[0]
        if isinstance(node, AccumulateGrad):
            return {node: root_grads[0]}, [node], []
        return {node: root_grads[0]}, [], [(-node._seq, node)]
    buffers, leaves, ready = {}, [], []
    for node, g, k in zip(roots, root_grads, root_outputs or [0] * len(roots)):
        add_gradient(buffers, node, g, k)
    for node in dict.fromkeys(roots):
        if deps.get(node, 0) == 0:
            if isinstance(node, AccumulateGrad):
                leaves.append(node)
            else:
                heapq.heappush(ready, (-node._seq, node))
    return buffers, leaves, ready


def _run_plain(roots, buffers, deps, leaves, ready, retain_graph):
    """Steps 2-5 for a pass that nothing watches (no trace recorder, no ``inputs=`` or
    ``autograd.grad`` targets, no ``create_graph``, not the widget's pass): most passes.

    A node with hooks, several outputs or a ``.grad`` to retain goes through :mod:`.watched`'s
    ``receive`` and ``run_hooked``, as in its loop; any other node just runs its rules, and a leaf
    without hooks just adds into ``.grad``.  As in PyTorch, what a node saved is freed as soon as
    it has run (unless ``retain_graph``)."""
    heappop, heappush = heapq.heappop, heapq.heappush
    if leaves:
        _plain_leaves(leaves, buffers, roots)
    while ready:
        node = heappop(ready)[1]
        g = buffers.pop(node, None)
        if g is None:         # (no gradient reached it: none goes on from it)
            grads = [None] * len(node._edges)
        else:
            out = node._out()
            if node._hooks is None and node._outs is None and (out is None or not out._retains_grad):
                grads = apply_node(node, g)
            else:
                wrap = hook_wrapper(roots)
                grads = run_hooked(node, receive(node, g, False, None, wrap), apply_node, wrap)[1]
            if not retain_graph:
                node._release()
        for (fn, k), gi in zip(node._edges, grads):    # (send_on, written out for the plain pass)
            if fn is None:
                continue
            if gi is not None:
                if fn._outs is None:
                    buffers[fn] = buffers[fn] + gi if fn in buffers else gi
                else:
                    add_gradient(buffers, fn, gi, k)
            waiting = deps[fn] = deps[fn] - 1
            if not waiting:
                if type(fn) is AccumulateGrad:
                    leaves.append(fn)
                else:
                    heappush(ready, (-fn._seq, fn))
        if leaves:       # the leaves this node made ready, at once (PyTorch's order)
            _plain_leaves(leaves, buffers, roots)


def _plain_leaves(leaves, buffers, roots):
    """Step 5 at the leaves made ready (then forgets them): ``.grad += g``, through the leaf's hooks if it has any."""
    for leaf in leaves:
        g = buffers.pop(leaf, None)
        if g is None:
            continue
        var = leaf._variable
        if leaf._hooks is None and not var._hooks and "_post_accumulate_hooks" not in var.__dict__:
            _accumulate(var, g, None)
        else:
            wrap = hook_wrapper(roots)
            accumulate_leaf(leaf, received(leaf, g, wrap), None, _accumulate, wrap)
    leaves.clear()


def walk(fns, also=None):
    """Every node reachable from ``fns`` through ``next_functions``, each once, depth first from the
    last root (with a stack of our own: a graph thousands of nodes deep is fine).  The one walk of a
    graph: the engine, the trace and PyTorch's adapter (its nodes have ``next_functions`` too) use it.
    ``also(node)``: more nodes to walk on to from ``node`` (the trace goes across ``detach()`` so)."""
    order, seen, stack = [], set(), [fn for fn in fns if fn is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(fn for fn, _ in node.next_functions if fn is not None)
        if also is not None:
            stack.extend(also(node))
    return order


def _graph_nodes(roots):
    """Every node reachable from ``roots``, with how many edges lead into it (the walk of
    :func:`walk`, counting the edges on the way; each node is walked on from once)."""
    if len(roots) == 1 and roots[0] is not None:
        deps = {roots[0]: 0}
    else:
        deps = dict.fromkeys([fn for fn in roots if fn is not None], 0)
    stack = list(deps)
    while stack:
        node = stack.pop()
        if type(node) is Pending:    # (most nodes: recorded, not read since)
            fill(node)
        for fn, _ in node._edges:
            if fn is None:
                continue
            if fn in deps:
                deps[fn] += 1
            else:
                deps[fn] = 1
                if type(fn) is not AccumulateGrad:    # (a leaf's has no edges to walk on to)
                    stack.append(fn)
    return deps


def _reaching(nodes, targets):
    """``(live, deps)``: the nodes from which some target can be reached (up the edges from the
    targets), and how many edges lead into each from those nodes."""
    parents = {}
    for node in nodes:
        for fn, _ in node._edges:
            if fn is not None:
                parents.setdefault(fn, []).append(node)
    reach, todo = set(targets), list(targets)
    while todo:
        for node in parents.get(todo.pop(), ()):
            if node not in reach:
                reach.add(node)
                todo.append(node)
    deps = dict.fromkeys(reach, 0)
    for node in reach:
        for fn, _ in node._edges:
            if fn in reach:
                deps[fn] += 1
    return reach, deps


# --- 4. apply_node: one node's vector-Jacobian products, one gradient per input ------------------

def check_saved(node):
    """What the node saved is still there and unchanged: PyTorch's errors otherwise."""
    saved = node._saved
    if node._freed:
        raise RuntimeError(SECOND_BACKWARD)
    for entry in saved:
        if entry is not None and entry[1][0] != entry[2]:
            raise _modified_error(node, entry, entry is saved[-1])
    return saved if node._packed is None or _Observing.on else _hooks.unpacked(node, saved)


def apply_node(node, g):
    """Run one node's vector-Jacobian products: the gradient for each of its inputs."""
    saved, metas = node._saved, node._metas
    if node._freed or node._packed is not None or any(saved):
        saved, args = check_saved(node), []
        for s, m in zip(saved, metas):     # (a loop, not a comprehension: no call in CPython 3.11)
            args.append(s[0] if s is not None else Meta(*m))
    else:    # (nothing saved, nothing to check: each input stands in by its shape, dtype and layout)
        args = [*itertools.starmap(Meta, metas)]
    out = saved[-1][0] if saved[-1] is not None else None if node._outs else Meta(*node._out_meta)
    op, params, grads = node.op, node._params, []
    rules, variadic = op.vjps, op.variadic
    for i, (fn, _) in enumerate(node._edges):
        if fn is None:
            grads.append(None)
            continue
        rule = rules[i] if i < len(rules) else rules[-1]      # (op.vjp(i))
        gi = rule(g, out, *args, i=i, **params) if variadic else rule(g, out, *args, **params) if params \
            else rule(g, out, *args)     # (no keywords: the quicker call)
        if gi is None:           # (a custom Function's backward may give an input no gradient)
            grads.append(None)
            continue
        shape, dtype, _ = metas[i]
        if type(gi) is not np.ndarray:
            gi = np.asarray(gi)
        if gi.shape != shape:
            gi = unbroadcast(gi, shape)
        grads.append(gi if gi.dtype is dtype or gi.dtype == dtype else gi.astype(dtype))
    return grads


def grad_order(op, n):
    """The order in which PyTorch's generated backward computes an op's input gradients: by the
    inputs' names, alphabetically (mul: ``other`` before ``self``).  Under create_graph=True it
    decides which recorded node is made first, and so the order later passes add gradients in.
    The names are the ones the entry's ``saved`` gives (inputs it does not name come last)."""
    named = [k for _, k in sorted((name, k) for name, k in (op.saved or {}).items() if isinstance(k, int))]
    return [k for k in named if k < n] + [i for i in range(n) if i not in named]


# --- 5. accumulate: a leaf's gradient added into .grad -------------------------------------------

def _accumulate(var, g, rec):
    """leaf.grad += g -- in place when .grad exists, so references to it see the sum."""
    before = None if var._grad is None or rec is None else var._grad._data.copy()
    if _Observing.on:                  # the widget's pass: .grad stays as it is; the recorder sees the sum
        if rec is not None:
            after = np.array(g, dtype=var._data.dtype, copy=True) if before is None else before + g
            rec._leaf(var, g, before, after)
        return
    if var._grad is None:
        var._grad = var._wrap(new_grad(var._data, g))
    else:
        var._grad._data += g
        var._grad._vbox[0] += 1
    if rec is not None:
        rec._leaf(var, g, before, var._grad._data.copy())


def new_grad(data, g=None):
    """A new ``.grad`` for a leaf holding ``data``: ``g`` copied (uninitialised without it), laid
    out by PyTorch's layout contract for gradients (AccumulateGrad): a gradient whose strides are
    the leaf's (on its dims of more than one element) keeps its layout; otherwise it is copied into
    the leaf's own strides where the leaf covers its memory densely (a transposed parameter gets a
    transposed ``.grad``), else row-major.  (Under create_graph=True PyTorch always copies.)"""
    if g is not None:
        g = np.asarray(g, dtype=data.dtype)
        if g.flags.c_contiguous and data.flags.c_contiguous:   # (the usual case)
            return np.array(g, order="C", copy=True)
    strides = _layout.dense_strides(data)
    if strides is None:
        return np.empty(data.shape, data.dtype) if g is None else np.array(g, order="C", copy=True)
    if g is not None and all(n == 1 and s != 0 or s == t for n, s, t in zip(g.shape, g.strides, data.strides)):
        return np.array(g, order="K", copy=True)
    return _layout.with_strides(np.empty(data.shape, data.dtype) if g is None else g, data.strides)


# --- edges: where a tensor's gradient goes; a view written through since gets a history anew ---------

def edge(t):
    """``(node, output number)``: where ``t``'s gradient goes (split's pieces are outputs 0, 1...)."""
    link = _link(t)
    return link if type(link) is tuple else (accumulator(link), 0)


def current_grad_fn(t):
    """``t.grad_fn``: for a view written through since (it or its base, in place), PyTorch's
    AsStridedBackward0 on the base's history, made when it is first asked for."""
    view = t._view
    if view is None or view[1] == t._vbox[0] or (t._grad_fn is None and not t._base._requires_grad):
        return t._grad_fn
    if view[0] != "default":
        raise RuntimeError(view_error(t, indirect=True))
    base = t._base
    params = _strided.geometry(t._data, base._data)
    record(OPS["as_strided"], (base,), [base._data], t, params)
    t.__dict__.pop("_output_nr", None)
    view[1] = t._vbox[0]
    return t._grad_fn


def record_copy_slices(inner, base, old, params):
    """Give ``base`` PyTorch's CopySlices node for ``inner``, an in-place op on a view of it.

    Its inputs are the base's history and the op's other inputs (the op's edge to the view is
    dropped: the view's old values are part of the base's); it keeps what the op kept, the
    base's old values (``old``) standing for the view's and the written base for the op's result.
    """
    node = node_class("CopySlices")()
    node.op, node._seq, node._freed, node._hooks = OPS["copy_slices"], next(_seq), False, None
    node._packed = None
    node._params = dict(params, inner=inner.op, inner_params=inner._params)
    node._edges = (edge(base),) + inner._edges[1:]
    saved = list(inner._saved)
    if saved[0] is not None:     # the base as it was, with its history (what a second derivative reaches)
        before = base._wrap(old)
        before._grad_fn, before._requires_grad, before._acc = base._grad_fn, base._requires_grad, base._acc
        saved[0] = (old, before._vbox, 0, before)
    if saved[-1] is not None:
        saved[-1] = (base._data, base._vbox, base._vbox[0], None)
    node._saved = saved
    node._metas = ((base._data.shape, base._data.dtype, base._data.strides),) + inner._metas[1:]
    node._out_meta = node._metas[0][:2]
    node._nograd_inputs = {i: t for i, t in inner._nograd_inputs.items() if i}
    if not base._requires_grad:
        node._nograd_inputs[0] = base
    node._out, node._outs = weakref.ref(base), None
    base._grad_fn, base._requires_grad = node, True
    return node
