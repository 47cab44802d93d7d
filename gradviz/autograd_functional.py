"""``torch.autograd.functional``: the Jacobian of a function, one reverse pass per output element.

>>> import gradviz as torch
>>> torch.autograd.functional.jacobian(lambda x: x ** 2, torch.tensor([1., 2., 3.]))
tensor([[2., 0., 0.],
        [0., 4., 0.],
        [0., 0., 6.]])

Row ``j`` of the Jacobian is the gradient of output element ``j``: ``backward`` seeded with the
``j``-th basis vector (what PyTorch runs, ``out.reshape(-1)[j]`` differentiated, gives the same
numbers). ``hessian`` would need gradients of gradients (``create_graph=True``), which gradviz's
engine does not build: it says so.
"""

import numpy as np

from . import autograd
from .autograd import enable_grad
from .tensor import Tensor

__all__ = ["jacobian", "hessian"]


def _as_tuple(inp, arg_name, fn_name):
    """(whether it was a tuple, the tensors as a tuple), with PyTorch's message for a non-tensor."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where} has type {type(el)}.")
    return is_tuple, items


def _check_outputs(outputs, strict):
    if strict:
        for i, out in enumerate(outputs):
            if not out.requires_grad:
                raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The "
                                   "outputs must be computed in a differentiable manner from the input when running "
                                   "in strict mode.")


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """∂ func(inputs) / ∂ inputs, of shape ``output.shape + input.shape`` (tuples of them for tuples)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode" or create_graph:
        raise NotImplementedError("gradviz computes Jacobians in reverse mode only, without a graph of the "
                                  "result (create_graph=True, forward mode)")
    if strict and vectorize:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = tuple(inp.detach().requires_grad_(True) for inp in inputs)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_outputs(outputs, strict)
        result = tuple(_jacobian_of(i, out, inputs, strict) for i, out in enumerate(outputs))
    if not is_inputs_tuple:
        result = tuple(row[0] for row in result)
    return result if is_outputs_tuple else result[0]


def _jacobian_of(i, out, inputs, strict):
    """One output's Jacobian with respect to each input: one reverse pass per output element."""
    rows = [[] for _ in inputs]
    for j in range(out.numel()):
        if out.requires_grad:
            seed = np.zeros(out.numel(), out._data.dtype)
            seed[j] = 1
            grads = autograd.grad(out, inputs, Tensor._wrap(seed.reshape(out.shape)), retain_graph=True,
                                  allow_unused=True)
        else:
            grads = (None,) * len(inputs)
        for k, (g, inp) in enumerate(zip(grads, inputs)):
            if g is None and strict:
                raise RuntimeError(f"Output {i} of the user-provided function is independent of input {k}. This "
                                   "is not allowed in strict mode.")
            rows[k].append(np.zeros_like(inp._data) if g is None else g._data)
    return tuple(Tensor._wrap(np.stack(r).reshape(out.shape + inp.shape) if r else
                              np.zeros(out.shape + inp.shape, inp._data.dtype))
                 for r, inp in zip(rows, inputs))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """Not in gradviz: second derivatives need a graph of the backward pass (``create_graph=True``)."""
    raise NotImplementedError("gradviz does not build graphs of the backward pass (create_graph=True, "
                              "higher-order gradients), so it has no hessian")
