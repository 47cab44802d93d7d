"""Sums in PyTorch's order, so ``loss.item()`` prints PyTorch's digits (float addition is not associative).

PyTorch's CPU sum (``aten/src/ATen/native/cpu/SumKernel.cpp``) adds in a fixed pattern:

* along contiguous memory it keeps 4 accumulators (instruction-level parallelism) of one vector
  each (8 floats or 4 doubles), and each accumulator is itself a cascade of 4 levels that carries
  partial sums up every 16 (or more) steps, which keeps rounding errors small;
* the lanes and the leftover elements are then added one by one;
* across rows (a reduction over the leading dimension) each column is summed on its own, by the
  same cascade or by 4 interleaved accumulators.

Which kernel runs, and over which rows, follows from the tensor's shape and strides through
PyTorch's TensorIterator (:func:`_plan`): a transposed or sliced tensor is summed in its memory
order, as PyTorch sums it.  This module reproduces all of it with numpy for float32 and float64
sums over any dimensions (``x.sum()``, ``x.sum(1)``, ``x.sum(0)``, ``x.sum((0, 2))``, broadcasting's
gradient sums); other dtypes fall back to ``np.sum``.  Each level of the pattern is one whole-array
numpy addition along an axis of a reshaped view (:func:`_chains`), and what to reshape how is worked
out once per shape (:func:`_plan`): a lesson-sized sum is a handful of numpy calls, a long one runs
about as fast as memory.

>>> x = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
>>> float(torch_sum(x)) == float(np.float32(np.float32(np.float32(np.float32(0.1 + np.float32(0.5))
...     + np.float32(0.2)) + np.float32(0.3)) + np.float32(0.4)))
True
"""

import functools
import math
import numbers

import numpy as np

from ._numerics import _LOW29, _MID_LOW, fma, fma32, round_sum, two_product, two_sum
from ._threads import get_num_threads

__all__ = ["torch_sum", "sum_to", "summed_axes", "in_order", "fused_running_sum", "cumsum", "cumprod", "nll_sums", "batch_norm_sums", "batch_norm_backward_sums",
           "batch_norm_grad_sum"]

_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}   # AVX2 vectors
_ILP = 4       # independent accumulators
_LEVELS = 4    # depth of the cascade


def in_order(x, axis=0):
    """Sum ``x`` along ``axis`` left to right from its first element, one rounding per addition
    (the axis dropped): :func:`_in_order`, with a sum of nothing but -0 kept -0, as a vector loop
    that starts from its first vector keeps it (``vec::reduce_all`` in softmax's kernels).

    >>> in_order(np.array([[-0.0, 1.0], [-0.0, 2.0]], np.float32)).tolist()
    [-0.0, 3.0]
    """
    x = np.asarray(x)
    total = _in_order(x, axis)
    if np.count_nonzero(total) < np.size(total):
        total = np.where((total == 0) & np.logical_and.reduce(np.signbit(x), axis=axis), -total.dtype.type(0), total)
    return total


def _in_order(x, axis=0):
    """Sum ``x`` along ``axis`` left to right from 0, one rounding per addition (the axis dropped).

    ``np.einsum`` adds a summed axis that is not the innermost one row after row into an output
    of zeros, each row one whole-array addition in the dtype (its ``sum_of_products_one`` loops,
    vectorised across the kept axes, as fast as memory): so the summed axis is put first in a copy
    when it lies innermost (:func:`_rows_outside`), and with nothing else left the sum is a running
    one (``accumulate``, then +0).  From 0 or from the first element differ only for a sum of
    nothing but -0 (+0 or -0): PyTorch's sums start from 0 (:func:`in_order` is the other kind;
    ``tests/kernels/test_vecmath.py`` checks the sign of zero sums).
    (numpy's own reduction adds in the same order but buffers a short summed axis over many rows,
    at twice the time or more; along the innermost axis it adds pairwise.)"""
    x = np.asarray(x)
    axis %= max(x.ndim, 1)
    steps = x.shape[axis]
    if x.ndim == 1 or steps <= 1 or x.size == steps or x.dtype not in _LANES or not x.flags.aligned:
        if not steps:
            return np.zeros(x.shape[:axis] + x.shape[axis + 1:], x.dtype)
        return np.add.accumulate(x, axis=axis).take(-1, axis=axis) + x.dtype.type(0)
    if not _rows_outside(x, axis):
        x, axis = np.ascontiguousarray(np.moveaxis(x, axis, 0)), 0    # the summed axis outermost
    return np.einsum(_subscripts(x.ndim, axis), x)


@functools.cache
def _subscripts(ndim, axis):
    """``np.einsum``'s subscripts for a sum along ``axis`` of ``ndim`` axes: "abc->ac" for 3, 1."""
    letters = "abcdefghijklmnopqrstuvwxyz"[:ndim]
    return f"{letters}->{letters.replace(letters[axis], '')}"


def _rows_outside(x, axis):
    """Does ``np.einsum``'s (or numpy's) reduction of ``x`` along ``axis`` add its rows one after
    the other?  Its iterator loops over the axes in memory order, the closest-packed innermost
    (axes of one element left out, an axis of negative strides turned round): so the summed axis
    must run forwards, and some other axis of more than one element must lie closer packed."""
    step = x.strides[axis]
    if step > 0:
        for d, (n, s) in enumerate(zip(x.shape, x.strides)):   # (a loop: asked of every small sum, twice)
            if n > 1 and 0 < s < step and d != axis:
                return True
    return False


# --- PyTorch's sum, as a few whole-array additions ---------------------------------------------
#
# Every helper below takes items laid out as (batch, n, ...) and adds along axis 1 (the axis
# dropped), each of the batch's sums as PyTorch adds it alone.  Each chain of additions starts
# from +0, as PyTorch's accumulators do (``initial=0``), so even the sign of a zero sum is
# PyTorch's: a chain from +0 never gives -0 (x + y rounds to -0 only when both are -0).

