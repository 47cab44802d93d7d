"""Sums in PyTorch's order, so ``loss.item()`` prints PyTorch's digits (float addition is not associative).

PyTorch's CPU sum (``aten/src/ATen/native/cpu/SumKernel.cpp``) adds in a fixed pattern:

* along contiguous memory it keeps 4 accumulators (instruction-level parallelism) of one vector
  each (8 floats or 4 doubles), and each accumulator is itself a cascade of 4 levels that carries
  partial sums up every 16 (or more) steps, which keeps rounding errors small;
* the lanes and the leftover elements are then added one by one;
* across rows (a reduction over the leading dimension) each column is summed on its own, by the
  same cascade or by 4 interleaved accumulators.

This module reproduces that pattern with numpy for float32 and float64 reductions over all
dimensions or over any run of adjacent dimensions (what ``x.sum()``, ``x.sum(1)``, ``x.sum(0)``
and broadcasting's gradient sums do); other cases fall back to ``np.sum``.

>>> x = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
>>> float(torch_sum(x)) == float(np.float32(np.float32(np.float32(np.float32(0.1 + np.float32(0.5))
...     + np.float32(0.2)) + np.float32(0.3)) + np.float32(0.4)))
True
"""

import math

import numpy as np

from ._numerics import fma
from ._threads import get_num_threads

__all__ = ["torch_sum", "nll_sums", "batch_norm_sums", "batch_norm_backward_sums"]

_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}   # AVX2 vectors
_ILP = 4       # independent accumulators
_LEVELS = 4    # depth of the cascade


