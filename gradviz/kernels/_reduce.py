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
other dtypes fall back to ``np.sum``.

>>> x = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
>>> float(torch_sum(x)) == float(np.float32(np.float32(np.float32(np.float32(0.1 + np.float32(0.5))
...     + np.float32(0.2)) + np.float32(0.3)) + np.float32(0.4)))
True
"""

import functools
import math

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


def _groups(items, width):
    """(the sums of each whole group of ``width`` items along axis 0, each from 0; the sum of the
    items left after the last whole group, from 0)."""
    whole = items.shape[0] // width
    rest = items[whole * width:]
    left = _in_order(rest) if len(rest) else np.zeros(items.shape[1:], items.dtype)
    return _in_order(items[:whole * width].reshape((whole, width) + items.shape[1:]), axis=1), left


def _cascade(rows):
    r"""Sum ``rows`` (axis 0) through 4 cascade levels, as ``multi_row_sum`` does.

    Level 0 adds the rows a chunk of :math:`2^p` at a time; each chunk's sum is carried up to level
    1, whose sums are carried to level 2 every :math:`2^p` chunks, and so on to level 3: each level
    adds whole groups of :math:`2^p` of the level below, in order, from 0.  What is left in each
    level at the end is added up last, level 0 first.  (Every group at once, no loop over rows.)"""
    size = rows.shape[0]
    zero = rows.dtype.type(0)
    if size < 16:    # fewer rows than a chunk (2^p, p at least 4; p > 4 only past 2^16 rows): one level
        return _in_order(rows) + zero   # used, from 0: the other three hold zeros (adding one turns -0 into 0)
    step = 1 << max(4, math.ceil(math.log2(size)) // _LEVELS)
    left, items = [], rows
    for _ in range(_LEVELS - 1):
        items, rest = _groups(items, step)
        left.append(rest)
    left.append(_in_order(items) if len(items) else np.zeros(rows.shape[1:], rows.dtype))
    return _running_sum(left[0], np.stack(left[1:])) + zero


def _running_sum(start, rows):
    """``start + rows[0] + rows[1] + ...``, left to right, rounding after every addition."""
    return _in_order(np.concatenate((np.asarray(start, rows.dtype)[None], rows)))


def _row_sum(items):
    """Sum ``items`` (axis 0) with 4 interleaved accumulators, each a cascade (``row_sum``)."""
    size = items.shape[0]
    groups = size // _ILP
    if groups:
        partial = _cascade(items[:groups * _ILP].reshape((groups, _ILP) + items.shape[1:]))
    else:
        partial = np.zeros((_ILP,) + items.shape[1:], items.dtype)
    if groups * _ILP < size:
        partial[0] = _running_sum(partial[0], items[groups * _ILP:])
    return _running_sum(partial[0], partial[1:])


def _inner(x):
    """Sum each row of ``x`` (shape (rows, n), contiguous along n) -> (rows,)."""
    rows, n = x.shape
    lanes = _LANES[x.dtype]
    if n < lanes:
        return _row_sum(np.ascontiguousarray(x.T))
    vectors = n // lanes
    blocks = x[:, :vectors * lanes].reshape(rows, vectors, lanes).transpose(1, 2, 0)
    per_lane = _row_sum(blocks)                    # (lanes, rows)
    if vectors * lanes == n:                       # no leftovers: the lanes, added from 0
        return np.add.accumulate(per_lane, axis=0, dtype=x.dtype)[-1] + x.dtype.type(0)
    total = _running_sum(np.zeros(rows, x.dtype), x[:, vectors * lanes:].T)   # the leftovers first
    return _running_sum(total, per_lane)                                       # then the lanes


def _outer(x):
    """Sum each column of ``x`` down axis 0: shape (n, columns) -> (columns,), contiguous along the
    columns; a batch of such sums (n, batch, columns) -> (batch, columns) at once, each as alone."""
    columns = x.shape[-1]
    lanes = _LANES[x.dtype]
    width = _ILP * lanes if columns >= lanes else _ILP   # columns summed by the plain cascade
    cascaded = columns // width * width
    if cascaded == columns:
        return _cascade(x)
    if not cascaded:
        return _row_sum(x)
    out = np.empty(x.shape[1:], x.dtype)
    out[..., :cascaded] = _cascade(x[..., :cascaded])
    out[..., cascaded:] = _row_sum(x[..., cascaded:])
    return out


def torch_sum(a, axis=None, keepdims=False):
    """``np.sum(a, axis, keepdims=keepdims)``, added up in the order PyTorch's CPU kernel uses."""
    a = np.asarray(a)
    ndim, shape = a.ndim, a.shape
    if a.dtype not in _LANES or a.size == 0 or ndim == 0:
        return np.sum(a, axis=axis, keepdims=keepdims)
    if axis is None:
        axes = tuple(range(ndim))
    elif isinstance(axis, int):
        axes = (axis % ndim,)
    else:
        axes = tuple(sorted([d % ndim for d in axis]))
    out_shape = tuple([1 if d in axes else n for d, n in enumerate(shape)]) if keepdims \
        else tuple([n for d, n in enumerate(shape) if d not in axes])
    if 1 in shape and any([shape[d] != 1 for d in axes]):    # size-1 dimensions change no order:
        kept = [d for d in range(ndim) if shape[d] != 1]       # PyTorch's TensorIterator drops them
        squeezed = a.reshape([shape[d] for d in kept])
        return torch_sum(squeezed, tuple([kept.index(d) for d in axes if shape[d] != 1])).reshape(out_shape)
    first, last = axes[0], axes[-1]
    run = last - first + 1 == len(axes)                    # adjacent dimensions
    if run:
        reduced = math.prod(shape[first:last + 1])
        rest = a.size // reduced
    else:
        reduced = math.prod([shape[d] for d in axes])
        rest = math.prod([n for d, n in enumerate(shape) if d not in axes])
    c = np.ascontiguousarray(a)
    if rest == 1 or reduced == 1 or (run and last == ndim - 1):
        result = _inner(c.reshape(rest, reduced))          # all, or the trailing dimensions
    elif run:                                              # leading or middle dimensions, per slice
        before = math.prod(shape[:first])
        result = _outer(c.reshape(before, reduced, rest // before).transpose(1, 0, 2))   # every slice at once
    else:                                                  # dimensions apart
        result = _apart(c, axes)
    return result.reshape(out_shape)


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
        sums = _row_sum(c.transpose(inner + others + kept).reshape(size, -1))
    sums = sums.reshape(math.prod(c.shape[d] for d in others), -1)
    return _in_order(sums, axis=0) + c.dtype.type(0)       # into the output of zeros, in memory order


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
