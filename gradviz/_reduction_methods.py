"""Reductions with PyTorch's argument handling: which node ``sum()`` records (SumBackward0, or
SumBackward1 for any ``dim=``), the dtype integers are summed in, ``max(dim)``'s values and
indices, ``median``, and ``var``/``std`` with their corrections.
"""

import builtins

import numpy as np

from . import _dtype
from .autograd.engine import apply
from ._operands import _EVERY_DIM, _binary, _dims, _reduced_dims
from ._types import TensorBase, return_types
from ._rules import _median_index, _order
from .ops import OPS

__all__ = ["sum_", "mean", "prod", "moment", "extreme", "position", "amax", "median", "topk"]


def _accumulated(t, dtype):
    """``t`` in the dtype a sum or product is computed in: the one asked for, int64 for integers and bools."""
    t = t.to(dtype) if dtype is not None else t
    return t if t.dtype.is_floating_point or t.dtype is _dtype.int64 else t.to(_dtype.int64)


def sum_(t, dim, keepdim, dtype):
    """The sum of all elements (SumBackward0), or along ``dim`` (SumBackward1; ``dim=None`` is every dim)."""
    t = _accumulated(t, dtype)
    if dim is _EVERY_DIM:
        return apply(OPS["sum"], (t,))
    return apply(OPS["sum_dim"], (t,), dim=_reduced_dims(dim, t.ndim), keepdim=keepdim)


def mean(t, dim, keepdim, dtype):
    t = t.to(dtype) if dtype is not None else t
    if not t.dtype.is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_dtype.TYPE_NAMES[t.dtype.name]}")
    if dim is _EVERY_DIM:
        return apply(OPS["mean"], (t,))
    return apply(OPS["mean_dim"], (t,), dim=_reduced_dims(dim, t.ndim), keepdim=keepdim)


def prod(t, dim, keepdim, dtype):
    """The product of the elements (along ``dim``)."""
    t = _accumulated(t, dtype)
    if dim is None:
        return apply(OPS["prod"], (t,))
    return apply(OPS["prod_dim"], (t,), dim=_dims(dim, t.ndim)[0], keepdim=keepdim)


def moment(t, key, dim, unbiased, keepdim, correction):
    if isinstance(dim, builtins.bool):  # std(False): the old positional unbiased
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    if not t.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if dim is None:
        return apply(OPS[key], (t,), correction=correction, keepdim=keepdim)
    return apply(OPS[key], (t,), dim=_dims(dim, t.ndim), correction=correction, keepdim=keepdim)


def _nonempty(t, name, d, shown=None):
    if t.ndim and t.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d if shown is None else shown} to have non-zero size.")


def _position(t, arg, d, keepdim):
    """Where the extreme along ``d`` sits (0 for a 0-d tensor, its one element), int64."""
    if t.ndim == 0:
        return np.asarray(0, np.int64)
    return np.asarray(arg(t._data, axis=d, keepdims=keepdim), np.int64)


def extreme(t, which, dim, keepdim):
    if isinstance(dim, TensorBase):  # torch.max(a, b): the elementwise maximum
        return _binary(which + "imum", t, dim)
    if dim is None:
        if t._data.size == 0:
            raise RuntimeError(f"{which}(): Expected reduction dim to be specified for input.numel() "
                               "== 0. Specify the reduction dim with the 'dim' argument.")
        return apply(OPS["a" + which], (t,))
    d = _dims(dim, t.ndim)[0]
    _nonempty(t, which, d)
    index = _position(t, np.argmax if which == "max" else np.argmin, d, True)
    values = apply(OPS[which + "_dim"], (t,), dim=d, keepdim=keepdim, index=index)
    indices = t._wrap(index if keepdim or t.ndim == 0 else np.squeeze(index, d))
    return getattr(return_types, which)(values, indices)


def topk(self, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (``largest=False``: smallest) values along ``dim``, largest (smallest) first,
    and their indices; the gradient goes back to where each came from (TopkBackward0).  NaN counts
    as the largest value.  Ties are taken in index order, where PyTorch's order among equal values is
    its selection algorithm's (``sorted=False`` gives the same sorted order)."""
    if self.ndim == 0:
        if k not in (0, 1):
            raise RuntimeError("selected index k out of range")
        return return_types.topk(apply(OPS["topk"], (self,), dim=0, index=np.asarray(0)), self._wrap(np.asarray(0)))
    d = _dims(dim, self.ndim)[0]
    if not 0 <= k <= self.shape[d]:
        raise RuntimeError("selected index k out of range")
    index = np.take(_order(self._data, d, largest), np.arange(k), axis=d)
    return return_types.topk(apply(OPS["topk"], (self,), dim=d, index=index), self._wrap(index.astype(np.int64)))


def position(t, which, dim, keepdim):
    """``argmax``/``argmin``: where the extreme is, overall (flattened) or along ``dim``."""
    arg = np.argmax if which == "max" else np.argmin
    if dim is None:
        if t._data.size == 0:
            raise IndexError(f"arg{which}(): Expected reduction dim to be specified for input.numel() == 0.")
        a = np.asarray(arg(t._data), np.int64)
        return t._wrap(a.reshape((1,) * t.ndim) if keepdim else a)
    d = _dims(dim, t.ndim)[0]
    _nonempty(t, "arg" + which, d)
    return t._wrap(_position(t, arg, d, keepdim))


def amax(t, which, dim, keepdim):
    """``amax``/``amin``: the extreme along every dim listed (all if none), one Amax/AminBackward0."""
    if dim in (None, ()) and t._data.size == 0:
        raise RuntimeError(f"a{which}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    dims = _reduced_dims(() if dim is None else dim, t.ndim)
    for d, shown in zip(dims, (dim,) if isinstance(dim, int) else dims):
        _nonempty(t, "a" + which, d, shown)
    return apply(OPS["a" + which + "_dims"], (t,), dim=dims, keepdim=keepdim)


def median(t, dim, keepdim):
    """The lower of the two middle values (no averaging): overall, or along ``dim`` with where it is."""
    if dim is None:
        if t._data.size == 0:        # no middle value: nan, as PyTorch says
            return t._wrap(np.asarray(np.nan, t._data.dtype))
        return apply(OPS["median"], (t,))
    d = _dims(dim, t.ndim)[0]
    _nonempty(t, "median", d)
    if t.ndim == 0:
        values = apply(OPS["median_dim"], (t,), dim=d, keepdim=keepdim, index=np.asarray(0, np.int64))
        return return_types.median(values, t._wrap(np.asarray(0, np.int64)))
    idx = _median_index(t._data, d).astype(np.int64)
    values = apply(OPS["median_dim"], (t,), dim=d, keepdim=keepdim, index=idx)
    return return_types.median(values, t._wrap(idx if keepdim else np.squeeze(idx, d)))
