"""A backward pass that something watches: the engine's loop with every hook, target and recorder.

:func:`gradviz.autograd.engine.run_backward` runs most passes as the lecture's loop (the engine's
``_run_plain``).  A pass that a trace recorder watches (:func:`gradviz.trace.record`), that has
targets (``backward(inputs=...)``, ``autograd.grad``), that records its own steps
(``create_graph=True``) or that the widget runs (:func:`gradviz.autograd.grad_mode.observing`: no
user hook runs) goes through :func:`run_watched` instead: the same order, with each of those served
at its step.  What the lecture's loop meets only now and then -- a node with hooks, with several
outputs, whose tensor retains its ``.grad``, a leaf with hooks -- it hands to the pieces here too
(:func:`receive`, :func:`run_hooked`, :func:`accumulate_leaf`, :func:`add_gradient`).
"""

import collections
import heapq

import numpy as np

from .. import _hooks
from .._types import TensorBase
from .grad_mode import _Observing
from .node import AccumulateGrad
from .received import hook_wrapper, received

__all__ = ["run_watched", "receive", "run_hooked", "send_on", "accumulate_leaf", "add_gradient", "arrays_of"]


def run_watched(roots, root_grads, buffers, deps, leaves, ready, retain_graph, targets, live, accumulate,
                create_graph, steps, rec):
    """The engine's loop (steps 2-5) with everything that may watch it.

    ``live`` (the nodes that lead to a ``targets`` node, or None) limits the run to them; what
    reaches a target is returned (``autograd.grad``'s result), and added into ``.grad`` only with
    ``accumulate``.  ``steps`` runs a node and fills a ``.grad`` (``create_graph``'s recorded
    steps, or the engine's own); ``rec`` (a trace recording, or None) is told of each node and leaf.
    """
    run_node, accumulate_into = steps
    captured, wrap, leaves = {}, hook_wrapper(roots), collections.deque(leaves)
    while leaves or ready:
        node = leaves.popleft() if leaves else heapq.heappop(ready)[1]
        g = buffers.pop(node, None)
        if g is not None:
            g = receive(node, g, create_graph, root_grads[0], wrap)
        if live is not None and node in targets and g is not None:
            captured[node] = captured[node] + g if node in captured else g
        if isinstance(node, AccumulateGrad):
            if g is not None and (live is None or (accumulate and node in targets)):
                accumulate_leaf(node, g, rec, accumulate_into, wrap)
            continue
        if live is not None and not any(fn in live for fn, _ in node._edges):
            continue
        if g is None:
            grads = [None] * len(node._edges)
        else:
            g, grads = run_hooked(node, g, run_node, wrap)
            if rec is not None:   # the trace keeps values (arrays), whether or not the pass records a graph
                gv, grads_v = (arrays_of(g), [arrays_of(gi) for gi in grads]) if create_graph else (g, grads)
                rec._node(node, gv if node._outs is None else np.concatenate([gk.ravel() for gk in gv]), grads_v)
            if not retain_graph:
                node._release()
        send_on(node, grads, buffers, deps, leaves, ready, live)
    return captured


def send_on(node, grads, buffers, deps, leaves, ready, live=None):
    """Step 4: each gradient ``node`` computed added to what has come for the node it goes to, and
    the nodes now waiting for nothing more made ready (a leaf into ``leaves``, any other onto the
    ``ready`` heap); ``live``: only the nodes in it (a pass limited to its targets)."""
    for (fn, k), gi in zip(node._edges, grads):
        if fn is None or (live is not None and fn not in live):
            continue
        if gi is not None:
            add_gradient(buffers, fn, gi, k)
        waiting = deps[fn] = deps[fn] - 1
        if not waiting:
            if isinstance(fn, AccumulateGrad):
                leaves.append(fn)
            else:
                heapq.heappush(ready, (-fn._seq, fn))


def receive(node, g, create_graph, like, wrap):
    """What ``node`` receives: zeros for the outputs no gradient reached, then the user's tensor
    hooks and ``retain_grad()``'s copy (none in the widget's pass)."""
    if node._outs is not None:
        g = _materialized(node, g, create_graph, like)
    return g if _Observing.on else received(node, g, wrap)


def run_hooked(node, g, run_node, wrap):
    """Step 3 between the node's pre-hooks and hooks (none in the widget's pass): ``(g, grads)``,
    with ``g`` as the pre-hooks left it."""
    hooks = None if _Observing.on else node._hooks
    if hooks is not None and hooks.pre:
        g = _hooks.call_pre_hooks(hooks.pre, g if node._outs else [g], wrap)
        g = g if node._outs else g[0]
    grads = run_node(node, g)
    if hooks is not None and hooks.post:
        grads = _hooks.call_post_hooks(hooks.post, grads, g if node._outs else [g], wrap)
    return g, grads


def accumulate_leaf(node, g, rec, accumulate_into, wrap):
    """A leaf's AccumulateGrad: its pre-hooks, ``.grad += g``, its post-accumulate-grad hooks, its hooks."""
    hooks = None if _Observing.on else node._hooks
    if hooks is not None and hooks.pre:
        g = _hooks.call_pre_hooks(hooks.pre, [g], wrap)[0]
    var = node._variable
    accumulate_into(var, g, rec)
    if _Observing.on:
        return
    after = var.__dict__.get("_post_accumulate_hooks")
    for hook in list(after.values()) if after else ():
        hook(var)
    if hooks is not None and hooks.post:
        _hooks.call_post_hooks(hooks.post, [], [g], wrap)


def add_gradient(buffers, node, g, k):
    """Add ``g``, a gradient for output ``k`` of ``node``, to what has come for it so far."""
    if node._outs is None:
        buffers[node] = buffers[node] + g if node in buffers else g
        return
    slots = buffers.setdefault(node, [None] * len(node._outs))   # one gradient per output
    slots[k] = g if slots[k] is None else slots[k] + g


def arrays_of(g):
    """The arrays of a gradient (the trace records values, whether or not the pass records a graph)."""
    if isinstance(g, (list, tuple)):
        return [arrays_of(gk) for gk in g]
    return g._data if isinstance(g, TensorBase) else g


def _zeros(meta, create_graph, like):
    zeros = np.zeros(*meta)
    return like._wrap(zeros) if create_graph else zeros


def _materialized(node, g, create_graph, like):
    """Zeros for the outputs of a node no gradient reached (None for a custom Function that asked
    ``ctx.set_materialize_grads(False)``)."""
    if not getattr(node.op, "materialize_grads", True):
        return g
    return [_zeros(meta, create_graph, like) if gk is None else gk for (_, meta), gk in zip(node._outs, g)]
