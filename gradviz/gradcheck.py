"""Finite-difference checking of gradients, like ``torch.autograd.gradcheck``."""

import warnings

import numpy as np

from . import _dtype
from ._creation import empty
from .autograd._backward_grad import grad
from .autograd.grad_mode import enable_grad, no_grad
from .tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "numerical_grad"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` when an analytical gradient disagrees with the numerical one."""


def numerical_grad(fn, arrays, i, v, eps=1e-6):
    """Central difference of ``<fn(x), v>`` w.r.t. ``arrays[i]``: (f(x+εe) − f(x−εe)) / 2ε per element."""
    x = arrays[i]
    grad = np.zeros_like(x, dtype=np.float64)
    flat = x.reshape(-1)
    for k in range(flat.size):
        old = flat[k]
        flat[k] = old + eps
        plus = np.sum(fn(arrays) * v)
        flat[k] = old - eps
        minus = np.sum(fn(arrays) * v)
        flat[k] = old
        grad.reshape(-1)[k] = (plus - minus) / (2 * eps)
    return grad


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, seed=0, **_ignored):
    """True if ``func``'s backward matches finite differences at ``inputs`` (checked in float64).

    Each output is contracted with a random vector ``v``, so one backward call checks the full
    vector-Jacobian product ``vᵀ J`` for every input that requires grad.

    >>> import gradviz as torch
    >>> x = torch.tensor([0.5, 2.0], dtype=torch.float64, requires_grad=True)
    >>> gradcheck(lambda t: (t * t).sin(), (x,))
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i in diff:
        if inputs[i].dtype is not _dtype.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. "
                          "This check will likely fail if all the inputs are not of double precision "
                          "floating point. ", UserWarning, stacklevel=2)
    xs = [t.detach().double().requires_grad_(t.requires_grad) if isinstance(t, Tensor) and
          t.dtype.is_floating_point else t for t in inputs]
    outs = func(*xs)
    outs = (outs,) if isinstance(outs, Tensor) else tuple(outs)
    rng = np.random.default_rng(seed)
    vs = [rng.standard_normal(o.shape) for o in outs]
    grads = grad([o for o in outs], [xs[i] for i in diff],
                 grad_outputs=[Tensor._wrap(v) for v in vs], allow_unused=True)
    arrays = [x._data.copy() if isinstance(x, Tensor) else x for x in xs]

    def f(arrs):
        with no_grad():
            ts = [Tensor._wrap(a) if isinstance(x, Tensor) else a for a, x in zip(arrs, xs)]
            res = func(*ts)
        res = (res,) if isinstance(res, Tensor) else tuple(res)
        return np.concatenate([(r._data * v).reshape(-1) for r, v in zip(res, vs)])

    for k, i in enumerate(diff):
        numeric = numerical_grad(f, arrays, i, 1.0, eps)
        analytic = np.zeros_like(numeric) if grads[k] is None else grads[k]._data
        if not np.allclose(analytic, numeric, rtol=rtol, atol=atol):
            if not raise_exception:
                return False
            raise GradcheckError(f"Jacobian mismatch for output 0 with respect to input {i},\n"
                                 f"numerical:{numeric}\nanalytical:{analytic}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **_ignored):
    """True if ``func``'s second derivatives match finite differences of its first: gradcheck of
    the function ``(inputs, v) -> autograd.grad(func(inputs), inputs, v, create_graph=True)``, as
    PyTorch builds it (``v`` uniform in [-1, 1) for each output unless given, drawn as PyTorch draws it).

    >>> import gradviz as torch
    >>> x = torch.tensor([0.5, 2.0], dtype=torch.float64, requires_grad=True)
    >>> gradgradcheck(lambda t: (t * t).sin(), (x,))
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    outputs = func(*inputs)
    outputs = [o for o in ((outputs,) if isinstance(outputs, Tensor) else outputs) if o.requires_grad]
    if grad_outputs is None:      # torch.testing.make_tensor(low=-1, high=1): uniform_(-1, 1), as torch draws it
        grad_outputs = tuple(empty(o.shape, dtype=o.dtype if o.dtype.is_floating_point else _dtype.float64)
                             .uniform_(-1, 1).requires_grad_() for o in outputs)
    else:
        grad_outputs = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    n = len(grad_outputs)
    diff_inputs = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad}
    diff_grads = {i for i, v in enumerate(grad_outputs) if v.requires_grad}

    def first_derivatives(*args):
        with enable_grad():      # (gradcheck's finite differences run without a graph; this needs one)
            xs = tuple(x.requires_grad_() if i in diff_inputs else x for i, x in enumerate(args[:-n]))
            outs = func(*xs)
            outs = [o for o in ((outs,) if isinstance(outs, Tensor) else outs) if o.requires_grad]
            vs = tuple(v.requires_grad_() if i in diff_grads else v for i, v in enumerate(args[-n:]))
            grads = grad(outs, [x for i, x in enumerate(xs) if i in diff_inputs], vs, create_graph=True,
                         allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
