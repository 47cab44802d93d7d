"""Functions of several tensors that PyTorch has beside the methods: ``matmul`` (dispatched to dot,
mv, mm or a batched product, as PyTorch dispatches it), ``where``, ``cat`` and ``stack``.
"""

import builtins
import math

import numpy as np

from . import _dtype
from ._arg_errors import check
from . import _strided
from ._arrays import as_array
from .autograd.engine import apply
from .autograd.multi_output import apply_outputs
from ._keywords import accepting_numpy_names
from ._operands import _broadcast_error, _dims, _literal
from ._types import TensorBase, WorkedOut
from .ops import OPS

__all__ = ["matmul", "addmm", "bmm", "where", "cat", "concat", "concatenate", "stack", "hstack", "vstack", "outer", "ger",
           "split", "chunk", "unbind", "as_strided", "strided_params"]


def matmul(a, b):
    """``a @ b`` as PyTorch dispatches it: dot, mv, mm, or a batched product."""
    if not (isinstance(a, TensorBase) and isinstance(b, TensorBase)):
        check("matmul", (a, b), method=False)           # (PyTorch's parser takes tensors only)
        like = a if isinstance(a, TensorBase) else b     # a list or number beside a tensor becomes one
        a, b = (x if isinstance(x, TensorBase) else like._wrap(np.array(as_array(x))) for x in (a, b))
    x, y = a._data, b._data
    if x.ndim == 2 and y.ndim == 2 and x.dtype == y.dtype and x.shape[1] == y.shape[0]:
        return apply(OPS["mm"], (a, b), (x, y))      # (the usual case, straight to mm, the arrays at hand)
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    if a.dtype is not b.dtype:
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{_dtype.TYPE_NAMES[a.dtype.name]} and {_dtype.TYPE_NAMES[b.dtype.name]}")
        if a.ndim > 2 or b.ndim > 2:
            raise RuntimeError(f"expected scalar type {_dtype.TYPE_NAMES[a.dtype.name]} but found "
                               f"{_dtype.TYPE_NAMES[b.dtype.name]}")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_dtype.CPP_NAMES[a.dtype.name]} != {_dtype.CPP_NAMES[b.dtype.name]}")
    if a.ndim == 1 and b.ndim == 1:
        if a.shape != b.shape:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                               f"[{b.shape[0]}] to have the same number of elements, but got "
                               f"{a.shape[0]} and {b.shape[0]} elements respectively")
        return apply(OPS["dot"], (a, b))
    if a.ndim == 2 and b.ndim == 1:
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), "
                               f"vec ({b.shape[0]})")
        return apply(OPS["mv"], (a, b))
    if a.ndim == 1 and b.ndim == 2:
        return apply(OPS["squeeze_mm"], (matmul(a.unsqueeze(0), b),), dim=0)
    if a.ndim == 2 and b.ndim == 2:
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} "
                               f"and {b.shape[0]}x{b.shape[1]})")
        return apply(OPS["mm"], (a, b))
    if _should_fold(a, b):
        return _folded(a, b)
    return _batched(a, b)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta·input + alpha·(mat1 @ mat2)`` as one AddmmBackward0 node: what ``nn.Linear`` records."""
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} "
                           f"and {mat2.shape[0]}x{mat2.shape[1]})")
    input.detach().expand(mat1.shape[0], mat2.shape[1])   # a bias that does not fit fails in PyTorch's words
    scales = {name: v for name, v in (("beta", beta), ("alpha", alpha)) if v != 1}
    return apply(OPS["addmm"], (input, mat1, mat2), **scales)


def bmm(a, b):
    """A batch of matrix products, one BmmBackward0 (``torch.bmm``: two 3-D tensors, equal batches)."""
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    return apply(OPS["bmm"], (a, b))


def _unsafe_view(t, shape):
    return apply(OPS["reshape_copy"], (t,), shape=tuple(shape))


def _should_fold(a, b):
    """PyTorch's ``should_fold``: fold a batch into the rows of one mm (or mv) when one side is
    3-D or more and the other 1-D or 2-D, and either the small one requires grad (its gradient is
    then one product, not a batch of them summed) or the big one folds without a copy."""
    larger = a.ndim >= b.ndim
    big, small = (a, b) if larger else (b, a)
    if not (big.ndim >= 3 and small.ndim <= 2):
        return False
    if small.requires_grad:
        return True
    if a.ndim == 2:      # folding would need a transposed copy of the result
        return False
    if big._data.size == 0:
        return True
    data = big._data if larger else np.swapaxes(big._data, -1, -2)
    strides = [st // data.itemsize for st in data.strides]
    return all(strides[i] == strides[i + 1] * data.shape[i + 1] for i in range(data.ndim - 2))


def _folded(a, b):
    """``a @ b`` as one mm or mv over the big side's rows (its batch folded in), reshaped back."""
    transpose = b.ndim > a.ndim
    t1 = b.mT if transpose else a
    t2 = (a.t() if a.ndim == 2 else a) if transpose else b
    shape = tuple(t1.shape[:-1])
    rows = t1.reshape(math.prod(shape), t1.shape[-1])
    if t2.ndim == 1:
        return _unsafe_view(rows.mv(t2), shape)
    out = _unsafe_view(rows.mm(t2), shape + (t2.shape[1],))
    return out.mT.contiguous() if transpose else out


