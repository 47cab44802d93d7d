"""What a node receives in a backward pass: the gradient through the tensor hooks of what it made.

:func:`gradviz.autograd.engine.run_backward` hands each node's incoming gradient to
:func:`received` before the node runs: the user's tensor hooks (``t.register_hook``) may change
it, and a tensor that ``retain_grad()`` keeps it as its ``.grad``.  :func:`hook_wrapper` shows a
hook a tensor of the graph's own class (the engine imports no tensor class).
"""

import contextlib

import numpy as np

from .. import _hooks
from .._types import TensorBase
from .node import AccumulateGrad, _wrap_for

__all__ = ["received", "hook_wrapper"]


def hook_wrapper(roots):
    """A function making a gradient array a tensor of the graph's own class (for a hook to see)."""
    def wrap(array):
        for node in roots:
            if isinstance(node, AccumulateGrad):
                return node.variable._wrap(array)
            with contextlib.suppress(StopIteration):
                return _wrap_for(node, array)
        raise RuntimeError("no tensor of the graph is alive to show a hook its gradient")
    return wrap


def received(node, g, wrap):
    """The gradient a node receives, through the tensor hooks of what it produced (a leaf's own
    hooks at its AccumulateGrad), and kept where the tensor retains grad (only by its current
    grad_fn: after ``t.cos_()`` the old node's gradient is not t's)."""
    if isinstance(node, AccumulateGrad):
        var = node.variable
        return _hooks.call_tensor_hooks(var._hooks, g, wrap) if var._hooks else g
    if node._outs is None:
        out = node._out()
        if node._hooks is None and (out is None or not out._retains_grad):   # (the usual case: nothing to do)
            return g
        return _output_received(node, 0, out, g, wrap)
    return [_output_received(node, k, out(), gk, wrap) for k, ((out, _), gk) in enumerate(zip(node._outs, g))]


def _output_received(node, k, out, g, wrap):
    if g is None:
        return g
    hooks = node._hooks.tensor.get(k) if node._hooks is not None else None
    if hooks:
        g = _hooks.call_tensor_hooks(hooks, g, wrap)
    if out is not None and out._retains_grad and out._grad_fn is node:
        if isinstance(g, TensorBase):
            out._grad = g if out._grad is None else out._grad + g
        elif out._grad is None:
            out._grad = out._wrap(np.array(g, order="C", copy=True))   # (a row-major clone, as PyTorch's retain_grad)
        else:
            out._grad._data += g
    return g
