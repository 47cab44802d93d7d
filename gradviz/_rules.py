"""The numpy helpers the op table's forwards and gradient rules share: putting back reduced axes,
scattering a gradient to where the values came from, ties, sorting, and computing in double.

Kept apart from :mod:`gradviz.ops` so that the table reads as one entry per op.
"""

import math

import numpy as np

from . import _errstate
from ._keywords import parameter_names

__all__ = ["_nonempty", "_scalar_as_vector", "_own_doc", "_expand_reduced", "_count", "_spread_evenly", "_evenly", "_by_count", "_to_index", "_median_index", "_median_dim", "_diag_scatter", "_scatter_along", "_sorted", "_order", "_scatter", "_zero_at", "_copy_slices", "_quiet", "_winner", "_unrepeat", "_squeezed"]


def _expand_reduced(g, shape, dim, keepdim):
    """Put back the axes a reduction removed, so ``g`` broadcasts against the input."""
    if dim is None:
        return np.broadcast_to(g, shape)
    if not keepdim:
        g = np.expand_dims(g, dim)
    return np.broadcast_to(g, shape)


def _count(shape, dim):
    """How many elements a reduction over ``dim`` (None: all) of ``shape`` takes each result from."""
    return math.prod(shape) if dim is None else math.prod([shape[d] for d in dim])


def _spread_evenly(g, shape, dim, keepdim):
    """mean's gradient, PyTorch's ``grad.expand(sizes) / numel``: each element gets g / (elements averaged).
    An array is divided straight into a new array of the input's shape (the same quotients, without
    the expanded view first); a recorded value (create_graph=True) records expand, then div, as PyTorch."""
    count = _count(shape, dim)
    if type(g) is np.ndarray:
        return np.divide(g if dim is None or keepdim else np.expand_dims(g, dim), count, out=np.empty(shape, g.dtype))
    return _expand_reduced(g, shape, dim, keepdim) / count


def _evenly(g, x, y, dim=None, keepdim=False):
    """max/min: the gradient goes to the extreme elements, split evenly among ties (a nan result:
    among the nans, as PyTorch's evenly_distribute_backward does)."""
    yy = y if dim is None or keepdim else np.expand_dims(y, dim)
    mask = (x == yy) | (np.isnan(x) & np.isnan(yy))
    gg = g if dim is None or keepdim else np.expand_dims(g, dim)
    return np.where(mask, gg / mask.sum(axis=dim, keepdims=True), 0)


def _by_count(g, x, y, dim, keepdim):
    """amax/amin: PyTorch's scale_grad_by_count, (g / ties) · [x = max] -- a product, so a nan
    gradient spreads to every element, and a nan maximum (which equals nothing) gives nan too."""
    yy = y if keepdim else np.expand_dims(y, dim)
    gg = g if keepdim else np.expand_dims(g, dim)
    mask = x == yy
    return (gg / mask.sum(axis=dim, keepdims=True)) * mask


def _to_index(g, shape, idx, dim, keepdim):
    """A pick along ``dim``: the gradient goes where ``idx`` (dims kept) points, 0 elsewhere."""
    out = np.zeros(shape, dtype=g.dtype)
    np.put_along_axis(out, idx, g if keepdim else np.expand_dims(g, dim), axis=dim)
    return out


def _median_index(a, dim):
    """Where the lower median sits along ``dim``, dims kept (a stable sort: the middle of equals);
    where the values hold a nan, the first nan (PyTorch's median is then nan)."""
    index = np.take(np.argsort(a, axis=dim, kind="stable"), [(a.shape[dim] - 1) // 2], axis=dim)
    nan = np.isnan(a)
    return np.where(nan.any(axis=dim, keepdims=True), np.argmax(nan, axis=dim, keepdims=True), index)


def _median_dim(a, dim, keepdim=False):
    """the lower median along dim"""
    m = np.take_along_axis(a, _median_index(a, dim), dim)
    return m if keepdim else np.squeeze(m, dim)


def _diag_scatter(g, shape, offset):
    out = np.zeros(shape, g.dtype)
    rows = np.arange(len(g)) + max(-offset, 0)
    out[rows, rows + offset] = g
    return out


def _scatter_along(g, shape, dim, index):
    """Add each element of ``g`` into the place along ``dim`` that ``index`` says it came from."""
    out = np.zeros(shape, g.dtype)
    idx = np.indices(index.shape, sparse=True)
    key = tuple(index if d == dim % len(shape) else i for d, i in enumerate(idx))
    np.add.at(out, key, g)
    return out


def _order(a, dim, descending):
    """The indices that sort ``a`` along ``dim``, stably (equal values keep their order): ascending
    with NaN last, or descending with NaN first (to PyTorch, NaN is the largest value)."""
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    floating = a.dtype.kind in "fc"
    idx = np.argsort(-(a if floating else a.astype(np.int64)), axis=dim, kind="stable")  # (bools have no minus)
    if floating:               # NaN came last: move them first, in their order
        nan = np.isnan(np.take_along_axis(a, idx, dim))
        if nan.any():
            idx = np.take_along_axis(idx, np.argsort(~nan, axis=dim, kind="stable"), dim)
    return idx


def _sorted(a, dim, descending):
    """Values and indices, sorted along ``dim`` (stable, so equal values keep their order)."""
    idx = _order(a, dim, descending)
    return np.take_along_axis(a, idx, dim), idx


def _scatter(g, shape, key):
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, key, g)
    return out


def _zero_at(g, key):
    g = np.array(g, copy=True)
    g[key] = 0
    return g


def _copy_slices(a, b, key):
    out = np.array(a, copy=True)
    out[key] = b
    return out


def _own_doc(f):
    """A forward's docstring when gradviz wrote it; numpy's own (np.absolute's page) is not ours to show."""
    return (f.__doc__ or "") if getattr(f, "__module__", "").startswith("gradviz") else ""


def _quiet(f):
    """``f`` without numpy's warnings: PyTorch makes nan and inf silently (log(-1), 1/0, exp(1000))."""
    def quietly(*args, **kwargs):
        token = _errstate.silence()     # (np.errstate's work, done once: it would cost as much as a small op)
        try:
            return f(*args, **kwargs)
        finally:
            _errstate.restore(token)
    quietly.__name__, quietly.__doc__ = getattr(f, "__name__", "f"), _own_doc(f)
    return quietly


def _winner(a, b, g, better):
    """The gradient goes to the larger (or smaller) input, half to each where they tie; as in
    PyTorch, an input loses it only where the other one wins (so both keep it beside a nan)."""
    return np.where(better(b, a), 0, np.where(a == b, g / 2, g))


def _unrepeat(g, shape, sizes):
    """Undo ``repeat``: every copy of an element contributed, so its gradient sums over the copies."""
    padded = (1,) * (len(sizes) - len(shape)) + tuple(shape)
    split = g.reshape([n for r, s in zip(sizes, padded) for n in (r, s)])
    return split.sum(axis=tuple(range(0, 2 * len(sizes), 2))).reshape(shape)


_DIM_PARAMS = ("dim", "dims", "d0", "d1")


def _scalar_as_vector(f):
    """``f`` (a forward or a rule that works along dims) also for a 0-d input.

    PyTorch lets a 0-d tensor be reduced, sorted, flipped or transposed along dim 0 (or -1) as if
    it held one element along it; numpy has no axis 0 there.  So the 0-d arrays are seen as
    one-element vectors, the dims as 0 and kept, and the result is 0-d again.
    """
    keeps = "keepdim" in parameter_names(f)     # (not inspect.signature: this runs for 36 entries at import)

    def along(*args, **params):
        if np.ndim(args[-1]) != 0:        # the op's input (last for a rule: g, y, input)
            return f(*args, **params)
        args = [np.reshape(a, 1) if isinstance(a, (np.ndarray, np.generic)) and np.ndim(a) == 0
                else type(a)((1,), a.dtype) if getattr(a, "shape", None) == () and not isinstance(a, np.ndarray)
                else a for a in args]      # (a value that was not saved, a Meta, keeps only its shape)
        for k in _DIM_PARAMS:
            if params.get(k) is not None:
                params[k] = (0,) * len(params[k]) if isinstance(params[k], tuple) else 0
        if isinstance(params.get("index"), np.ndarray) and params["index"].ndim == 0:
            params["index"] = params["index"].reshape(1)
        if keeps:
            params["keepdim"] = True
        return np.reshape(f(*args, **params), ())
    along.__name__, along.__doc__ = getattr(f, "__name__", "f"), _own_doc(f)
    return along


def _nonempty(f):
    """``f`` that also takes an empty array (giving an empty copy), which numpy's kernels may refuse."""
    def guarded(a, *args, **params):
        return np.array(a, copy=True) if a.size == 0 else f(a, *args, **params)
    guarded.__name__, guarded.__doc__ = getattr(f, "__name__", "f"), _own_doc(f)
    return guarded



def _squeezed(a, dim=None):
    """a without its dims of size 1: all of them, or those of ``dim`` (one or a tuple) that have size 1"""
    if dim is None:
        return np.squeeze(a)
    dims = (dim,) if isinstance(dim, int) else dim
    return np.squeeze(a, tuple([d for d in dims if a.shape[d] == 1]) if a.ndim else ())
