"""unbroadcast: the one place where broadcasting meets gradients."""

import functools

import numpy as np

from . import kernels

__all__ = ["unbroadcast"]


def unbroadcast(g, shape):
    """Sum ``g`` back down to ``shape``, undoing numpy/PyTorch broadcasting.

    If ``x`` of shape (3, 1) was broadcast to (2, 3, 4) in the forward pass, every copy
    of an element contributed to the output, so its gradient is the sum over the copies:
    sum away the leading axes that broadcasting added, then the axes that were stretched from 1.

    >>> unbroadcast(np.ones((2, 3, 4)), (3, 1)).tolist()
    [[8.0], [8.0], [8.0]]
    """
    if g.shape == shape:
        return g
    extra = g.ndim - len(shape)
    axes = _summed_axes(g.shape, tuple(shape))
    if not isinstance(g, np.ndarray):   # a recorded gradient (create_graph=True): PyTorch's sum_to records
        if not shape:                   # SumBackward0 down to a scalar, else SumBackward1, then
            return g.sum()              # ViewBackward0 if dims go
        g = g.sum(axis=axes, keepdims=True) if axes else g
        return g.reshape(shape) if extra else g
    # one sum over all those axes, added up in PyTorch's order (as its sum_to does)
    return kernels.sum(g, axis=axes, keepdims=True).reshape(shape)


@functools.lru_cache(maxsize=1024)
def _summed_axes(big, shape):
    """The axes of ``big`` to sum to get back to ``shape``: the leading ones broadcasting added, then
    those stretched from 1 (worked out once per pair of shapes: a training loop asks for the same ones)."""
    extra = len(big) - len(shape)
    return tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and big[extra + i] != 1)
