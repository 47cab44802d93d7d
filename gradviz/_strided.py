"""Strided views as PyTorch lays them out: where each element of a view lies in its base.

PyTorch describes a view by sizes, strides and a storage offset.  When a view's base is written
in place, it forgets how the view was made and describes it that way (``AsStridedBackward0``),
and the write itself becomes ``CopySlices``: the base, with the view's region replaced.  Both
rules only need to know which of the base's elements the view covers, which :func:`view_index`
works out from those numbers (so a value can be recomputed from plain arrays, without memory).
"""

import numpy as np

from ._broadcast import unbroadcast
from ._op import Meta

__all__ = ["geometry", "view_index", "as_strided", "as_strided_backward", "copy_slices", "copy_slices_backward"]


def geometry(view, base):
    """``(size, stride, storage_offset)`` of the numpy array ``view`` in the storage of ``base``,
    and the base's own ``(stride, storage_offset)`` when it is not row-major from offset 0."""
    item = base.itemsize
    start = base.__array_interface__["data"][0]
    offset = (view.__array_interface__["data"][0] - start) // item
    root = base
    while isinstance(root.base, np.ndarray):
        root = root.base
    base_offset = (start - root.__array_interface__["data"][0]) // item
    offset += base_offset
    base_stride = tuple(s // item for s in base.strides)
    row_major = base_stride == _row_major(base.shape) or base.size <= 1
    return {"size": tuple(view.shape), "stride": tuple(s // item for s in view.strides),
            "storage_offset": int(offset),
            "geometry": None if row_major and base_offset == 0 else (base_stride, int(base_offset))}


def _row_major(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _positions(size, stride, offset):
    """Where each element of a strided view lies in storage: offset + Σ i_k · stride_k."""
    pos = np.full(tuple(size), offset, dtype=np.intp)
    for k, (n, s) in enumerate(zip(size, stride)):
        pos += (np.arange(n, dtype=np.intp) * s).reshape((n,) + (1,) * (len(size) - k - 1))
    return pos


def view_index(shape, size, stride, storage_offset, geometry=None):
    """For each element of the view, its index in the base's row-major order (an int array of
    the view's shape); the base has ``shape`` and, unless ``geometry`` says otherwise, lies
    row-major from storage offset 0."""
    base_stride, base_offset = geometry if geometry is not None else (_row_major(shape), 0)
    where = _positions(shape, base_stride, base_offset).ravel()
    wanted = _positions(size, stride, storage_offset)
    extent = int(max(where.max(initial=-1), wanted.max(initial=-1))) + 1
    flat = np.full(extent, -1, dtype=np.intp)
    flat[where] = np.arange(where.size, dtype=np.intp)
    index = flat[wanted] if wanted.size else wanted
    if wanted.size and (wanted.min() < 0 or (index < 0).any()):
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{storage_offset} reach outside the {int(np.prod(shape))} elements of the base")
    return index


def as_strided(a, size, stride, storage_offset=0, geometry=None):
    """the elements of ``a``'s storage at ``offset + Σ i_k stride_k`` (a view when ``a`` is row-major)"""
    if geometry is None and a.flags.c_contiguous:
        flat = a.reshape(-1)
        view_index(a.shape, size, stride, storage_offset)          # PyTorch's bounds check
        return np.lib.stride_tricks.as_strided(flat[storage_offset:] if flat.size else flat, tuple(size),
                                               tuple(s * a.itemsize for s in stride), writeable=True)
    return np.reshape(a, -1)[view_index(a.shape, size, stride, storage_offset, geometry)]


def as_strided_backward(g, shape, size, stride, storage_offset=0, geometry=None):
    """``g`` added back onto the base's elements the view reads (twice where it reads one twice)."""
    out = np.zeros(int(np.prod(shape)), dtype=g.dtype)
    np.add.at(out, view_index(shape, size, stride, storage_offset, geometry).ravel(), np.ravel(g))
    return out.reshape(shape)


def copy_slices(base, *others, inner, inner_params, size, stride, storage_offset, geometry=None):
    """the base with the view's region replaced by ``inner`` applied to it (the in-place op)"""
    out = np.array(base, copy=True, order="C")
    index = view_index(base.shape, size, stride, storage_offset, geometry)
    flat = out.reshape(-1)
    flat[index] = inner.forward(flat[index], *others, **inner_params)
    return out


def copy_slices_backward(g, y, base, *others, i, inner, inner_params, size, stride, storage_offset, geometry=None):
    """PyTorch's CopySlices: the in-place op's own rule, run on the gradient of the written region.

    The base gets ``g`` outside the region and the rule's gradient for the view's old values
    inside it; the op's other inputs get what the rule gives them.
    """
    index = view_index(g.shape, size, stride, storage_offset, geometry)
    region = np.reshape(g, -1)[index]
    old = np.reshape(base, -1)[index] if isinstance(base, np.ndarray) else Meta(tuple(size), base.dtype)
    new = np.reshape(y, -1)[index] if isinstance(y, np.ndarray) else Meta(tuple(size), y.dtype)
    gi = np.asarray(inner.vjp(i)(region, new, old, *others, **inner_params))
    if i:
        return gi
    out = np.array(g, copy=True, order="C")
    out.reshape(-1)[index] = unbroadcast(gi, tuple(size))
    return out
