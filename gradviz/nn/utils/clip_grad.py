"""``torch.nn.utils.clip_grad_norm_`` and ``clip_grad_value_``: gradients scaled or clamped in place,
as PyTorch 2.13 does it step for step (so the total norm and the clipped gradients are its bits).

>>> import gradviz as torch
>>> w = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
>>> w.grad = torch.tensor([3.0, 4.0])
>>> torch.nn.utils.clip_grad_norm_([w], max_norm=1.0)
tensor(5.)
>>> w.grad
tensor([0.6000, 0.8000])
"""

import functools
import types
import warnings

import numpy as np

from ..._creation import tensor
from ..._matmul_and_joins import stack
from ...autograd.grad_mode import no_grad
from ...linalg import vector_norm
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_grad():
            return fn(*args, **kwargs)
    return wrapper


def _by_dtype(tensors):
    """The tensors grouped by dtype, groups in the order their dtype first appears (PyTorch's
    ``_group_tensors_by_device_and_dtype``: the norms are stacked group after group)."""
    groups = {}
    for t in tensors:
        groups.setdefault(t.dtype, []).append(t)
    return list(groups.values())


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` together: the norm of their norms."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)     # (foreach: CPU has PyTorch's foreach kernels, whose numbers are the loop's)
    if not tensors:
        return tensor(0.0)
    norms = [vector_norm(t, norm_type) for group in _by_dtype(tensors) for t in group]
    total_norm = vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and (total_norm.isnan() | total_norm.isinf()).item():
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                           "so it cannot be clipped. To disable this error and scale the gradients by the "
                           "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale every ``.grad`` by ``min(max_norm / (total_norm + 1e-6), 1)``, in place."""
    parameters = [parameters] if isinstance(parameters, Tensor) else parameters
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = clip_coef.clamp(max=1.0)
    with np.errstate(invalid="ignore"):       # an inf gradient times 0 is nan, silently as in PyTorch
        for group in _by_dtype(grads):
            for g in group:
                g.mul_(clip_coef_clamped)


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clip the gradients so that their norm, all together, is at most ``max_norm``; returns the
    norm they had (a tensor)."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)          # (a generator would be used up by the first pass)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The old name of :func:`clip_grad_norm_` (deprecated, with PyTorch's warning)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every ``.grad`` into ``[-clip_value, clip_value]``, in place."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    grads = [p.grad for p in parameters if p.grad is not None]
    for group in _by_dtype(grads):
        for g in group:
            g.clamp_min_(-clip_value)
            g.clamp_max_(clip_value)
