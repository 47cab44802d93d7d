"""Double backward (``create_graph=True``): the engine's steps, each recorded as ops.

:func:`gradviz.autograd.engine.run_backward` runs a node with :func:`apply_node_graph` and adds a
leaf's gradient with :func:`accumulate_graph` when it is handed :data:`STEPS`
(:mod:`gradviz.autograd._backward_grad` does so for ``create_graph=True``): the same rules, run on
:class:`~gradviz._recorded.Recorded` tensors, so every gradient is itself a tensor with a grad_fn,
ready to be differentiated again.
"""

import functools

from .._broadcast import unbroadcast
from .._recorded import NotRecordable, Recorded
from .._types import TensorBase
from ..ops import OPS, Meta
from .engine import apply, apply_node, check_saved, grad_order, new_grad
from .grad_mode import _Observing
from .watched import arrays_of

__all__ = ["apply_node_graph", "accumulate_graph", "STEPS"]


def apply_node_graph(node, g):
    """:func:`apply_node` for ``create_graph=True``: the same rules, run on :class:`Recorded` tensors,
    so each gradient is itself a tensor with a grad_fn (the inputs and the output as saved, with
    their own graphs: what makes a second derivative reach them)."""
    saved = check_saved(node)
    if not (saved[-1] is not None or any(s is not None and s[3]._requires_grad for s in saved[:-1])
            or any(gk is not None and gk._requires_grad for gk in (g if node._outs else [g]))):
        # nothing here depends on what requires grad (a constant seed through a shape op, say):
        # the gradients are constants, computed by the plain pass
        like = next(gk for gk in g if gk is not None) if node._outs else g
        return [None if gi is None else like._wrap(gi) for gi in apply_node(node, arrays_of(g))]
    lift = functools.partial(Recorded, apply=apply)
    args = [Meta(*m) if s is None else lift(s[3] if s[3]._data is s[0] else s[3]._wrap(s[0]))
            for s, m in zip(saved, node._metas)]
    if node._outs:
        out, g = None, [None if gk is None else lift(gk) for gk in g]
    elif saved[-1] is None:
        out, g = Meta(*node._out_meta), lift(g)
    else:   # the output as PyTorch unpacks a saved result: a new tensor whose grad_fn is this node
        out = g._wrap(saved[-1][0])
        out._grad_fn, out._requires_grad = node, True
        out, g = lift(out), lift(g)
    op, params, grads = node.op, node._params, [None] * len(node._edges)
    for i in grad_order(op, len(grads)):
        if node._edges[i][0] is None:
            continue
        try:
            rule = op.vjp(i)
            gi = rule(g, out, *args, i=i, **params) if op.variadic else rule(g, out, *args, **params)
            if gi is None:
                continue
            if isinstance(gi, TensorBase):    # a custom Function's backward returns tensors
                gi = lift(gi)
            if not isinstance(gi, Recorded):
                raise NotRecordable("the rule computed its result without the recorded gradient")
            shape, dtype, _ = node._metas[i]
            if gi.shape != shape:
                gi = unbroadcast(gi, shape)
            grads[i] = (gi if gi.dtype == dtype else gi.astype(dtype)).tensor
        except (NotRecordable, TypeError, AttributeError, ValueError, IndexError) as e:
            raise RuntimeError(f"gradviz cannot differentiate the backward of {node.name()} twice yet "
                               f"(create_graph=True): its gradient rule is numpy code gradviz cannot "
                               f"record as ops ({e})") from None
    return grads


def accumulate_graph(var, g, rec):
    """leaf.grad += g under ``create_graph=True``, as PyTorch's AccumulateGrad does it with grad mode
    on: the first gradient is copied into a new tensor (CopyBackwards), later ones are added out of
    place (AddBackward0), so ``.grad`` itself has a graph."""
    before = None if var._grad is None or rec is None else var._grad._data.copy()
    if _Observing.on:
        if rec is not None:
            rec._leaf(var, g._data, before, g._data.copy() if before is None else before + g._data)
        return
    if var._grad is None:
        var._grad = apply(OPS["copy"], (var._wrap(new_grad(var._data)), g))
    else:
        var._grad = var._grad + g
    if rec is not None:
        rec._leaf(var, g._data, before, var._grad._data.copy())


STEPS = (apply_node_graph, accumulate_graph)    # what run_backward runs a node and fills a .grad with