_SMALL = 1 << 13   # items up to which numpy's own reduction is quicker than einsum (no buffer at this size)
_ZERO = {dtype: np.zeros(1, dtype) for dtype in _LANES}    # (an array: adding a numpy scalar costs more)


def _chains(x, axis=1):
    r"""Sum ``x`` along ``axis`` left to right from 0, one rounding per addition:
    :math:`((0 + x_0) + x_1) + \dots`, the axis dropped.

    ``np.add.reduce`` adds the rows of an axis that is not the closest-packed one after the other
    (its inner loop runs across a closer-packed axis, never pairwise); ``x`` is laid out by rows (C
    order, as every caller's reshapes and slices of a C-contiguous array are), so this holds when the
    axes after ``axis`` hold 2 items or more.  Otherwise the summed axis is put first in a copy (one
    sum alone: a running sum); long arrays go to :func:`_in_order`'s einsum, quicker there."""
    n = x.shape[axis]
    if x.size > _SMALL:
        return _in_order(x, axis)
    if x.size == n * math.prod(x.shape[:axis]):               # nothing packed closer than the summed axis
        if x.size == n:                                        # (from 0: a sum of -0s is +0)
            return (np.add.accumulate(x.reshape(n))[-1:] + _ZERO[x.dtype]).reshape(x.shape[:axis] + x.shape[axis + 1:])
        x, axis = np.ascontiguousarray(np.moveaxis(x, axis, 0)), 0
    return np.add.reduce(x, axis=axis, initial=0)