def _batched(a, b):
    """``a @ b`` as one bmm: both sides expanded to the broadcast batch and folded into 3-D."""
    n, m1, batch1 = (a.shape[-2] if a.ndim > 1 else 1), a.shape[-1], tuple(a.shape[:max(a.ndim - 2, 0)])
    m2, p = (b.shape[-2], b.shape[-1]) if b.ndim > 1 else (b.shape[0], 1)
    batch2 = tuple(b.shape[:max(b.ndim - 2, 0)])
    if a.ndim == 3 and b.ndim == 3 and batch1[0] != batch2[0]:   # a batch of one that requires grad folds
        if batch1[0] == 1 and a.requires_grad:
            return matmul(a.squeeze(0), b)
        if batch2[0] == 1 and b.requires_grad:
            return matmul(a, b.squeeze(0))
    try:
        batch = tuple(np.broadcast_shapes(batch1, batch2))
    except ValueError:
        raise _broadcast_error(batch1, batch2) from None
    count = math.prod(batch)
    a3 = a.expand(*batch, n, m1).reshape(count, n, m1)
    if b.ndim == 1:
        b3 = b.expand(*batch, m2).reshape(count, m2).unsqueeze(2)
    else:
        b3 = b.expand(*batch, m2, p).reshape(count, m2, p)
    out = bmm(a3, b3)
    if b.ndim == 1:
        out = out.squeeze(-1)
    return _unsafe_view(out, batch + ((n,) if a.ndim > 1 else ()) + ((p,) if b.ndim > 1 else ()))


def where(condition, input=None, other=None):
    """``where(c, a, b)``: a where c is true, b elsewhere (gradients follow the same choice)."""
    if input is None:
        return tuple(condition._wrap(i.astype(np.int64)) for i in np.nonzero(condition._data))
    a = input if isinstance(input, TensorBase) else None
    b = other if isinstance(other, TensorBase) else None
    ref = a if a is not None else b
    like = ref if ref is not None else condition     # the class new constants are made of
    if a is None:
        a = _literal(input, _dtype.result_type(ref, input), like)
    if b is None:
        b = _literal(other, _dtype.result_type(ref, other), like)
    dt = _dtype.result_type(a, b)
    cond = np.asarray(condition._data if isinstance(condition, TensorBase) else condition, np.bool_)
    shape = cond.shape
    for s in (a.shape, b.shape):      # PyTorch broadcasts condition, input, other in that order
        try:
            shape = np.broadcast_shapes(shape, s)
        except ValueError:
            raise _broadcast_error(shape, s) from None
    return apply(OPS["where"], (a, b), [a._data.astype(dt.np, copy=False), b._data.astype(dt.np, copy=False)],
                 cond=cond)