def _cascade(rows):
    """Sum ``rows`` (axis 0) through 4 cascade levels, as ``multi_row_sum`` does."""
    size = rows.shape[0]
    power = max(4, (math.ceil(math.log2(size)) if size > 1 else 0) // _LEVELS)
    step, mask = 1 << power, (1 << power) - 1
    if size < step:  # one level used, from 0: the other three hold zeros (adding one turns -0 into 0)
        return np.add.accumulate(rows, axis=0, dtype=rows.dtype)[-1] + rows.dtype.type(0)
    acc = np.zeros((_LEVELS,) + rows.shape[1:], rows.dtype)
    i = 0
    while i + step <= size:
        acc[0] = _running_sum(acc[0], rows[i:i + step])
        i += step
        for j in range(1, _LEVELS):  # carry up a level, and further while i is a round number
            acc[j] += acc[j - 1]
            acc[j - 1] = 0
            if i & (mask << (j * power)):
                break
    if i < size:
        acc[0] = _running_sum(acc[0], rows[i:])
    return _running_sum(acc[0], acc[1:])


def _running_sum(start, rows):
    """``start + rows[0] + rows[1] + ...``, left to right, rounding after every addition."""
    return np.add.accumulate(np.concatenate((start[None], rows)), axis=0, dtype=rows.dtype)[-1]


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
    """Sum each column of ``x`` (shape (n, columns), contiguous along columns) -> (columns,)."""
    n, columns = x.shape
    lanes = _LANES[x.dtype]
    width = _ILP * lanes if columns >= lanes else _ILP   # columns summed by the plain cascade
    cascaded = columns // width * width
    out = np.empty(columns, x.dtype)
    if cascaded:
        out[:cascaded] = _cascade(x[:, :cascaded])
    if cascaded < columns:
        out[cascaded:] = _row_sum(x[:, cascaded:])
    return out


def torch_sum(a, axis=None, keepdims=False):
    """``np.sum(a, axis, keepdims=keepdims)``, added up in the order PyTorch's CPU kernel uses."""
    a = np.asarray(a)
    if a.dtype not in _LANES or a.size == 0 or a.ndim == 0:
        return np.sum(a, axis=axis, keepdims=keepdims)
    axes = tuple(range(a.ndim)) if axis is None else \
        tuple(sorted(d % a.ndim for d in ((axis,) if isinstance(axis, int) else axis)))
    kept = [n for d, n in enumerate(a.shape) if d not in axes]
    out_shape = tuple(1 if d in axes else n for d, n in enumerate(a.shape)) if keepdims else tuple(kept)
    reduced = math.prod(a.shape[d] for d in axes)
    rest = math.prod(kept)
    c = np.ascontiguousarray(a)
    if rest == 1 or reduced == 1 or axes == tuple(range(a.ndim - len(axes), a.ndim)):
        result = _inner(c.reshape(rest, reduced))          # all, or the trailing dimensions
    elif axes == tuple(range(axes[0], axes[-1] + 1)):   # leading or middle dimensions, per slice
        before = math.prod(a.shape[:axes[0]])
        slices = c.reshape(before, reduced, rest // before)
        result = _outer(slices[0]) if before == 1 else np.stack([_outer(s) for s in slices])
    else:
        return np.add.reduce(a, axis=axes, keepdims=keepdims)
    return result.reshape(out_shape)


# --- the losses' and BatchNorm's sums ------------------------------------------------------------

def nll_sums(x, t, weight, ignore_index):
    """(−Σ w[t_b]·x[b, t_b], Σ w[t_b]) over the rows not ignored, added as PyTorch's kernel adds them:
    a cascade of partial sums, flushed one level up every 16**k rows (so long batches lose little)."""
    dt = x.dtype.type
    levels, n = 8, len(t)
    power = max(4, (int(n - 1).bit_length() if n > 1 else 0) // levels)
    mask = (1 << power) - 1
    losses, weights, ignored = [dt(0)] * levels, [dt(0)] * levels, 0
    for b, c in enumerate(t.tolist()):
        if c == ignore_index:
            ignored += 1
            continue
        if weight is not None:
            losses[0] = dt(losses[0] - x[b, c] * weight[c])
            weights[0] = dt(weights[0] + weight[c])
        else:
            losses[0] = dt(losses[0] - x[b, c])
        for j in range(levels - 1):
            if b & (mask << (j * power)):
                break
            losses[j + 1], weights[j + 1] = dt(losses[j + 1] + losses[j]), dt(weights[j + 1] + weights[j])
            losses[j], weights[j] = dt(0), dt(0)
    total = dt(n - ignored) if weight is None else _sum_in_order(weights, dt)
    return _sum_in_order(losses, dt), total


def _sum_in_order(values, dt):
    total = dt(0)
    for v in values:
        total = dt(total + v)
    return total


def batch_norm_sums(x):
    """(mean, Σ(x − mean)²) per channel, added up as PyTorch's CPU kernel adds them.

    A batch of rows (N, C) takes the "channels last" path: the rows are split into one run per
    thread, each run summed in x's dtype (the squares with fused multiply-adds), and the runs'
    sums added in double. A batch of sequences (N, C, L) is summed per channel in double.
    The last bits of the statistics so depend on PyTorch's thread count (``get_num_threads``).
    """
    n = x.size // x.shape[1]
    if x.ndim == 2 or x.shape[2] == 1:
        runs = _bn_runs(x.reshape(x.shape[0], x.shape[1]))
        total = sum(np.add.accumulate(r, axis=0)[-1].astype(np.float64) for r in runs)
        mean = (total / n).astype(x.dtype)
        squares = np.zeros(x.shape[1], np.float64)
        for r in runs:
            acc = np.zeros(x.shape[1], x.dtype)
            for row in r:
                dx = row - mean
                acc = fma(dx, dx, acc, x.dtype)
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
    """(Σ g, Σ (x − mean)·g) per channel, in x's dtype: per thread for a batch of rows (the products
    fused into the running sum), then the threads' sums added; in double for sequences."""
    if x.ndim == 2 or x.shape[2] == 1:
        rows, grads = x.reshape(x.shape[0], -1), g.reshape(x.shape[0], -1)
        total, dot = np.zeros(x.shape[1], x.dtype), np.zeros(x.shape[1], x.dtype)
        for xr, gr in zip(_bn_runs(rows), _bn_runs(grads)):
            s, p = np.zeros(x.shape[1], x.dtype), np.zeros(x.shape[1], x.dtype)
            for xi, gi in zip(xr, gr):
                s = s + gi
                p = fma(xi - mean, gi, p, x.dtype)
            total, dot = total + s, dot + p
        return total, dot
    axes = (0,) + tuple(range(2, x.ndim))                   # all but the channels
    centred = x.astype(np.float64) - np.reshape(mean.astype(np.float64), (1, -1) + (1,) * (x.ndim - 2))
    return (np.sum(g, axis=axes, dtype=np.float64).astype(x.dtype),
            np.sum(centred * g, axis=axes, dtype=np.float64).astype(x.dtype))
