"""Sums in PyTorch's order, so ``loss.item()`` prints PyTorch's digits (float addition is not associative).

PyTorch's CPU sum (``aten/src/ATen/native/cpu/SumKernel.cpp``) adds in a fixed pattern:

* along contiguous memory it keeps 4 accumulators (instruction-level parallelism) of one vector
  each (8 floats or 4 doubles), and each accumulator is itself a cascade of 4 levels that carries
  partial sums up every 16 (or more) steps, which keeps rounding errors small;
* the lanes and the leftover elements are then added one by one;
* across rows (a reduction over the leading dimension) each column is summed on its own, by the
  same cascade or by 4 interleaved accumulators.

This module reproduces that pattern with numpy for float32 and float64 reductions over all
dimensions, over any run of adjacent dimensions (what ``x.sum()``, ``x.sum(1)``, ``x.sum(0)``
and broadcasting's gradient sums do) and over dimensions apart (``x.sum((0, 2))``, :func:`_apart`);
other dtypes fall back to ``np.sum``.  Each level of the pattern is one whole-array numpy addition
along an axis of a reshaped view (:func:`_chains`), and what to reshape how is worked out once per
shape (:func:`_plan`): a lesson-sized sum is a handful of numpy calls, a long one runs as fast as memory.

>>> x = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
>>> float(torch_sum(x)) == float(np.float32(np.float32(np.float32(np.float32(0.1 + np.float32(0.5))
...     + np.float32(0.2)) + np.float32(0.3)) + np.float32(0.4)))
True
"""

import functools
import math
import numbers

import numpy as np

from ._numerics import fma
from ._threads import get_num_threads

