"""The memory layout PyTorch gives a new result: which dims are laid out innermost.

A pointwise op (``sin``, ``x + y``, ``where``...) is computed by PyTorch's TensorIterator, which
allocates its result in the layout of its inputs: for ``x.T.sin()`` the result is column-major
like ``x.T``, so ``x.T.sin().view(-1)`` fails as ``x.T.view(-1)`` does, and ``reshape(-1)`` copies
(``UnsafeViewBackward0`` on ``CloneBackward0``); ``clone()`` and ``to()`` too (``empty_like``'s
preserve_format infers the same strides).  gradviz's kernels write row-major arrays
(numpy's own ufuncs keep the layout, the SLEEF and MKL kernels do not), so the engine lays every
result out here, once, for every op of those kinds (:func:`gradviz.autograd.engine.apply`); a reduction's
result is row-major whatever its input's layout.

>>> import numpy as np
>>> x = np.zeros((3, 4), np.float32).T
>>> pointwise_strides((4, 3), [x], 4)
(4, 16)
>>> y = np.zeros((4, 6), np.float32)[:, ::2].T            # sliced, then transposed: not dense
>>> pointwise_strides(y.shape, [y], 4)                     # dense, in the same order of dims
(4, 12)
"""

import numpy as np

__all__ = ["POINTWISE", "ROW_MAJOR", "row_major", "laid_out", "pointwise_strides", "dense_strides", "with_strides"]

# TensorIterator's ops (by their test kinds); flip and sort allocate like their input as clone does
POINTWISE = frozenset({"unary", "binary", "steps", "rounded", "where", "flip", "sort"})
# reductions: PyTorch allocates their result row-major before it reduces into it
ROW_MAJOR = frozenset({"reduce_all", "reduce_dim", "moments", "norm"})


def row_major(arrays):
    """Are all ``arrays`` laid out row-major (C-contiguous)?  (Asked of every op's inputs.)"""
    for a in arrays:
        if not a.flags.c_contiguous:
            return False
    return True


def laid_out(op, out, arrays, params=None):
    """``out`` (an op's fresh result) in the layout PyTorch allocates for ``op`` on ``arrays``
    (``params``: the op's; ``contiguous=True`` asks for row-major, as ``clone(memory_format=...)``)."""
    if op.inputs in ROW_MAJOR:
        return out if out.flags.c_contiguous else np.ascontiguousarray(out)
    if op.inputs not in POINTWISE:
        return out
    if params and params.get("contiguous"):
        return out if out.flags.c_contiguous else np.ascontiguousarray(out)
    operands = [a for a in arrays if isinstance(a, np.ndarray)]
    if params and isinstance(params.get("cond"), np.ndarray):    # where's condition: its first operand
        operands.insert(0, params["cond"])
    strides = pointwise_strides(out.shape, operands, out.itemsize)
    if strides is None or out.strides == strides:
        return out
    return with_strides(out, strides)


def pointwise_strides(shape, arrays, itemsize):
    """TensorIterator's output strides (bytes of ``itemsize``) for inputs ``arrays`` broadcast to
    ``shape``: the strides of the inputs if they are all one dense layout, else the dims ordered by
    the inputs' strides (the first input that tells two dims apart decides), laid out densely."""
    ndim = len(shape)
    if ndim <= 1 or not arrays:
        return None
    if all(a.shape == tuple(shape) for a in arrays):
        if all(a.flags.c_contiguous for a in arrays):
            return _row_major(shape, itemsize)
        first = dense_strides(arrays[0])
        if first is not None and all(dense_strides(a) == first for a in arrays[1:]):
            return tuple(s // arrays[0].itemsize * itemsize for s in first)
    strides = [_broadcast_strides(a, shape) for a in arrays]

    def should_swap(d0, d1):     # 1: d0 goes after (outside) d1; -1: before; 0: the inputs do not say
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))      # perm[0]: the innermost dim
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == list(range(ndim - 1, -1, -1)):
        return _row_major(shape, itemsize)
    out, step = [0] * ndim, itemsize
    for d in perm:
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def dense_strides(a):
    """``a``'s strides if it covers its memory densely, without overlap (in some order of dims), else None."""
    dims = sorted((d for d in range(a.ndim) if a.shape[d] != 1), key=lambda d: a.strides[d])
    step = a.itemsize
    for d in dims:
        if a.strides[d] != step:
            return None
        step *= a.shape[d]
    return a.strides


def _broadcast_strides(a, shape):
    lead = len(shape) - a.ndim
    return [0] * lead + [0 if a.shape[k] == 1 and shape[lead + k] != 1 else a.strides[k] for k in range(a.ndim)]


def _row_major(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def with_strides(out, strides):
    """A copy of ``out`` with exactly these strides (bytes; dense, no overlap, as PyTorch's are)."""
    buffer = np.empty(max(out.size, 1), out.dtype)
    result = np.ndarray(out.shape, out.dtype, buffer=buffer, strides=strides)
    result[...] = out
    return result
