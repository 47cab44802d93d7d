"""unbroadcast: the one place where broadcasting meets gradients."""

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
    shape = shape if type(shape) is tuple else tuple(shape)
    if type(g) is np.ndarray:   # one sum over all those axes, added up in PyTorch's order (its sum_to)
        return kernels.sum_to(g, shape)
    # a recorded gradient (create_graph=True): PyTorch's sum_to records SumBackward0 down to a
    # scalar, else SumBackward1, then ViewBackward0 if dims go
    if not shape:
        return g.sum()
    axes = kernels.summed_axes(g.shape, shape)
    g = g.sum(axis=axes, keepdims=True) if axes else g
    return g.reshape(shape) if g.ndim != len(shape) else g