def split(t, split_size_or_sections, dim=0):
    """Pieces along ``dim``: of ``split_size`` each (the last may be shorter), or of the sizes listed."""
    if t.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _dims(dim, t.ndim)[0]
    n = t.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes, op = list(split_size_or_sections), OPS["split_sizes"]
        if sum(sizes) != n or any(k < 0 for k in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                               f"size at dimension {d}), but got split_sizes={sizes}")
    else:
        step, op = int(split_size_or_sections), OPS["split"]
        if step < 0 or (step == 0 and n != 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = ([min(step, n - start) for start in range(0, n, step)] if step else []) or [0]   # at least one piece
        return apply_outputs(op, t, dim=d, sizes=WorkedOut(sizes, step))     # (its node shows split_size)
    return apply_outputs(op, t, dim=d, sizes=tuple(sizes))


def chunk(t, chunks, dim=0):
    """At most ``chunks`` pieces of equal size along ``dim`` (the last may be shorter)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _dims(dim, t.ndim)[0]
    n = t.shape[d]
    if n == 0:
        return t.split([0] * chunks, d)
    return t.split(-(-n // chunks), d)


def unbind(t, dim=0):
    """Every slice along ``dim``, that dimension removed: ``x.unbind(0)`` is ``(x[0], x[1], ...)``."""
    if t.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return apply_outputs(OPS["unbind"], t, dim=_dims(dim, t.ndim)[0])


def as_strided(t, size, stride, storage_offset=None):
    """The elements of ``t``'s storage at ``storage_offset + Σ i_k · stride_k``, in the given sizes
    (a view of ``t`` when ``t`` is row-major; PyTorch's AsStridedBackward0)."""
    return apply(OPS["as_strided"], (t,), **strided_params(t, size, stride, storage_offset))


def strided_params(t, size, stride, storage_offset=None):
    """as_strided's parameters, checked: sizes, strides, the offset (t's own unless given) and t's layout."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    g = _strided.geometry(t._data, t._data)
    offset = g["storage_offset"] if storage_offset is None else int(storage_offset)
    return {"size": size, "stride": stride, "storage_offset": offset, "geometry": g["geometry"]}


def outer(input, vec2):
    """The outer product: ``input`` as a column times ``vec2`` (a view and a product, as in PyTorch)."""
    return input.reshape(-1, 1) * vec2


ger = outer


@accepting_numpy_names
def cat(tensors, dim=0):
    """Join tensors along an existing dimension."""
    if not isinstance(tensors, (list, tuple)):          # (a tensor would be joined by its rows)
        check("cat", (tensors, dim), method=False)
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    nd = tensors[0].ndim
    for t in tensors[1:]:
        if t.ndim != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {t.ndim}")
    d = _dims(dim, nd)[0]
    try:
        return apply(OPS["cat"], tuple(tensors), _promoted(tensors), dim=d)
    except ValueError:
        raise RuntimeError("Sizes of tensors must match except in dimension " + str(d)) from None


@accepting_numpy_names
def concat(tensors, dim=0):
    """``torch.concat``: :func:`cat` under another name (and a refusal in its own)."""
    return cat(tensors, dim)


@accepting_numpy_names
def concatenate(tensors, dim=0):
    """``torch.concatenate``: :func:`cat` under another name (and a refusal in its own)."""
    return cat(tensors, dim)


def hstack(tensors):
    """Join side by side: along dim 1, or dim 0 for vectors."""
    tensors = list(tensors)
    return cat(tensors, 0 if builtins.all(t.ndim == 1 for t in tensors) else 1)


def vstack(tensors):
    """Join one below the other: vectors become rows first (an UnsqueezeBackward0 each)."""
    return cat([t.unsqueeze(0) if t.ndim == 1 else t for t in tensors], 0)


@accepting_numpy_names
def stack(tensors, dim=0):
    """Join tensors along a new dimension."""
    if not isinstance(tensors, (list, tuple)):          # (a tensor would be joined by its rows)
        check("stack", (tensors, dim), method=False)
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} "
                               f"at entry 0 and {list(t.shape)} at entry {i}")
    d = _dims(dim, tensors[0].ndim + 1)[0]
    return apply(OPS["stack"], tuple(tensors), _promoted(tensors), dim=d)


def _promoted(tensors):
    """The tensors' values in their common dtype, by PyTorch's promotion (float32 with int64 is float32)."""
    dt = _dtype.result_type(*tensors).np
    return [t._data if t._data.dtype == dt else t._data.astype(dt) for t in tensors]