__all__ = ["torch_sum", "in_order", "cumsum", "cumprod", "nll_sums", "batch_norm_sums", "batch_norm_backward_sums",
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
        if x.size == n:
            total = np.add.accumulate(x.reshape(n))[-1:]
            total += x.dtype.type(0)                           # (from 0: a sum of -0s is +0)
            return total.reshape(x.shape[:axis] + x.shape[axis + 1:])
        x, axis = np.ascontiguousarray(np.moveaxis(x, axis, 0)), 0
    return np.add.reduce(x, axis=axis, initial=0)


def _part(x, start, stop=None):
    """``x[:, start:stop]``: the items ``start`` to ``stop`` of each sum."""
    return x[:, start:stop]


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
        left.append(_chains(_part(items, whole)) if whole < n else None)
        if not whole:
            items = None
            break
        items = _chains(_part(items, 0, whole).reshape((items.shape[0], whole // step, step) + items.shape[2:]), 2)
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
    acc = _cascade(_part(x, 0, whole).reshape((x.shape[0], whole // _ILP, _ILP) + x.shape[2:]))
    if whole < n:
        acc = np.concatenate((acc[:, :1], _part(x, whole), acc[:, 1:]), axis=1)
    return _chains(acc)


def _inner(x):
    r"""Sum each row of ``x`` (rows, n), contiguous along n, as ``vectorized_inner_sum`` does: the row
    as vectors of 8 floats (4 doubles) summed lane by lane (:func:`_row_sum` of the vectors), then
    :math:`0 + \text{(the items after the last whole vector)} + \text{lane}_0 + \dots + \text{lane}_7`,
    in order.  Rows shorter than a vector: ``scalar_inner_sum``, :func:`_row_sum` of the items."""
    rows, n = x.shape
    lanes = _LANES[x.dtype]
    if n < lanes:
        return _row_sum(np.ascontiguousarray(x.T)[None])[0]
    whole = n - n % lanes
    per_lane = _row_sum(x[:, :whole].reshape(rows, whole // lanes, lanes))          # (rows, lanes)
    if whole < n:
        per_lane = np.concatenate((x[:, whole:], per_lane), axis=1)
    return _chains(np.ascontiguousarray(per_lane.T), 0)


def _outer(x):
    """Sum each column of ``x`` (batch, n, columns), contiguous along the columns, down axis 1 as
    ``vectorized_outer_sum`` does: the columns 4 vectors at a time by one :func:`_cascade` each,
    the other columns by :func:`_row_sum`; fewer columns than a vector: ``scalar_outer_sum``, 4
    columns at a time by :func:`_cascade`, the others by :func:`_row_sum`."""
    columns = x.shape[-1]
    lanes = _LANES[x.dtype]
    width = _ILP * lanes if columns >= lanes else _ILP
    cascaded = columns - columns % width
    if cascaded == columns:
        return _cascade(x)
    if not cascaded:
        return _row_sum(x)
    return np.concatenate((_cascade(x[..., :cascaded]), _row_sum(x[..., cascaded:])), axis=-1)


def torch_sum(a, axis=None, keepdims=False):
    """``np.sum(a, axis, keepdims=keepdims)``, added up in the order PyTorch's CPU kernel uses.

    What to add in which order depends only on the shape, the dtype and the axes: that is worked out
    once (:func:`_plan`), and each call is then a few whole-array numpy additions.

    >>> torch_sum(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), axis=0).tolist()
    [4.0, 6.0]
    """
    a = np.asarray(a)
    plan = _plan(a.shape, a.dtype, tuple(axis) if isinstance(axis, list) else axis, keepdims)
    kind = plan[0]
    if kind == "numpy":
        return np.sum(a, axis=axis, keepdims=keepdims)
    c = np.ascontiguousarray(a)
    if kind == "inner":
        result = _inner(c.reshape(plan[1]))
    elif kind == "outer":
        result = _outer(c.reshape(plan[1]))
    elif kind == "apart":
        result = _apart(c.reshape(plan[1]), plan[2])
    else:                                                  # nothing to add: every summed dimension has size 1
        result = c + a.dtype.type(0)                       # (PyTorch's output, an accumulator from +0)
    return result.reshape(plan[-1])


@functools.lru_cache(maxsize=4096)
def _plan(shape, dtype, axis, keepdims):
    """How :func:`torch_sum` sums an array of ``shape`` and ``dtype`` over ``axis``: (kind, the shape
    to view the contiguous array as, [the dimensions apart], the result's shape).

    Dimensions of size 1 change no order: PyTorch's TensorIterator drops them.  The summed dimensions
    are then all of them, or the trailing ones ("inner": rows summed along memory), or a run of
    leading or middle ones ("outer": columns summed across rows, for each slice before them), or
    dimensions apart (:func:`_apart`)."""
    ndim = len(shape)
    size = math.prod(shape)
    if dtype not in _LANES or size == 0 or ndim == 0:
        return ("numpy",)
    axes = tuple(range(ndim)) if axis is None else (axis % ndim,) if isinstance(axis, numbers.Integral) \
        else tuple(sorted({d % ndim for d in axis}))
    out_shape = tuple(1 if d in axes else n for d, n in enumerate(shape)) if keepdims \
        else tuple(n for d, n in enumerate(shape) if d not in axes)
    kept = [d for d in range(ndim) if shape[d] != 1]
    axes = [kept.index(d) for d in axes if shape[d] != 1]
    shape = [shape[d] for d in kept]
    if not axes:
        return ("copy", out_shape)
    first, last = axes[0], axes[-1]
    reduced = math.prod(shape[d] for d in axes)
    rest = size // reduced
    if rest == 1 or last == len(shape) - 1 and last - first + 1 == len(axes):
        return ("inner", (rest, reduced), out_shape)
    if last - first + 1 == len(axes):
        before = math.prod(shape[:first])
        return ("outer", (before, reduced, rest // before), out_shape)
    return ("apart", tuple(shape), tuple(axes), out_shape)


def _apart(c, axes):
    """Sum contiguous ``c`` over ``axes`` that are not one run of adjacent dimensions, as PyTorch's
    TensorIterator does: it puts the reduced dimensions innermost, the closest-packed first, joins
    adjacent ones, and zeroes the output; its loop then sums the innermost run for each index of the
    other reduced dimensions (a row sum, :func:`_inner`, when that run is the trailing dimensions;
    else the strided scalar one, :func:`_row_sum`) and adds each of those sums to the output, in
    memory order, one rounding per addition.  Returns the kept dimensions' sums, flattened."""
    inner = [axes[-1]]
    while inner[0] - 1 in axes:                            # the last run of adjacent reduced dimensions
        inner.insert(0, inner[0] - 1)
    others = [d for d in axes if d not in inner]
    kept = [d for d in range(c.ndim) if d not in axes]
    size = math.prod(c.shape[d] for d in inner)
    if inner[-1] == c.ndim - 1:                            # a contiguous row per (others, kept) index
        rows = np.ascontiguousarray(c.transpose(others + kept + inner)).reshape(-1, size)
        sums = _inner(rows)
    else:                                                  # a strided row: the scalar row sum
        sums = _row_sum(np.ascontiguousarray(c.transpose(inner + others + kept)).reshape(1, size, -1))[0]
    return _chains(sums.reshape(1, math.prod(c.shape[d] for d in others), -1))[0]   # into the output, in memory order


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

    A batch of rows (N, C) takes the "channels last" path: the rows are split into one run per
    thread, each run summed in x's dtype (the squares with fused multiply-adds), and the runs'
    sums added in double. A batch of sequences or images (N, C, L...) is summed per channel in double.
    The last bits of the statistics so depend on PyTorch's thread count (``get_num_threads``).
    """
    n = x.size // x.shape[1]
    if x.size == x.shape[0] * x.shape[1]:   # no image: PyTorch's channels-last path
        runs = _bn_runs(x.reshape(x.shape[0], x.shape[1]))
        total = sum(_in_order(r).astype(np.float64) for r in runs)     # (from 0: the sign of a zero is lost to 0 + ...)
        mean = (total / n).astype(x.dtype)
        squares = np.zeros(x.shape[1], np.float64)
        for r in runs:
            acc = np.zeros(x.shape[1], x.dtype)
            for dx in r - mean:                         # a fused multiply-add per row: a loop
                acc = fma(dx, dx, acc, x.dtype)         # (numpy has no fused running sum)
            squares += acc
        return mean, squares.astype(x.dtype)
    flat = np.moveaxis(x, 1, 0).reshape(x.shape[1], -1)     # per channel, in memory order
    mean = (np.add.accumulate(flat.astype(np.float64), axis=1)[:, -1] / n).astype(x.dtype)
    d = flat - mean[:, None]
    squares = np.add.accumulate((d * d).astype(np.float64), axis=1)[:, -1]
    return mean, squares.astype(x.dtype)


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
            p = np.zeros(x.shape[1], x.dtype)
            for xi, gi in zip(xr, gr):                      # a fused multiply-add per row: a loop
                p = fma(xi - mean, gi, p, x.dtype)          # (numpy has no fused running sum)
            dot += p
        return batch_norm_grad_sum(g), dot.astype(x.dtype)
    planes = x.reshape(x.shape[0], x.shape[1], -1)
    centred = planes - mean.astype(x.dtype)[:, None]       # x − mean, rounded, as the kernel's map
    total, dot = _plane_sums(g.reshape(planes.shape), centred)
    return total, dot


_BN_LANES = 8   # the floats of one vector in PyTorch's BatchNorm kernels (measured: 8 on an AVX-512 build too)


def _plane_sums(g, centred):
    """(Σ g, Σ centred·g) per channel of (N, C, L) planes, each plane's sums taken a vector at a time
    (:func:`_vector_sum`), then added over the batch in double, from 0.  Whole-array: no loop over
    the batch or the channels."""
    n, c, size = g.shape
    if g.dtype != np.float32:
        return _plane_total(g), np.sum(g * centred, axis=(0, 2), dtype=np.float64)
    dots = _vector_sum(centred.reshape(n * c, size), g.reshape(n * c, size), fused=True).reshape(n, c)
    return _plane_total(g), _in_order(dots.astype(np.float64)) + 0.0


def _plane_total(g):
    """Σ g per channel of (N, C, L) planes as :func:`_plane_sums` takes it (in double)."""
    n, c, size = g.shape
    if g.dtype != np.float32:
        return np.sum(g, axis=(0, 2), dtype=np.float64)
    return _in_order(_vector_sum(g.reshape(n * c, size)).reshape(n, c).astype(np.float64)) + 0.0


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
