"""``torch.autograd``: custom ``Function``s, the legacy ``Variable``, ``backward``, ``grad`` and ``gradcheck``.

The engine that runs backward lives in :mod:`gradviz._engine`; this module is the public face
PyTorch has, with the parts that need the ``Tensor`` class.
"""

import warnings

import numpy as np

from .._engine import (SECOND_BACKWARD, AccumulateGrad, Node, _GradMode, backward, enable_grad, grad,
                      inference_mode, is_grad_enabled, is_inference_mode_enabled, is_observing, no_grad, node_class,
                      record, set_detect_anomaly, set_grad_enabled)
from ..gradcheck import gradcheck
from ..ops import Op
from ..tensor import Tensor
from . import functional, graph  # noqa: E402,I001 -- torch.autograd.functional and .graph, modules as in PyTorch

__all__ = ["Variable", "Function", "FunctionCtx", "backward", "grad", "gradcheck", "gradgradcheck", "no_grad",
           "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_inference_mode_enabled",
           "Node", "AccumulateGrad", "set_detect_anomaly"]


# --- custom functions ---------------------------------------------------------------------------

class FunctionCtx:
    """What ``forward(ctx, ...)`` leaves for ``backward(ctx, ...)``: saved tensors and flags."""

    def __init__(self):
        self.to_save, self.needs_input_grad, self._node, self._last, self._lent = (), (), None, None, None

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    @property
    def saved_tensors(self):
        if self._node is not None and self._node._freed:
            raise RuntimeError(SECOND_BACKWARD)
        return self.to_save

    def mark_dirty(self, *tensors):
        pass

    def mark_non_differentiable(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        pass


class Function:
    """``torch.autograd.Function``: an op whose forward and backward you write yourself.

    >>> import gradviz as torch
    >>> class Cube(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         x, = ctx.saved_tensors
    ...         return grad_output * 3 * x ** 2
    >>> x = torch.tensor([1., 2.], requires_grad=True)
    >>> y = Cube.apply(x); y
    tensor([1., 8.], grad_fn=<CubeBackward>)
    >>> y.sum().backward(); x.grad
    tensor([ 3., 12.])
    """

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        inputs = [a for a in args if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args)
        if not isinstance(out, Tensor):
            raise NotImplementedError("gradviz's autograd.Function supports a forward that returns one tensor")
        if any(out is t for t in inputs):  # a new tensor object for the new graph node
            out = Tensor._wrap(out._data)
        needs = [t._requires_grad for t in inputs]
        if _GradMode.enabled and any(needs):
            record(_function_op(cls, ctx, args, inputs, out), inputs, [t._data for t in inputs], out, {})
            ctx._node = out._grad_fn
        return out


def _run_backward(cls, ctx, g, recorded, positions):
    """Call the user's ``backward`` once: its gradient for each tensor input (None where none)."""
    grads = cls.backward(ctx, g.tensor if recorded else Tensor._wrap(g))
    grads = grads if isinstance(grads, tuple) else (grads,)
    grads = [grads[k] if k < len(grads) else None for k in positions]
    if is_observing() and not recorded:   # the widget's pass ran it: the user's next pass takes this result
        ctx._lent = (np.array(g, copy=True), grads)
    return grads


def _reused(ctx, g, recorded):
    """A result of ``backward`` that another pass already computed for this gradient, or None.

    ``backward`` is the user's code and runs at most once per ``backward()`` the user asks for:
    the widget's pass (:func:`gradviz._engine.observing`) takes the result of the user's own pass
    with the same incoming gradient; a user's pass takes the one the widget's pass computed first.
    """
    if recorded:
        return None
    if is_observing():
        last = ctx._last
        return (g, last[1]) if last is not None and _same(last[0], g) else None
    lent, ctx._lent = getattr(ctx, "_lent", None), None
    return (g, lent[1]) if lent is not None and _same(lent[0], g) else None


def _same(a, b):
    return isinstance(a, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)


def _function_op(cls, ctx, args, inputs, out):
    """An op-table entry for one call of a custom Function: its rule calls ``cls.backward`` once."""
    positions = [k for k, a in enumerate(args) if isinstance(a, Tensor)]

    def rule(g, y, *arrays, i):
        recorded = not isinstance(g, np.ndarray)   # create_graph=True: backward() records, on tensors
        if ctx._last is None or ctx._last[0] is not g:  # once per backward pass, for every input
            ctx._last = _reused(ctx, g, recorded) or (g, _run_backward(cls, ctx, g, recorded, positions))
        gi = ctx._last[1][i]
        if gi is None:
            zeros = np.zeros(arrays[i].shape, arrays[i].dtype)
            return Tensor._wrap(zeros) if recorded else zeros
        if recorded:
            return gi if isinstance(gi, Tensor) else Tensor._wrap(np.asarray(gi))
        return gi._data if isinstance(gi, Tensor) else np.asarray(gi)

    def forward(*arrays):  # recomputes the value (the graph drawing may need it)
        it = iter(arrays)
        new_args = [Tensor._wrap(next(it)) if isinstance(a, Tensor) else a for a in args]
        with no_grad():
            return cls.forward(FunctionCtx(), *new_args)._data

    saved = "".join(str(k) for k, t in enumerate(inputs) if any(t is s for s in ctx.to_save))
    saved += "o" if any(out is s for s in ctx.to_save) else ""
    name = cls.__name__ + "Backward"
    node_class(name, module="gradviz.autograd.function")
    return Op(cls.__name__, name, cls.__name__, forward, (rule,), (saved,),
              rf"\operatorname{{{cls.__name__}}}(@0)", (rf"\partial\,\operatorname{{{cls.__name__}}}",),
              doc=cls.__doc__ or "", variadic=True)


# --- the legacy Variable ------------------------------------------------------------------------

class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(t, requires_grad=True)``: the pre-0.4 wrapper, now a new leaf sharing ``t``'s data."""

    __module__ = "gradviz.autograd.variable"   # where PyTorch's class lives: type() prints it

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            return Tensor._wrap(np.zeros((0,), np.float32))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            if not out.dtype.is_floating_point:
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            out._requires_grad = True
        return out


def gradgradcheck(*args, **kwargs):
    raise NotImplementedError("gradviz has no gradgradcheck yet (its second derivatives are checked against "
                              "PyTorch's and finite differences in tests/test_higher_order.py)")
