"""``torch.autograd.function``: custom ``Function``s -- an op whose forward and backward you write yourself.

``Function.apply`` runs ``forward`` without recording, then records one node for the call whose
gradient rule calls your ``backward`` (once per backward pass, for every input).  Both styles of
PyTorch's docs work: ``forward(ctx, *args)``, or ``forward(*args)`` with
``setup_context(ctx, inputs, output)``.
"""

import functools

import numpy as np

from .engine import record
from .multi_output import record_outputs
from .node import SECOND_BACKWARD, node_class
from .grad_mode import _GradMode, is_observing, no_grad
from ..ops import Op
from ..tensor import Tensor

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """What ``forward(ctx, ...)`` leaves for ``backward(ctx, ...)``: saved tensors and flags."""

    def __init__(self):
        self.to_save, self.needs_input_grad, self._node, self._last, self._lent = (), (), None, None, None
        self.materialize_grads, self.non_differentiable, self.dirty_tensors = True, (), ()

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    @property
    def saved_tensors(self):
        if self._node is not None and self._node._freed:
            raise RuntimeError(SECOND_BACKWARD)
        return self.to_save

    def mark_dirty(self, *tensors):
        """Say that forward wrote into these inputs in place."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        """These outputs get no gradient: they do not require grad (backward still receives zeros
        for them, or None without materialized gradients)."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value):
        """``False``: backward receives None, not zeros, for an output no gradient reached."""
        self.materialize_grads = bool(value)


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

    @staticmethod
    def setup_context(ctx, inputs, output):
        """The other style: ``forward(*args)`` without ctx, then ``setup_context(ctx, inputs, output)``."""
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        inputs = [a for a in args if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            if cls.setup_context is Function.setup_context:
                out = cls.forward(ctx, *args)
            else:
                out = cls.forward(*args)
                cls.setup_context(ctx, args, out)
        outs = out if isinstance(out, tuple) else (out,)
        # an input returned as it is becomes a new tensor object, for the new graph node
        outs = tuple(Tensor._wrap(o._data) if isinstance(o, Tensor) and any(o is t for t in inputs)
                     and not any(o is d for d in ctx.dirty_tensors) else o for o in outs)
        tensors = [o for o in outs if isinstance(o, Tensor)]
        if _GradMode.enabled and any(t.requires_grad for t in inputs) and tensors:
            op = _function_op(cls, ctx, args, inputs, outs)
            arrays = [t._data for t in inputs]
            if len(outs) == 1 and not isinstance(out, tuple) and not ctx.non_differentiable:
                record(op, inputs, arrays, tensors[0], {})
            else:      # one node, one output slot per tensor returned (as split's)
                record_outputs(op, inputs, arrays, tensors, {})
            ctx._node = tensors[0]._grad_fn
            for t in tensors:
                if any(t is n for n in ctx.non_differentiable) or not t.dtype.is_floating_point:
                    t._grad_fn, t._requires_grad = None, False
        return outs if isinstance(out, tuple) else outs[0]


def _run_backward(cls, ctx, g, recorded, positions, n_args):
    """Call the user's ``backward`` once: its gradient for each tensor input (None where none)."""
    gs = g if isinstance(g, list) else [g]
    gs = [None if gk is None else gk.tensor if recorded else Tensor._wrap(gk) for gk in gs]
    grads = cls.backward(ctx, *gs)
    grads = grads if isinstance(grads, tuple) else (grads,)
    name = cls.__name__ + "Backward"
    if len(grads) < n_args or any(gi is not None for gi in grads[n_args:]):
        raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {n_args}, "
                           f"got {len(grads)})")
    for k, gi in enumerate(grads[:n_args]):
        if gi is not None and k not in positions:
            raise RuntimeError(f"function {name} returned a gradient different than None at position {k + 1}, "
                               "but the corresponding forward input was not a Variable")
    grads = [grads[k] for k in positions]
    if is_observing() and not recorded:   # the widget's pass ran it: the user's next pass takes this result
        ctx._lent = (_copy(g), grads)
    return grads


def _reused(ctx, g, recorded):
    """A result of ``backward`` that another pass already computed for this gradient, or None.

    ``backward`` is the user's code and runs at most once per ``backward()`` the user asks for:
    the widget's pass (:func:`gradviz.autograd.grad_mode.observing`) takes the result of the user's own pass
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
    """The same gradient (one array, or one per output of a Function with several)."""
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_same(x, y) for x, y in zip(a, b)))
    if a is None or b is None:
        return a is None and b is None
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
            and a.dtype == b.dtype and np.array_equal(a, b))


def _copy(g):
    return [_copy(x) for x in g] if isinstance(g, (list, tuple)) else None if g is None else np.array(g, copy=True)


def _function_op(cls, ctx, args, inputs, outs):
    """An op-table entry for one call of a custom Function: its rule calls ``cls.backward`` once."""
    positions = [k for k, a in enumerate(args) if isinstance(a, Tensor)]

    def rule(g, y, *arrays, i):
        first = next((gk for gk in g if gk is not None), None) if isinstance(g, list) else g
        recorded = not isinstance(first, np.ndarray)   # create_graph=True: backward() records, on tensors
        if ctx._last is None or ctx._last[0] is not g:  # once per backward pass, for every input
            ctx._last = _reused(ctx, g, recorded) or (g, _run_backward(cls, ctx, g, recorded, positions, len(args)))
        gi = ctx._last[1][i]
        if gi is None:          # no gradient for this input, as PyTorch gives none
            return None
        if recorded:
            return gi if isinstance(gi, Tensor) else Tensor._wrap(np.asarray(gi))
        return gi._data if isinstance(gi, Tensor) else np.asarray(gi)

    def forward(*arrays):  # recomputes the value (the graph drawing may need it)
        it = iter(arrays)
        new_args = [Tensor._wrap(next(it)) if isinstance(a, Tensor) else a for a in args]
        with no_grad():
            result = (cls.forward(FunctionCtx(), *new_args) if cls.setup_context is Function.setup_context
                      else cls.forward(*new_args))
        return [r._data for r in result if isinstance(r, Tensor)] if isinstance(result, tuple) else result._data

    saved = "".join(str(k) for k, t in enumerate(inputs) if any(t is s for s in ctx.to_save))
    saved += "o" if any(o is s for o in outs[:1] for s in ctx.to_save) else ""
    name = cls.__name__ + "Backward"
    node_class(name, module="gradviz.autograd.function")
    return _FunctionOp(cls.__name__, name, cls.__name__, forward, (rule,), (saved,),
                       rf"\operatorname{{{cls.__name__}}}(@0)", (rf"\partial\,\operatorname{{{cls.__name__}}}",),
                       doc=cls.__doc__ or "", variadic=True, materialize_grads=ctx.materialize_grads)


class _FunctionOp(Op):
    """The entry of one custom Function call, which may ask for None, not zeros, where no gradient came."""

    materialize_grads: bool = True


def once_differentiable(fn):
    """A ``backward`` that is run without recording a graph (its result is not differentiated again)."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper
