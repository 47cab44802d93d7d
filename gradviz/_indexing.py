"""Indexing: ``x[0]``, ``x[:, 1:]``, ``x[None]``, ``x[[0, 2]]``, ``x[x > 0]``, and ``x[i] = v``,
recorded node by node as PyTorch records them, and refused in PyTorch's words.
"""

import builtins

import numpy as np

from .autograd.engine import apply
from .autograd.views import requires_grad
from .autograd.grad_mode import _GradMode
from ._inplace import _check_leaf, _check_overlap, _inplace, copy, fill
from ._operands import _literal
from ._types import TensorBase, remembered, wrapped
from .ops import OPS

__all__ = ["getitem", "setitem"]


def getitem(self, key, write=False):
    """``x[key]``: basic indexing as one view node per dimension, advanced indexing as one IndexBackward0.

    ``write=True``: the view ``x[key] = v`` writes through, where (as in PyTorch) whole slices
    make no node, even a lone ``x[:]``, and nothing at all is just ``x``.
    """
    if self.ndim == 0 and any(isinstance(k, (builtins.int, np.integer)) and not isinstance(k, builtins.bool)
                              for k in (key if isinstance(key, tuple) else (key,))):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if isinstance(key, slice) and not write:  # a lone slice is always recorded, even x[:]
        if self.ndim == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        if key.step is not None and key.step <= 0:
            raise ValueError("step must be greater than zero")
        return apply(OPS["slice"], (self,), dim=0, s=_kept_slice(key, self.shape[0]))
    key = key if isinstance(key, tuple) else (key,)
    if any(_is_advanced(k) for k in key):
        np_key = tuple(k._data if isinstance(k, TensorBase) else k for k in key)
        _check_indices(np_key, self.shape)
        try:
            return apply(OPS["index"], (self,), key=np_key if len(np_key) > 1 else np_key[0])
        except IndexError as e:
            raise IndexError(str(e)) from None
    # basic indexing, one dimension at a time, as PyTorch records it
    _check_indices(key, self.shape)
    out, dim = self, 0
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    for k in key:
        if k is Ellipsis:
            dim += out.ndim - dim - (consumed - _consumed_before(key, k))
        elif k is None:
            out = apply(OPS["unsqueeze"], (out,), dim=dim)
            dim += 1
        elif isinstance(k, slice):
            if dim >= out.ndim:
                raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
            n = out.shape[dim]
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            if not _whole(k, n):
                out = apply(OPS["slice"], (out,), dim=dim, s=_kept_slice(k, n))
            dim += 1
        else:
            if dim >= out.ndim:
                raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
            i, n = int(k), out.shape[dim]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
            out = apply(OPS["select"], (out,), dim=dim, index=wrapped(i, n))
    if out is self and not write:  # only full slices and ...: still a new view, as in PyTorch
        out = apply(OPS["alias"], (self,))
    return out


def setitem(self, key, value):
    """``x[key] = value`` as PyTorch does it: the view ``x[key]`` (no view for ``x[...]`` or whole
    slices), then ``copy_`` of the value into it, or ``fill_`` of a number -- so a write through a
    view is recorded as the base's CopySlices.  Index tensors and lists write with one IndexPutBackward0."""
    if isinstance(key, (builtins.bool, np.bool_)):          # x[True] = v is x[None] = v; x[False] = v does nothing
        if not key:
            return
        key = None
    if not isinstance(value, TensorBase):
        value = _literal(value, self.dtype, self)
    if any(_is_advanced(k) for k in (key if isinstance(key, tuple) else (key,))):
        _index_put(self, _np_key(key), value)
        return
    _copy_to(getitem(self, key, write=True), value)


def _copy_to(dst, value):
    """PyTorch's copy_to: the same shape is copied, a 0-d value fills, anything else loses its
    leading 1s (a view) and is expanded to the written shape first."""
    if dst.shape == value.shape:
        copy(dst, value)
    elif value.ndim == 0:
        fill(dst, value)
    else:
        shape = list(value.shape)
        while shape and shape[0] == 1:
            shape.pop(0)
        value = value.view(tuple(shape))
        copy(dst, value if value.shape == dst.shape else value.expand(*dst.shape))


def _index_put(self, key, value):
    """``x[idx] = v`` with index tensors or lists: one IndexPutBackward0 when a gradient flows."""
    _check_leaf(self, _GradMode.enabled and (requires_grad(self) or requires_grad(value)))
    if _GradMode.enabled and (requires_grad(value) or requires_grad(self)):
        _inplace(self, lambda s, v: apply(OPS["index_put"], (s, v), key=key), value, overlap=False)
        return
    _check_overlap(self)
    self._data[key] = value._data
    self._vbox[0] += 1


def _is_advanced(k):
    return isinstance(k, (TensorBase, list, np.ndarray)) or isinstance(k, (builtins.bool, np.bool_))


def _check_indices(key, shape):
    """Refuse what PyTorch refuses, in its words: float indices, integers out of range (counted
    among the index tensors), boolean masks of the wrong shape."""
    dim = advanced = 0
    for k in key:
        if isinstance(k, builtins.float):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             "valid indices (got float)")
        if isinstance(k, np.ndarray) and k.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if isinstance(k, (np.ndarray, list)) and np.asarray(k).dtype.kind in "iu" and dim < len(shape):
            k, n = np.asarray(k), shape[dim]
            bad = k[(k >= n) | (k < -n)]
            if bad.size:
                raise IndexError(f"index {bad.flat[0]} is out of bounds for dimension {advanced} with size {n}")
        if isinstance(k, (np.ndarray, list)):
            advanced += 1
        if isinstance(k, np.ndarray) and k.dtype == np.bool_ and k.ndim:
            for j, n in enumerate(k.shape):
                if dim + j >= len(shape) or n != shape[dim + j]:
                    raise IndexError(f"The shape of the mask {list(k.shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {list(shape)} at index {dim + j}")
            dim += k.ndim
        elif k is not None and k is not Ellipsis:
            dim += 1


def _consumed_before(key, stop):
    n = 0
    for k in key:
        if k is stop:
            return n
        if k is not None:
            n += 1
    return n


def _np_key(key):
    if isinstance(key, tuple):
        return tuple(k._data if isinstance(k, TensorBase) else k for k in key)
    return key._data if isinstance(key, TensorBase) else key


def _whole(k, n):
    """Whether PyTorch skips the slice ``k`` of a dim of size ``n`` (``:``, ``0:``, ``:n``, ``:99``):
    it looks at what was written, so ``-n:`` or ``1:`` of an empty dim is still recorded."""
    return (k.start is None or k.start == 0) and (k.stop is None or k.stop >= n) and k.step in (None, 1)


_INT64_MAX = 2 ** 63 - 1    # where a slice without an end stops, as PyTorch keeps it


def _kept_slice(k, n):
    """The slice ``k`` of a dim of size ``n`` worked out (what the op cuts), each bound remembering
    how it was written, which the node shows: ``_saved_start`` 0 where none was given, ``_saved_end``
    INT64_MAX, a negative one as 2**64 + it (``x[:, -2:]``: 18446744073709551614)."""
    start, stop, step = k.indices(n)
    return slice(remembered(start, 0 if k.start is None else k.start),
                 remembered(stop, _INT64_MAX if k.stop is None else k.stop), step)