def _cascade(x):
    r"""Sum ``x`` (batch, n, ...) along axis 1 as ``multi_row_sum`` does: one accumulator in 4 levels.

    Level 0 adds the items a chunk of :math:`s = 2^p` at a time (:math:`p = \max(4, \lceil\log_2 n\rceil / 4)`);
    each chunk's sum is added into level 1, whose sum is carried into level 2 after every :math:`s` chunks,
    and level 2's into level 3 after every :math:`s^2`: each level adds whole groups of :math:`s` sums of
    the level below, in order, from 0.  At the end :math:`\text{level}_0 + \text{level}_1 + \text{level}_2 +
    \text{level}_3`, each holding what came after its last carry.  Fewer than :math:`s` items: one chain."""
    size = x.shape[1]
    if size < 16:
        return _chains(x)
    step = 1 << max(4, math.ceil(math.log2(size)) // _LEVELS)
    left, items = [], x
    for _ in range(_LEVELS - 1):                       # levels 0, 1, 2: the whole groups go one level up
        n = items.shape[1]
        whole = n - n % step
        left.append(_chains(items[:, whole:]) if whole < n else None)
        if not whole:
            items = None
            break
        items = _chains(items[:, :whole].reshape((items.shape[0], whole // step, step) + items.shape[2:]), 2)
    if items is not None:
        left.append(_chains(items))                   # level 3: never carried
    total = None
    for level in left:                                # level 0 + level 1 + level 2 + level 3 (empty ones hold 0)
        if level is not None:
            total = level if total is None else total + level
    return total


def _row_sum(x):
    r"""Sum ``x`` (batch, n, ...) along axis 1 as ``row_sum`` does: 4 interleaved accumulators
    :math:`a_k = \sum_i x_{4i+k}` (each a :func:`_cascade`), the :math:`n \bmod 4` items left added into
    :math:`a_0`, then :math:`((a_0 + a_1) + a_2) + a_3`."""
    n = x.shape[1]
    whole = n - n % _ILP
    if not whole:
        return _chains(x)
    if whole == _ILP:       # one item each: that item (0 + x differs only for x = -0, and the sum below starts from 0)
        acc = x[:, :whole]
    else:
        acc = _cascade(x[:, :whole].reshape((x.shape[0], whole // _ILP, _ILP) + x.shape[2:]))
    if whole < n:
        acc = np.concatenate((acc[:, :1], x[:, whole:], acc[:, 1:]), axis=1)
    return _chains(acc)


def _inner(x):
    r"""Sum rows of at least one vector, laid out as ``x`` (batch, n, rows) (the rows outermost or
    innermost), as ``vectorized_inner_sum`` does: the row as vectors of 8 floats (4 doubles) summed
    lane by lane (:func:`_row_sum` of the vectors), then :math:`0 + \text{(the items after the last
    whole vector)} + \text{lane}_0 + \dots + \text{lane}_7`, in order.  Returns (batch · rows,)."""
    batch, n, rows = x.shape
    lanes = _LANES[x.dtype]
    whole = n - n % lanes
    per_lane = _row_sum(x[:, :whole].reshape(batch, whole // lanes, lanes, rows))   # (batch, lanes, rows)
    if whole < n:
        per_lane = np.concatenate((x[:, whole:], per_lane), axis=1)
    return _chains(per_lane).reshape(-1)


# --- short sums: the same additions in fewer numpy calls --------------------------------------
# A lesson's sums are short (a loss's mean over a batch, a bias's gradient summed over it): each
# accumulator adds fewer than 16 items, so no cascade level carries, and the helpers above reduce to
# a handful of whole-array additions whose Python around them costs more than the additions.  Below:
# those additions alone, for one output row (no batch), the same ones in the same order.

_CARRY = 16     # a cascade adds fewer items than this in one chain (_cascade's smallest step)


def _short_row_sum(x):
    """:func:`_row_sum` of ``x`` (n, columns), n < 4·16 and columns >= 2, down axis 0: (columns,)."""
    n = len(x)
    whole = n - n % _ILP
    if not whole:
        return np.add.reduce(x, axis=0, initial=0)
    acc = x[:_ILP] if whole == _ILP else np.add.reduce(x[:whole].reshape(whole // _ILP, _ILP, -1), axis=0, initial=0)
    if whole < n:
        acc = np.concatenate((acc[:1], x[whole:], acc[1:]))
    return np.add.reduce(acc, axis=0, initial=0)


def _short_inner(x):
    """:func:`_inner` of one row ``x`` (n,), at least one vector and fewer than 4·16 of them: (1,)."""
    lanes = _LANES[x.dtype]
    whole = len(x) - len(x) % lanes
    per_lane = _short_row_sum(x[:whole].reshape(-1, lanes))
    if whole < len(x):
        per_lane = np.concatenate((x[whole:], per_lane))
    return np.add.accumulate(per_lane)[-1:] + _ZERO[x.dtype]


def _outer(x, width):
    """Sum each column of ``x`` (batch, n, columns) down axis 1, ``width`` columns at a time by one
    :func:`_cascade` each (``multi_row_sum`` of 4 accumulators), the columns left by :func:`_row_sum`:
    ``vectorized_outer_sum`` takes 4 vectors of columns at a time (``width`` 32 floats, 16 doubles),
    ``scalar_outer_sum`` 4 columns."""
    columns = x.shape[-1]
    cascaded = columns - columns % width
    if cascaded == columns:
        return _cascade(x)
    if not cascaded:
        return _row_sum(x)
    return np.concatenate((_cascade(x[..., :cascaded]), _row_sum(x[..., cascaded:])), axis=-1)


def torch_sum(a, axis=None, keepdims=False):
    """``np.sum(a, axis, keepdims=keepdims)``, added up in the order PyTorch's CPU kernel uses for a
    tensor of ``a``'s shape and strides (a broadcast dimension is one of stride 0, as ``expand`` makes
    it; an array with negative strides, which no tensor has, is summed as its copy in rows).

    What to add in which order depends only on the shape, the strides, the dtype and the dimensions:
    that is worked out once (:func:`_plan`), and each call is then a few whole-array numpy additions.

    >>> torch_sum(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), axis=0).tolist()
    [4.0, 6.0]
    """
    a = np.asarray(a)
    plan = _plan(a.shape, a.strides, a.dtype, tuple(axis) if isinstance(axis, list) else axis, keepdims)
    kind = plan[0]
    if kind == "short":                                    # (a lesson's sum: see _short)
        return _run_short(*plan[1], plan[2], a)
    if kind == "numpy":
        return np.sum(a, axis=axis, keepdims=keepdims)
    if kind == "copy":                                     # nothing to add: every summed dimension has size 1
        return (a + a.dtype.type(0)).reshape(plan[-1])     # (PyTorch's output: an accumulator from +0)
    kind, order, shape, across, rows, split, out_shape = plan
    v = np.ascontiguousarray(a.transpose(order)).reshape(shape)   # the items in the order the loops visit them
    if split and get_num_threads() > 1:
        sums = _by_threads(v, kind, rows) if kind.endswith("inner") else _columns_by_threads(v, kind)
        across = None
    elif kind == "vectorized inner":
        sums = _inner(v)
    elif kind == "scalar inner":
        sums = _row_sum(v)[0]
    else:
        sums = _outer(v, _ILP * _LANES[a.dtype] if kind == "vectorized outer" else _ILP)
    if across == "rows":                                   # row sums added into the output, in order
        sums = _chains(sums.reshape(1, rows, -1))[0]
    elif across == "columns":                              # column sums, each output's in a row
        sums = _chains(np.ascontiguousarray(sums.reshape(-1, rows).T)[None])[0]
    return sums.reshape(out_shape)


def sum_to(a, shape):
    """``a`` summed down to ``shape`` (a tuple), undoing broadcasting as PyTorch's ``sum_to`` does:
    over the leading dimensions broadcasting added and those stretched from 1, added up as
    :func:`torch_sum` adds them, in ``shape``.  Which sum that is, and a lesson's short sums' run,
    is worked out once per shape, strides, dtype and target (a bias's gradient, every step).

    >>> sum_to(np.ones((2, 3, 4), np.float32), (3, 1)).tolist()
    [[8.0], [8.0], [8.0]]
    """
    return _sum_to_plan(a.shape, a.strides, a.dtype, shape)(a)


@functools.lru_cache(maxsize=4096)
def _sum_to_plan(big, strides, dtype, shape):
    """What :func:`sum_to` runs for an array of shape ``big``: a short sum's run straight into
    ``shape``, or :func:`torch_sum` over the summed axes, then reshaped."""
    axes = summed_axes(big, shape)
    plan = _plan(big, strides, dtype, axes, True)
    if plan[0] == "short":        # (its keepdims result holds the same items as ``shape``, in order)
        return functools.partial(_run_short, *plan[1], shape)
    return lambda a: torch_sum(a, axes, keepdims=True).reshape(shape)


@functools.lru_cache(maxsize=1024)
def summed_axes(big, shape):
    """The axes of shape ``big`` to sum to get back to ``shape`` (tuples): the leading ones broadcasting
    added, then those stretched from 1 (worked out once per pair: a training loop asks for the same ones)."""
    extra = len(big) - len(shape)
    return tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and big[extra + i] != 1)


_GRAIN = 32768   # at::internal::GRAIN_SIZE: a sum of fewer items runs on one thread


def _by_threads(v, kind, rows):
    r"""Sum all of ``v`` (as :func:`_plan` lays it out: ``rows`` rows of the summed items) into one
    output on PyTorch's threads (``two_pass_reduction``): ``parallel_for`` cuts the items, in the
    order the loop visits them, into :math:`t = \min(T, \lceil n / 32768\rceil)` runs of
    :math:`\lceil n / t\rceil` (T = :func:`get_num_threads`); each thread adds the sums of its rows
    (a run's first and last rows cut short, each summed alone by the kernel for its length) into its
    slot of a buffer of T zeros, in order, and the buffer is then summed by the same kernels."""
    threads = get_num_threads()
    n, length = v.size, v.size // rows
    used = min(threads, -(-n // _GRAIN))
    size = -(-n // used)
    lined = v.reshape(rows, length) if v.shape[0] == rows else v.reshape(length, rows).T   # (rows, items)
    whole = None
    buffer = np.zeros((1, threads, 1), v.dtype)
    for t in range(used):                              # (a loop over the threads)
        start, stop = t * size, min(n, (t + 1) * size)
        first, last = divmod(start, length), divmod(stop, length)
        if first[0] == last[0]:                        # within one row
            parts = [_row_sums(lined[first[0], first[1]:last[1]], kind)]
        else:
            parts = [_row_sums(lined[first[0], first[1]:], kind)] if first[1] else []
            if first[0] + (first[1] > 0) < last[0]:    # whole rows
                whole = _row_sums(v, kind) if whole is None else whole
                parts.append(whole[first[0] + (first[1] > 0):last[0]])
            if last[1]:
                parts.append(_row_sums(lined[last[0], :last[1]], kind))
        sums = np.concatenate(parts) if len(parts) > 1 else parts[0]
        buffer[0, t] = _chains(sums.reshape(1, -1, 1))[0, 0] if len(sums) > 1 else sums[0]
    return _row_sums(buffer, "vectorized inner")


def _columns_by_threads(v, kind):
    """:func:`_by_threads` for a sum into one output whose loop runs down columns (``v``: (sweeps,
    items, columns), the items read at stride 0, the columns one after the other): each call of
    the loop in a thread's run is a block of whole columns, or one column cut short, and the kernel
    it runs depends on how many columns it gets (:func:`_outer` by 4 vectors from the block's
    first column, or a row sum per column when fewer than a vector)."""
    threads, lanes = get_num_threads(), _LANES[v.dtype]
    sweeps, length, columns = v.shape
    n = v.size
    used = min(threads, -(-n // _GRAIN))
    size = -(-n // used)
    width = _ILP * lanes if kind == "vectorized outer" else _ILP

    def block(q, c0, c1):                              # columns c0..c1 of sweep q, one call
        items = v[q:q + 1, :, c0:c1]
        if kind == "vectorized outer" and c1 - c0 < lanes:
            return _row_sum(items).reshape(-1)
        return _outer(items, width).reshape(-1)

    def cut(column, r0, r1):                           # items r0..r1 of one column, one call: its row sum
        return _row_sum(np.ascontiguousarray(v[column // columns, r0:r1, column % columns]).reshape(1, -1, 1))[0]

    whole = None
    buffer = np.zeros((1, threads, 1), v.dtype)
    for t in range(used):                              # (a loop over the threads)
        (col0, r0), (col1, r1) = divmod(t * size, length), divmod(min(n, (t + 1) * size), length)
        if col0 == col1:
            parts = [cut(col0, r0, r1)]
        else:
            parts = []
            if r0:
                parts.append(cut(col0, r0, length))
                col0 += 1
            (q0, c0), (q1, c1) = divmod(col0, columns), divmod(col1, columns)
            if q0 == q1:
                parts += [block(q0, c0, c1)] if c1 > c0 else []
            else:
                if c0:
                    parts.append(block(q0, c0, columns))
                    q0 += 1
                if q0 < q1:                            # whole sweeps
                    if whole is None:
                        whole = (_row_sum(v) if kind == "vectorized outer" and columns < lanes else _outer(v, width))
                    parts.append(whole[q0:q1].reshape(-1))
                if c1:
                    parts.append(block(q1, 0, c1))
            if r1:
                parts.append(cut(col1, 0, r1))
        sums = np.concatenate(parts) if len(parts) > 1 else parts[0]
        buffer[0, t] = _chains(sums.reshape(1, -1, 1))[0, 0] if len(sums) > 1 else sums[0]
    return _row_sums(buffer, "vectorized inner")


def _row_sums(v, kind):
    """Each row's sum by the kernel for its length: ``v`` laid out as :func:`_plan` lays it out
    ((1, items, rows) or (rows, items, 1)), or one row of items alone."""
    if v.ndim == 1:
        v = np.ascontiguousarray(v).reshape(1, -1, 1)
    if kind == "vectorized inner" and v.shape[1] >= _LANES[v.dtype]:
        return _inner(v)
    return _row_sum(v).reshape(-1)


def _iteration_order(dims, axes, shape, strides):
    """The dimensions innermost first, as TensorIterator's ``reorder_dimensions`` sorts them for a sum
    (insertion sort from the last dimension in, PyTorch's comparison): the summed ones first (the
    output, zeroed, has stride 0 there), then by the output's strides (it lies in rows), then by the
    input's; a stride 0 (a broadcast dimension) decides nothing, and ties leave the order as it is."""
    out, step = {}, 1
    for d in reversed(dims):
        out[d] = 0 if d in axes else step
        step *= 1 if d in axes else shape[d]

    def should_swap(d0, d1):
        if (out[d0] == 0) != (out[d1] == 0):
            return 1 if out[d1] == 0 else -1
        for s0, s1 in ((out[d0], out[d1]), (strides[d0], strides[d1])):
            if s0 and s1:
                if s0 != s1:
                    return -1 if s0 < s1 else 1
                if shape[d0] > shape[d1]:
                    return 1
        return 0

    order = dims[::-1]
    for i in range(1, len(order)):
        at = i
        for j in range(i - 1, -1, -1):
            swap = should_swap(order[j], order[at])
            if swap > 0:
                order[j], order[at] = order[at], order[j]
                at = j
            elif swap < 0:
                break
    return order


@functools.lru_cache(maxsize=4096)
def _plan(shape, strides, dtype, axis, keepdims):
    """How :func:`torch_sum` sums an array of this shape, strides and dtype over ``axis``, as PyTorch's
    TensorIterator and ``cascade_sum`` do: (the kernel, the order of ``a``'s dimensions to read the
    items in, the shape to view them as, whether the sums of rows or of columns are then added into
    each output and how many, the result's shape).

    TensorIterator drops dimensions of size 1, puts the summed dimensions innermost, the closest-packed
    first (the kept ones as the output lies, in rows), and joins neighbours that lie one after the
    other in memory.  Its loop then gets the two innermost (dimension 0 summed; dimension 1 kept or
    summed too) for each index of the others, and picks a kernel by their strides: rows contiguous and
    a vector long: ``vectorized_inner_sum`` (:func:`_inner`); columns contiguous and a vector wide:
    ``vectorized_outer_sum``; else the scalar kernel along the closer-packed one (:func:`_row_sum` per
    row, or :func:`_outer` by 4 columns).  With more than one summed dimension left, each row's sum is
    added into the output (zeroed first) in the order the loop visits them.  A short sum (:func:`_short`)
    is planned as ``("short", how, out_shape)``: ``_run_short(*how, out_shape, a)`` is its sum."""
    ndim = len(shape)
    if dtype not in _LANES or 0 in shape or ndim == 0:
        return ("numpy",)
    axes = set(range(ndim)) if axis is None else {axis % ndim} if isinstance(axis, numbers.Integral) \
        else {d % ndim for d in axis}
    out_shape = tuple(1 if d in axes else n for d, n in enumerate(shape)) if keepdims \
        else tuple(n for d, n in enumerate(shape) if d not in axes)
    dims = [d for d in range(ndim) if shape[d] != 1]
    if not axes.intersection(dims):
        return ("copy", out_shape)
    if any(strides[d] < 0 for d in dims):                  # no such tensor: as its copy in rows
        strides = np.empty(shape, dtype).strides
    groups = [[]]                                          # joined dimensions, innermost first
    for d in _iteration_order(dims, axes, shape, strides):
        last = groups[-1]
        if not last or (d in axes) == (last[0] in axes) and \
                strides[last[0]] * math.prod(shape[e] for e in last) == strides[d]:
            last.append(d)
        else:
            groups.append([d])
    sizes = [math.prod(shape[d] for d in g) for g in groups]
    step0, step1 = strides[groups[0][0]], strides[groups[1][0]] if len(groups) > 1 else 0
    item, lanes = dtype.itemsize, _LANES[dtype]
    if step0 == item and sizes[0] >= lanes:
        kind = "vectorized inner"
    elif step1 == item and len(sizes) > 1 and sizes[1] >= lanes:
        kind = "vectorized outer"
    else:                                                  # (one column alone: its row sum)
        kind = "scalar inner" if step0 < step1 or len(sizes) == 1 else "scalar outer"
    n_summed = sum(1 for g in groups if g[0] in axes)
    outer_first = [list(reversed(g)) for g in reversed(groups)]    # each group's dimensions outermost first
    summed_rows = outer_first[len(groups) - n_summed:-1]  # the summed dimensions but the innermost
    kept = outer_first[:len(groups) - n_summed]
    rows = math.prod(sizes[1:n_summed])
    across = "rows" if rows > 1 else None                  # several row sums into each output
    if kind == "vectorized inner" and math.prod(sizes) > _SMALL:     # long: the rows as they lie
        order, view = sum(summed_rows + kept, []) + outer_first[-1], (-1, sizes[0], 1)
    elif kind.endswith("inner"):                       # short: the rows innermost (numpy's loops run along them)
        order, view = outer_first[-1] + sum(summed_rows + kept, []), (1, sizes[0], -1)
    else:                                              # columns: the next dimension (summed too when the
        order = sum(outer_first[:-2], []) + outer_first[-1] + outer_first[-2]   # rows lie at stride 0)
        view = (-1, sizes[0], sizes[1])
        across = "columns" if n_summed > 1 else None
    ones = [d for d in range(ndim) if shape[d] == 1]       # (anywhere: they hold one item)
    order = tuple(ones + order)
    short = _short(kind, sizes, n_summed, lanes)
    if short is not None:
        moved = [d for d in order if shape[d] > 1]         # (only dimensions of one item moved: a's own order)
        return ("short", (short, None if moved == sorted(moved) else order, sizes[:2]), out_shape)
    split = n_summed == len(groups) and math.prod(sizes) >= _GRAIN        # into one output, long: by threads
    return (kind, order, view, across, rows, split, out_shape)


def _short(kind, sizes, n_summed, lanes):
    """The short path of a sum planned as ``kind`` over ``sizes`` (its joined dimensions, innermost
    first), or None: :func:`_short_inner` for one row of fewer than 64 vectors into one output,
    :func:`_short_row_sum` for the columns of fewer than 64 rows, each column into its output."""
    if kind == "vectorized inner" and len(sizes) == 1 and sizes[0] < _CARRY * _ILP * lanes:
        return _short_inner
    width = _ILP * lanes if kind == "vectorized outer" else _ILP
    if kind.endswith("outer") and len(sizes) == 2 and n_summed == 1 and sizes[0] < _CARRY * _ILP \
            and 2 <= sizes[1] < width:
        return _short_row_sum
    return None


def _run_short(short, order, sizes, out_shape, a):
    """A short sum of ``a``: its items in the order the loops visit them (``sizes[0]`` rows of ``sizes[1]``
    columns, or one row; ``order`` None: as they lie in ``a``), added by ``short``."""
    items = a.reshape(sizes) if order is None else np.ascontiguousarray(a.transpose(order)).reshape(sizes)
    return short(items).reshape(out_shape)


# --- the losses' and BatchNorm's sums ------------------------------------------------------------

def nll_sums(x, t, weight, ignore_index):
    r"""(−Σ w[t_b]·x[b, t_b], Σ w[t_b]) over the rows not ignored, added as PyTorch's kernel adds them:
    a cascade of 8 partial sums, level j flushed one level up after each row b (not ignored) that is
    a multiple of :math:`2^{(j+1)p}` (so long batches lose little), the levels added up at the end."""
    dt = x.dtype.type
    levels, n = 8, len(t)
    power = max(4, (int(n - 1).bit_length() if n > 1 else 0) // levels)
    t = np.asarray(t)
    kept = np.nonzero(t != ignore_index)[0]
    picked = x[kept, t[kept]]
    if weight is not None:
        w = np.asarray(weight, x.dtype)[t[kept]]
        items = np.stack((-(picked * w), w), axis=1)         # each product rounded, as the kernel's
    else:
        items = np.stack((-picked, np.zeros_like(picked)), axis=1)
    times, left = kept, []
    for j in range(levels - 1):
        ends = times % (1 << ((j + 1) * power)) == 0       # the rows after which level j is flushed
        sums, times, rest = _segments(items, ends, times)
        left.append(rest)
        items = sums
    left.append(_in_order(items) + dt(0) if len(items) else np.zeros(2, x.dtype))
    totals = _in_order(np.concatenate((np.zeros((1, 2), x.dtype), np.stack(left))))
    return totals[0], dt(len(kept)) if weight is None else totals[1]


def _segments(items, ends, times):
    """Split ``items`` (rows in order) after each row marked in ``ends``: (the sum of each closed
    segment from 0, the time it closed; the sum of the rows after the last end, from 0)."""
    cut = np.nonzero(ends)[0]
    if not len(cut):
        rest = _in_order(items) + items.dtype.type(0) if len(items) else np.zeros(items.shape[1:], items.dtype)
        return items[:0], times[:0], rest
    last = cut[-1] + 1
    starts = np.concatenate(([0], cut[:-1] + 1))
    lengths = cut + 1 - starts
    tail = items[last:]
    rest = _in_order(tail) + items.dtype.type(0) if len(tail) else np.zeros(items.shape[1:], items.dtype)
    width = int(lengths.max())
    if len(cut) * width > 4 * last + 64:          # very uneven segments (many ignored rows): one by one
        sums = np.stack([_in_order(items[a:a + m]) for a, m in zip(starts, lengths)])
    else:                                          # padded with zeros after their end (adding +0 changes
        grid = np.zeros((len(cut), width) + items.shape[1:], items.dtype)     # no running sum from 0)
        seg = np.repeat(np.arange(len(cut)), lengths)
        grid[seg, np.arange(last) - starts[seg]] = items[:last]
        sums = _in_order(grid, axis=1)
    return sums + items.dtype.type(0), times[cut], rest


def batch_norm_sums(x):
    """(mean, Σ(x − mean)²) per channel, added up as PyTorch's CPU kernel adds them.

    A batch of rows (N, C) takes the "channels last" path
    (``batch_norm_cpu_collect_stats_channels_last_impl``).  With more rows than threads
    (``get_num_threads``) the rows are split into one run per thread (:func:`_bn_runs`), each run
    summed in x's dtype into its thread's buffer (the squares with fused multiply-adds), and the
    runs' sums added in double: the last bits so depend on the thread count.  With no more rows
    than threads, a few channels (:data:`_BN_FEW_CHANNELS` or fewer) are summed as one run; more
    channels each on their own in double (:func:`_bn_channel_sums`).
    A batch of sequences or images (N, C, L...) is summed per channel in double.
    """
    n = x.size // x.shape[1]
    if x.size == x.shape[0] * x.shape[1]:   # no image: PyTorch's channels-last path
        rows = x.reshape(x.shape[0], x.shape[1])
        if len(rows) > get_num_threads():
            runs = _bn_runs(rows)
        elif rows.shape[1] > _BN_FEW_CHANNELS:
            return _bn_channel_sums(rows)
        else:
            runs = [rows]
        total = sum(_in_order(r).astype(np.float64) for r in runs)     # (from 0: the sign of a zero is lost to 0 + ...)
        mean = (total / n).astype(x.dtype)
        squares = np.zeros(x.shape[1], np.float64)
        for r in runs:
            d = r - mean
            squares += _fused_running_sum(d, d, x.dtype)
        return mean, squares.astype(x.dtype)
    flat = np.moveaxis(x, 1, 0).reshape(x.shape[1], -1)     # per channel, in memory order
    mean = (np.add.accumulate(flat.astype(np.float64), axis=1)[:, -1] / n).astype(x.dtype)
    d = flat - mean[:, None]
    squares = np.add.accumulate((d * d).astype(np.float64), axis=1)[:, -1]
    return mean, squares.astype(x.dtype)


_BN_FEW_CHANNELS = 16   # rows of this many channels or fewer, no more of them than threads: one run
                        # (measured on torch 2.13: 16 channels sum as one run, 17 each on their own)


def _bn_channel_sums(rows):
    """(mean, Σ(x − mean)²) of rows (N, C), each channel on its own from 0 in double, as
    PyTorch's channels-last kernel adds them when there are no more rows than threads and many
    channels: the mean rounded to x's dtype, each square (x − mean)² rounded in x's dtype and
    added in double.  float64: each square rounded and added in turn, but the last of an odd
    count fused into the sum (one multiply-add), as PyTorch's compiled loop (unrolled by two)
    adds them (measured on torch 2.13)."""
    dt = rows.dtype
    mean = ((np.add.accumulate(rows.astype(np.float64), axis=0)[-1] + 0.0) / len(rows)).astype(dt)
    d = rows - mean
    if dt != np.float64:
        return mean, (np.add.accumulate((d * d).astype(np.float64), axis=0)[-1] + 0.0).astype(dt)
    paired = len(d) - len(d) % 2
    squares = _in_order(d[:paired] * d[:paired]) if paired else np.zeros(d.shape[1])
    if paired < len(d):
        squares = fma(d[-1], d[-1], squares, np.float64)
    return mean, squares


def fused_running_sum(a, b):
    r"""Σ_j a_j·b_j down axis 0 from 0, one fused multiply-add a step, :math:`s_j = \mathrm{fl}(a_j b_j
    + s_{j-1})`, for float32 or float64 arrays (2 dims or more) of one dtype: as PyTorch's softmax
    gradient across an inner dimension, and its channels-last BatchNorm loop, add (numpy has no
    fused running sum)."""
    return _fused_chain32(a, b) if a.dtype == np.float32 else _fused_chain64(a, b)


def _fused_running_sum(a, b, dtype):
    """Σ a_i·b_i down axis 0 in ``dtype`` (BatchNorm's: ``a`` may come in another float dtype):
    :func:`fused_running_sum` when both are in ``dtype``, else one :func:`fma` a row."""
    if a.dtype == b.dtype == np.dtype(dtype) and a.dtype in _LANES:
        return fused_running_sum(a, b)
    total = np.zeros(a.shape[1:], dtype)
    for x, y in zip(a, b):
        total = fma(x, y, total, dtype)
    return total


_LOW29_32, _MID_LOW_32 = np.uint32(_LOW29), np.uint32(_MID_LOW)   # (a float64's low word: a float32 midpoint)
_BLOCK = 2 ** 15    # float64 sums a block of rows (256 kB): they stay in the core's cache between passes
_BLOCK64 = 2 ** 13  # products a block in float64 (two_product's dozen new arrays of 64 kB: measured 20% faster than 256 kB)


def _fused_chain32(g, y):
    r"""float32 :math:`a_j = \mathrm{fl}(g_j y_j + a_{j-1})` down axis 0 from :math:`a_{-1} = 0` (``g``
    of 2 dims or more), a block of rows at a time (:data:`_BLOCK`).

    The block's products at once, exact in float64 (24 + 24 bits).  When each of them is also a
    float32 number, a step is one float32 addition: the block is a running sum from the sum so far
    (:func:`_in_order`), one numpy call; for ``g`` of ones (a softmax's usual seed) the products,
    ``y`` itself, are not computed (1000x1000: 1.9 -> 0.9 ms).  Else each
    row's sum is taken in float64 and rounded to float32, a few whole-row numpy calls a row.  That
    rounds twice where :func:`fma32` rounds once, and differs only when float64 rounded a sum onto
    a float32 midpoint; the block's sums are kept, such ties found among them all at once (as
    :func:`fma32` finds them: the midpoint in the low bits, the part rounded away by two-sum), and
    only the columns that have one are summed again by :func:`fma32`, step by step, at the end."""
    n, shape = g.shape[0], g.shape[1:]
    m = math.prod(shape)
    g, y = g.reshape(n, m), y.reshape(n, m)         # (a copy only for a moved axis)
    rows = max(1, min(n, _BLOCK // max(m, 1)))
    sums = np.empty((rows, m), np.float64)           # the block's products, each row's sum then written over it
    running = np.empty((rows + 1, m), np.float32)    # the sum so far, then the products as float32
    low, tie = np.empty((rows, m), np.uint32), np.empty((rows, m), bool)
    acc, acc64 = np.zeros(m, np.float32), np.zeros(m, np.float64)   # the sum so far, and it in float64
    ties = []       # the columns of the ties that were rounded
    ones = n and (g[0] == 1).all()     # (g of ones, a softmax's usual seed, where its first row is)
    for start in range(0, n, rows):
        k = min(rows, n - start)
        block, products = sums[:k], running[1:k + 1]
        if ones and (g[start:start + k] == 1).all():    # g of ones: each product is y itself, exactly
            np.copyto(products, y[start:start + k])
            exact = True
        else:
            np.copyto(block, g[start:start + k])        # (a float64 copy of g then a product: faster
            np.multiply(block, y[start:start + k], out=block)     # than one multiply casting both)
            exact = (block[0].astype(np.float32) == block[0]).all()   # (the first row tells most blocks of
            if exact:                                                   # other products)
                np.copyto(products, block, casting="same_kind")
                exact = (products == block).all()
        if exact:
            running[0] = acc            # (_in_order adds from +0: as the sum so far is never -0)
            acc = _in_order(running[:k + 1], 0)
            acc64[...] = acc
            continue
        before = acc.copy()
        for row in block:
            np.add(acc64, row, out=row)
            acc[...] = row          # rounded to float32,
            acc64[...] = acc        # and back (adding float64 to float64 is twice as fast as a float32 to it)
        np.copyto(low[:k], block.view(np.uint64), casting="unsafe")     # each sum's low 32 bits
        np.bitwise_and(low[:k], _LOW29_32, out=low[:k])
        at = np.flatnonzero(np.equal(low[:k], _MID_LOW_32, out=tie[:k]))
        if len(at):     # sums on a midpoint: exact ones are right; was any rounded there?
            step, column = np.divmod(at, m)
            p = np.multiply(g[start + step, column], y[start + step, column], dtype=np.float64)
            previous = np.where(step > 0, block[step - 1, column].astype(np.float32), before[column]).astype(np.float64)
            lost = two_sum(p, previous)[1] != 0     # what the float64 sum (the block's, there) rounded away
            ties.append(column[lost])
    redone = np.unique(np.concatenate(ties)) if ties else ()
    if len(redone):
        redo = np.zeros(len(redone), np.float32)
        for gj, yj in zip(g[:, redone], y[:, redone]):
            redo = fma32(gj, yj, redo)
        acc[redone] = redo
    return acc.reshape(shape)


def _fused_chain64(a, b):
    r"""float64 :math:`s_j = \mathrm{fl}(a_j b_j + s_{j-1})` down axis 0 from 0, a block of rows at a
    time (:data:`_BLOCK64`): the block's products at once as exact pairs, the float64 product and
    what it rounded away (:func:`two_product`), then each step the pair added to the sum and
    rounded once (:func:`round_sum`).  When no product of the block rounded (``b`` of ones), a
    step is one float64 addition: the block is one running sum from the sum so far."""
    n, shape = a.shape[0], a.shape[1:]
    m = math.prod(shape)
    a, b = a.reshape(n, m), b.reshape(n, m)
    rows = max(1, min(n, _BLOCK64 // max(m, 1)))
    running = np.empty((rows + 1, m))       # the sum so far, then the products
    total = np.zeros(m)
    for start in range(0, n, rows):
        p, e = two_product(a[start:start + rows], b[start:start + rows])
        if not e.any():
            running[0], running[1:len(p) + 1] = total, p    # (_in_order adds from +0: the sum so far is never -0)
            total = _in_order(running[:len(p) + 1], 0)
            continue
        for pj, ej in zip(p, e):
            total = round_sum(pj, ej, total)
    return total.reshape(shape)


def _bn_runs(rows):
    """The rows split into one run per thread, as PyTorch's parallel_for splits a batch."""
    threads = max(1, min(get_num_threads(), len(rows)))
    size = -(-len(rows) // threads)
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def batch_norm_backward_sums(g, x, mean):
    """(Σ g, Σ (x − mean)·g) per channel.  A batch of rows: per thread (the products fused into the
    running sum), then the threads' sums added in double, rounded to x's dtype.  A batch of images
    (N, C, L...): as PyTorch's ``batch_norm_cpu_backward_contiguous_impl``, each (sample, channel) plane added up a
    vector at a time (``vec::reduce_all`` and ``map2_reduce_all``, :func:`_plane_sums`), the planes'
    sums then added over the batch in double; returned in double (the kernel's accumulators)."""
    if x.size == x.shape[0] * x.shape[1]:   # no image: PyTorch's channels-last path
        rows, grads = x.reshape(x.shape[0], -1), g.reshape(x.shape[0], -1)
        dot = np.zeros(x.shape[1], np.float64)              # the threads' sums added in double
        for xr, gr in zip(_bn_runs(rows), _bn_runs(grads)):
            dot += _fused_running_sum(xr - mean, gr, x.dtype)
        return batch_norm_grad_sum(g), dot.astype(x.dtype)
    planes = x.reshape(x.shape[0], x.shape[1], -1)
    centred = planes - mean.astype(x.dtype)[:, None]       # x − mean, rounded, as the kernel's map
    total, dot = _plane_sums(g.reshape(planes.shape), centred)
    return total, dot


_BN_LANES = 8   # the floats of one vector in PyTorch's BatchNorm kernels (measured: 8 on an AVX-512 build too)


def _bn_lanes(dtype):
    """The numbers of ``dtype`` in one vector of PyTorch's BatchNorm kernels: :data:`_BN_LANES`
    floats, half as many doubles."""
    return _BN_LANES if dtype == np.float32 else _BN_LANES // 2


def _plane_sums(g, centred):
    """(Σ g, Σ centred·g) per channel of (N, C, L) planes, each plane's sums taken a vector at a time
    (:func:`_vector_sum`), then added over the batch in double, from 0.  Whole-array: no loop over
    the batch or the channels."""
    n, c, size = g.shape
    if g.dtype not in _LANES:
        return _plane_total(g), np.sum(g * centred, axis=(0, 2), dtype=np.float64)
    dots = _vector_sum(centred.reshape(n * c, size), g.reshape(n * c, size), fused=True,
                       lanes=_bn_lanes(g.dtype)).reshape(n, c)
    return _plane_total(g), _in_order(dots.astype(np.float64)) + 0.0


def _plane_total(g):
    """Σ g per channel of (N, C, L) planes as :func:`_plane_sums` takes it (in double)."""
    n, c, size = g.shape
    if g.dtype not in _LANES:
        return np.sum(g, axis=(0, 2), dtype=np.float64)
    return _in_order(_vector_sum(g.reshape(n * c, size), lanes=_bn_lanes(g.dtype)).reshape(n, c).astype(np.float64)) + 0.0


def _vector_sum(x, y=None, fused=False, lanes=_BN_LANES):
    """Σ x (or Σ x·y) along each row of ``x`` (rows, n), as ATen's ``vec::reduce_all`` (and
    ``map2_reduce_all``) adds it with vectors of ``lanes`` floats (:data:`_BN_LANES`): rows shorter than a
    vector left to right from their first element; longer ones lane by lane (lane i adds elements
    i, i+8, i+16... from the first vector on, the leftover part vector only into its own lanes),
    then the lanes folded in halves (v_i + v_{i+4}, then + v_{i+2}, then + v_{i+1}), as the
    shuffles of float vectors do; a vector of doubles has no such shuffles (``VecReduceAllSIMD``
    is written for floats), its lanes are added left to right."""
    rows, n = x.shape
    w = lanes
    items = x if y is None else x * y
    if n < w:
        return np.add.accumulate(items, axis=1)[:, -1]
    full = n // w * w
    acc = in_order(items[:, :full].reshape(rows, -1, w), 1)
    if full < n:
        if y is not None and fused:
            acc[:, :n - full] = fma(x[:, full:], y[:, full:], acc[:, :n - full], x.dtype)
        else:
            acc[:, :n - full] += items[:, full:]
    if acc.dtype != np.float32:
        return np.add.accumulate(acc, axis=1)[:, -1]
    while acc.shape[1] > 1:
        half = acc.shape[1] // 2
        acc = acc[:, :half] + acc[:, half:]
    return acc[:, 0]


def batch_norm_grad_sum(g):
    """Σ g per channel (axis 1) as PyTorch's BatchNorm backward kernel adds it, the bias's gradient:
    for a batch of rows, each thread's run of rows from 0 (whole-array), the runs' sums added in
    double; for a batch of images, each plane a vector at a time, the planes' sums in double.

    >>> batch_norm_grad_sum(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)).tolist()
    [4.0, 6.0]
    """
    if g.size == g.shape[0] * g.shape[1]:
        total = np.zeros(g.shape[1], np.float64)            # the threads' sums added in double
        for run in _bn_runs(g.reshape(g.shape[0], -1)):
            total += _in_order(run)
        return total.astype(g.dtype)
    return _plane_total(g.reshape(g.shape[0], g.shape[1], -1)).astype(g.dtype)


# --- running sums and products ----------------------------------------------------------------------

def _accumulator(dtype):
    """The type PyTorch's CPU cumsum/cumprod loop carries its running value in (``acc_type``):
    double for float32 and float64, float for float16, int64 for integers."""
    return np.float64 if dtype in (np.float32, np.float64) else np.float32 if dtype == np.float16 else np.int64


def cumsum(a, dim):
    """``x.cumsum(dim)`` as PyTorch's ``cumsum_cpu_kernel``: a running sum from 0 in the accumulator's
    type (double for float32), each prefix rounded to the dtype as it is written."""
    a = np.asarray(a)
    acc = _accumulator(a.dtype)
    return (np.cumsum(a, axis=dim, dtype=acc) + acc(0)).astype(a.dtype)


def cumprod(a, dim):
    """``x.cumprod(dim)`` as PyTorch's ``cumprod_cpu_kernel``: a running product from 1 in the
    accumulator's type, each prefix rounded to the dtype."""
    a = np.asarray(a)
    return np.cumprod(a, axis=dim, dtype=_accumulator(a.dtype)).astype(a.dtype)
