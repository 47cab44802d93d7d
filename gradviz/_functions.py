"""Functions of several tensors that PyTorch has beside the methods: ``matmul`` (dispatched to dot,
mv, mm or a batched product, as PyTorch dispatches it), ``where``, ``cat`` and ``stack``.
"""

import builtins
import math

import numpy as np

from . import _dtype as D
from ._arrays import as_array
from ._engine import apply, apply_outputs
from ._operands import _dims, _literal
from ._types import TensorBase
from .ops import OPS

__all__ = ["matmul", "where", "cat", "concat", "concatenate", "stack", "hstack", "vstack", "outer", "ger",
           "split", "chunk", "unbind"]


def matmul(a, b):
    """``a @ b`` as PyTorch dispatches it: dot, mv, mm, or a batched product."""
    like = a if isinstance(a, TensorBase) else b     # a list or number beside a tensor becomes one
    a, b = (x if isinstance(x, TensorBase) else like._wrap(np.array(as_array(x))) for x in (a, b))
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    if a.dtype is not b.dtype:
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{D.TYPE_NAMES[a.dtype.name]} and {D.TYPE_NAMES[b.dtype.name]}")
        if a.ndim > 2 or b.ndim > 2:
            raise RuntimeError(f"expected scalar type {D.TYPE_NAMES[a.dtype.name]} but found "
                               f"{D.TYPE_NAMES[b.dtype.name]}")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{D.CPP_NAMES[a.dtype.name]} != {D.CPP_NAMES[b.dtype.name]}")
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
    if a.ndim <= 2:   # one vector or matrix times a batch of matrices
        return _small_times_batch(a, b)
    if b.ndim <= 2:   # a batch of rows times one matrix (or vector): folded into one mm (mv), as PyTorch does
        out = matmul(a.reshape(-1, a.shape[-1]), b)
        return apply(OPS["reshape_copy"], (out,), shape=a.shape[:-1] + b.shape[1:])
    try:
        return apply(OPS["bmm"], (a, b))
    except ValueError as e:
        raise RuntimeError(str(e)) from None


def _small_times_batch(a, b):
    """``a @ b`` for a vector or matrix ``a`` and a batch ``b``, recorded as PyTorch records it: when ``a``
    requires grad, folded into one mv or mm of b's transposed matrices stacked (the gradient of ``a``
    is then one product, not a batch of them summed); otherwise ``a`` expanded to the batch and one bmm."""
    batch, (m2, p) = b.shape[:-2], b.shape[-2:]
    n, m1 = (1, a.shape[0]) if a.ndim == 1 else a.shape
    if a.requires_grad:
        folded = b.transpose(-1, -2).reshape(-1, m2)
        if a.ndim == 1:
            return apply(OPS["reshape_copy"], (folded.mv(a),), shape=batch + (p,))
        out = apply(OPS["reshape_copy"], (folded.mm(a.t()),), shape=batch + (p, n))
        return out.transpose(-1, -2).contiguous()
    count = math.prod(batch)
    a3 = a.expand(*batch, n, m1).reshape(count, n, m1)
    b3 = b.expand(*batch, m2, p).reshape(count, m2, p)
    if m1 != m2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{count}, {m1}] but "
                           f"got: [{count}, {m2}].")
    return apply(OPS["reshape_copy"], (apply(OPS["bmm"], (a3, b3)),), shape=batch + ((n,) if a.ndim == 2 else ()) + (p,))


def where(condition, input=None, other=None):
    """``where(c, a, b)``: a where c is true, b elsewhere (gradients follow the same choice)."""
    if input is None:
        return tuple(condition._wrap(i.astype(np.int64)) for i in np.nonzero(condition._data))
    a = input if isinstance(input, TensorBase) else None
    b = other if isinstance(other, TensorBase) else None
    ref = a if a is not None else b
    like = ref if ref is not None else condition     # the class new constants are made of
    if a is None:
        a = _literal(input, D.result_type(ref, input), like)
    if b is None:
        b = _literal(other, D.result_type(ref, other), like)
    dt = D.result_type(a, b)
    return apply(OPS["where"], (a, b), [a._data.astype(dt.np, copy=False), b._data.astype(dt.np, copy=False)],
                 cond=np.asarray(condition._data if isinstance(condition, TensorBase) else condition, np.bool_))


def split(t, split_size_or_sections, dim=0):
    """Pieces along ``dim``: of ``split_size`` each (the last may be shorter), or of the sizes listed."""
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
        sizes = [min(step, n - start) for start in range(0, n, step)] if step else [0]
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
    return apply_outputs(OPS["unbind"], t, dim=_dims(dim, t.ndim)[0])


def outer(input, vec2):
    """The outer product: ``input`` as a column times ``vec2`` (a view and a product, as in PyTorch)."""
    return input.reshape(-1, 1) * vec2


ger = outer


def cat(tensors, dim=0):
    """Join tensors along an existing dimension."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    nd = tensors[0].ndim
    for t in tensors[1:]:
        if t.ndim != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {t.ndim}")
    d = _dims(dim, nd)[0]
    try:
        return apply(OPS["cat"], tuple(tensors), dim=d)
    except ValueError:
        raise RuntimeError("Sizes of tensors must match except in dimension " + str(d)) from None


concat = concatenate = cat


def hstack(tensors):
    """Join side by side: along dim 1, or dim 0 for vectors."""
    tensors = list(tensors)
    return cat(tensors, 0 if builtins.all(t.ndim == 1 for t in tensors) else 1)


def vstack(tensors):
    """Join one below the other: vectors become rows first (an UnsqueezeBackward0 each)."""
    return cat([t.unsqueeze(0) if t.ndim == 1 else t for t in tensors], 0)


def stack(tensors, dim=0):
    """Join tensors along a new dimension."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} "
                               f"at entry 0 and {list(t.shape)} at entry {i}")
    d = _dims(dim, tensors[0].ndim + 1)[0]
    return apply(OPS["stack"], tuple(tensors), dim=d)
