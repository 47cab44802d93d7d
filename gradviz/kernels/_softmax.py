r"""sigmoid, softmax and log_softmax, and their gradients, rounded step by step as PyTorch's CPU kernels.

Floating-point results depend on the order of the roundings, not only on the formula.  This module
repeats, on whole numpy arrays (no loop over elements), the steps PyTorch 2.13's CPU kernels take on an
x86-64 machine with AVX-512 or AVX2 (the vector width is the machine's, :data:`gradviz.kernels._threads.LANES`):

* :func:`sigmoid` -- ``1 / (1 + e^{-x})``, float32 and float64: SLEEF's vectorised exp
  (:mod:`gradviz.kernels._sleef`) on pairs of whole vectors, the C library's on the leftovers
  (:mod:`gradviz.kernels._libm`);
* :func:`softmax`, :func:`log_softmax` and their backward passes, float32 and float64 -- SLEEF's exp
  and log, the vector-lane sums and the fused steps of PyTorch's kernels, along the last dimension
  or (another kernel) across the inner dimensions.

Where PyTorch's kernels cut the work by thread (softmax across the inner dimensions, float32
softmax's gradient, sigmoid over 32,768 elements), the last bits depend on the thread count
(:mod:`gradviz.kernels._threads`).
"""

import math

import numpy as np

from . import _exact, _libm, _mkl, _sleef, _vml
from ._reduce import _in_order, fused_running_sum, in_order
from ._numerics import fma32, fma64
from ._threads import _GRAIN, LANES, _chunk, _shares, _vector, get_num_threads

__all__ = ["sigmoid", "softmax", "log_softmax", "softmax_backward", "log_softmax_backward"]

_f = np.float32
_d = np.float64
_FOLDS = tuple(2 ** k for k in reversed(range(LANES.bit_length() - 1)))   # 16 lanes: ⊕8, ⊕4, ⊕2, ⊕1
_EXACT = (np.dtype(_f), np.dtype(_d))   # the dtypes whose kernels are followed step by step
_LONG_ROW = 128                         # elements: rows this long, in arrays this large, are walked one inner
_LARGE = 2 ** 14                        # loop per row (:func:`_per_row`; below, the 2 µs of np.errstate would show)


def _per_row(ufunc, x, column, out=None):
    """``ufunc(x, column)`` for rows ``x`` (rows, n) and one number per row ``column`` (rows, 1).

    numpy (2.3 and later) would copy the column into its 8,192-element buffer, each number repeated
    along its row, so that one inner loop covers many rows: for long rows that copy is a third of
    the time.  A smaller buffer (scoped by ``np.errstate``, as ``np.setbufsize`` documents) makes
    numpy run one inner loop per row with the column's number as a scalar instead.  Elementwise, so
    the bits are the same either way."""
    if x.shape[-1] < _LONG_ROW or x.size < _LARGE:
        return ufunc(x, column, out=out)
    with np.errstate():
        np.setbufsize(16)
        return ufunc(x, column, out=out)


def _fma(a, b, c):
    """``a·b + c`` rounded once in the dtype of ``a`` (float32 or float64)."""
    return fma32(a, b, c) if a.dtype == _f else fma64(a, b, c)


def sigmoid(a):
    r"""σ(x) = 1 / (1 + e^{−x}), rounded after each of the three steps as PyTorch's kernel does.

    The kernel runs pairs of whole vectors (2 × :data:`LANES` floats, or 2 × LANES/2 doubles)
    through SLEEF's exp and finishes the elements left over with the C library's ``expf``/``exp``;
    both are repeated here, by position in the flattened (C-ordered) tensor, in each thread's range
    when more than 32,768 elements are shared between threads.
    """
    a = np.asarray(a)
    if a.dtype not in _EXACT:
        with np.errstate(all="ignore"):
            return 1 / (1 + np.exp(-a))
    flat = a.reshape(-1)
    step = 2 * _vector(a.dtype)
    zero, one = a.dtype.type(0), a.dtype.type(1)
    size = _chunk(flat.size, _GRAIN)       # each thread's range (one range when not shared), cut the same way
    ranges = [(begin, min(flat.size, begin + size)) for begin in range(0, flat.size, size)]
    cuts = [begin + (end - begin) // step * step for begin, end in ranges]
    # SLEEF's exp up to the exact limit, counted over every vector of the call (:mod:`._exact`)
    exp = _sleef.exp if _exact.exact(sum(c - b for (b, _), c in zip(ranges, cuts))) else _vml.exp
    e = np.subtract(zero, flat)            # e^{-x} made in this one array, range by range
    for (begin, end), cut in zip(ranges, cuts):
        head = e[begin:cut]
        exps = exp(head, out=head)         # (in place where it can)
        if not np.may_share_memory(exps, head):
            head[...] = exps
        e[cut:end] = _libm.exp(-flat[cut:end])
    with np.errstate(all="ignore"):
        np.add(one, e, out=e)
        return np.divide(one, e, out=e).reshape(a.shape)


# --- softmax and log_softmax -------------------------------------------------------------------

def _lanes_sum(x):
    r"""Sum each row of ``x`` (rows, n) as ATen's ``vec::reduce_all`` does, a vector
    (:func:`_vector`: 16 or 8 floats, 8 or 4 doubles) at a time.

    Rows shorter than a vector are added left to right.  Longer rows: lane i adds elements i, i+L,
    i+2L... (the leftover part vector only into its own lanes), then the lanes are added up
    (:func:`_fold`).
    """
    rows, n = x.shape
    lanes = _vector(x.dtype)
    if n < lanes:
        return np.add.accumulate(x, axis=1)[:, -1] if n else np.zeros(rows, x.dtype)
    full = n // lanes * lanes
    acc = in_order(x[:, :full].reshape(rows, -1, lanes), 1)
    if full < n:
        acc[:, :n - full] += x[:, full:]
    return _fold(acc)


def _fold(acc):
    """The lanes of each row of ``acc`` added up as ``vec::reduce_all`` does: floats in halves
    (:math:`v_i ← v_i + v_{i⊕L/2}`, ..., then ⊕1, by shuffles), doubles one after the other
    (ATen has no shuffle version for them)."""
    if acc.dtype != _f:
        return np.add.accumulate(acc, axis=1)[:, -1]
    for step in _FOLDS:     # lane i < step gets v_i + v_{i⊕step} = v_i + v_{i+step}: the upper lanes
        acc = acc[:, :step] + acc[:, step:2 * step]     # (their mirror images) are no longer needed
    return acc[:, 0]


def _across(shape, dim):
    """Is ``dim`` not the last dimension (PyTorch's other kernel, even when only dimensions of one
    element follow)?"""
    return dim != len(shape) - 1


def _by_rows(f, dim, *arrays):
    """Apply ``f`` to 2-D rows along ``dim`` (moved last) of same-shaped arrays; axes put back."""
    moved = [np.moveaxis(a, dim, -1) for a in arrays]
    shape = moved[0].shape
    out = f(*(np.ascontiguousarray(a).reshape(-1, shape[-1]) for a in moved))
    return np.moveaxis(out.reshape(shape), -1, dim)


def _exp_columns(x, dim, split=False, out=None):
    """e^x as the kernels along a dimension that is not the last compute it: they run across the
    inner dimensions (the columns), SLEEF's exp on whole vectors of columns and the C library's
    on the columns left over.  ``split``: softmax's kernel, whose threads each take a range of
    (outer, column) positions, and run vectors only inside their range (:func:`_vectorised`).
    ``out``: ``x`` itself when it may be overwritten (the exp is then taken in place)."""
    inner = math.prod(x.shape[dim + 1:])
    flat = x.reshape(-1, x.shape[dim], inner)
    step = _vector(x.dtype)
    if split:
        vec = _vectorised(flat.shape[0], inner, step)
    else:
        vec = np.broadcast_to(np.arange(inner) < inner - inner % step, (flat.shape[0], inner))
    outer_at, column_at = np.nonzero(~vec)      # the columns left to the C library, (outer, column) pairs
    rest = _libm.exp(flat[outer_at, :, column_at]) if len(outer_at) else None
    e = _sleef.exp(flat, out=flat if out is x else None)    # every value, the vectors' kept
    if rest is not None:
        e[outer_at, :, column_at] = rest
    return e.reshape(x.shape)


def _vectorised(outer, inner, step):
    """(outer, inner) booleans: which positions softmax's kernel across the inner dimensions runs in
    vectors.  Each thread walks its range of the outer × inner positions, a vector at a time while
    one fits both in the row and in its range, then one by one to the end of the row (or range)."""
    p = np.arange(outer * inner)
    start, end = _shares(outer * inner)
    row = p // inner * inner
    first = np.maximum(row, start)
    return ((p - first) < (np.minimum(row + inner, end) - first) // step * step).reshape(outer, inner)


def _down(x, dim):
    """Σ along ``dim`` from its first element down, one rounding per addition (kept as a dim of 1),
    as the kernels across the inner dimensions add."""
    return np.expand_dims(_in_order(x, dim), dim)


def _fma_down(g, y, dim):
    """Σ_j g_j·y_j along ``dim`` from 0, one fused multiply-add per step (kept as a dim of 1)."""
    return np.expand_dims(fused_running_sum(np.moveaxis(g, dim, 0), np.moveaxis(y, dim, 0)), dim)


def softmax(a, dim):
    r"""softmax(x)_i = e^{x_i − max} · (1 / Σ_j e^{x_j − max}): PyTorch's kernel, with
    SLEEF's exp, the vector-lane sum and one reciprocal multiplied in.

    Along a dimension that is not the last, PyTorch vectorises across the inner dimensions instead
    (:func:`_exp_columns`, cut by thread), sums down ``dim`` and divides each value by the sum.
    """
    a = np.asarray(a)
    if a.dtype not in _EXACT:
        e = np.exp(a - np.max(a, axis=dim, keepdims=True))
        return e / np.sum(e, axis=dim, keepdims=True)
    dim %= a.ndim
    if _across(a.shape, dim):
        with np.errstate(all="ignore"):
            shifted = a - a.max(axis=dim, keepdims=True)
            e = _exp_columns(shifted, dim, split=True, out=shifted)
            return np.divide(e, _down(e, dim), out=e)      # (e is ours)

    def rows(x):
        shifted = _per_row(np.subtract, x, x.max(axis=1, keepdims=True))
        e = _sleef.exp(shifted, out=shifted)     # (in place where it can: shifted is ours)
        return _per_row(np.multiply, e, (x.dtype.type(1) / _lanes_sum(e))[:, None], out=e)   # e is ours
    return _by_rows(rows, dim, a)


def log_softmax(a, dim):
    r"""log softmax(x)_i = (x_i − max) − ln Σ_j e^{x_j − max}: two subtractions, SLEEF's exp and log
    (the sum by vector lanes, or down ``dim`` when that is not the last, as :func:`softmax`)."""
    a = np.asarray(a)
    if a.dtype not in _EXACT:
        shifted = a - np.max(a, axis=dim, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))
    dim %= a.ndim
    if _across(a.shape, dim):
        with np.errstate(all="ignore"):
            shifted = a - a.max(axis=dim, keepdims=True)
            return shifted - _sleef.log(_down(_exp_columns(shifted, dim), dim))

    def rows(x):
        shifted = _per_row(np.subtract, x, x.max(axis=1, keepdims=True))
        logs = _sleef.log(_lanes_sum(_sleef.exp(shifted)))[:, None]
        return _per_row(np.subtract, shifted, logs, out=shifted)
    return _by_rows(rows, dim, a)


def _lanes_dot(g, y):
    """Σ_j g_j·y_j per row, as PyTorch's softmax backward adds it up (``map2_reduce_all``):
    rounded products in whole vectors, then the leftover part vector, its products fused into the
    sums where the compiler contracted them (floats, when the kernel runs on one thread or for one
    row; not in its multi-thread copy, nor for doubles: measured), then the lanes added up as in
    :func:`_lanes_sum`; rows shorter than a vector left to right."""
    rows, n = g.shape
    lanes = _vector(g.dtype)
    if n < lanes:
        return _lanes_sum(g * y)
    full = n // lanes * lanes
    products = g * y        # (whole rows: one pass over contiguous arrays, the vectors' part then a view)
    acc = in_order(products[:, :full].reshape(rows, -1, lanes), 1)
    if full < n:
        if g.dtype == _f and (rows == 1 or get_num_threads() == 1):
            acc[:, :n - full] = fma32(g[:, full:], y[:, full:], acc[:, :n - full])
        else:
            acc[:, :n - full] += products[:, full:]
    return _fold(acc)


def softmax_backward(g, y, dim):
    r"""∂softmax applied to g: :math:`(g_i − Σ_j g_j y_j)\,y_i`, the sum as PyTorch adds it."""
    g, y = np.asarray(g), np.asarray(y)
    if y.dtype not in _EXACT or g.dtype != y.dtype:
        return y * (g - np.sum(g * y, axis=dim, keepdims=True))
    dim %= y.ndim
    if _across(y.shape, dim):
        scaled = np.subtract(g, _fma_down(g, y, dim))
        return np.multiply(scaled, y, out=scaled)
    def rows(g2, y2):
        if g2.size and (g2[0] == 1).all() and (g2 == 1).all():
            # g of ones (softmax's usual seed): each product 1·y_j is y_j exactly, so Σ_j g_j y_j is
            # y's lane sum, and g_i − Σ is one number a row: one pass instead of three
            return _per_row(np.multiply, y2, (g2.dtype.type(1) - _lanes_sum(y2))[:, None])
        scaled = _per_row(np.subtract, g2, _lanes_dot(g2, y2)[:, None])
        return np.multiply(scaled, y2, out=scaled)
    return _by_rows(rows, dim, g, y)


def log_softmax_backward(g, y, dim):
    r"""∂log_softmax applied to g: :math:`g_i − e^{y_i} Σ_j g_j`, one fused step, SLEEF's exp."""
    g, y = np.asarray(g), np.asarray(y)
    if y.dtype not in _EXACT or g.dtype != y.dtype:
        return g - np.exp(y) * np.sum(g, axis=dim, keepdims=True)
    dim %= y.ndim
    if _across(y.shape, dim):
        e = _exp_columns(y, dim)
        return _fma(e, np.broadcast_to(-_down(g, dim), y.shape), g)     # (−e)·Σg = e·(−Σg): the sums negated
    return _by_rows(_log_softmax_backward_rows, dim, g, y)


def _log_softmax_backward_rows(g, y):
    """g − e^y·Σg for rows (rows, n), each element one fused multiply-add: MKL's batched axpy (the
    same single rounding: ``e^y·(−Σg) + g``, one group per row, on a copy of g; one axpy where every
    row's Σg is one number, as for g of ones: 0.68 -> 0.34 ms for 1000x1000), else numpy's
    :func:`gradviz.kernels._numerics.fma32`/``fma64``; rows whose Σg is 0, which BLAS skips, by numpy."""
    e = np.ascontiguousarray(_sleef.exp(y))
    total = _lanes_sum(g)
    out = np.array(g, order="C")
    same = total.size and (total == total[0]).all()     # (g of ones: every row's Σg one number, one axpy)
    if not (same and _mkl.axpy(-total[0], e, out)) and not _mkl.axpy_rows(-total, e, out):
        return _fma(e, -total[:, None], g)
    zero = total == 0
    if zero.any():
        out[zero] = _fma(-e[zero], total[zero, None], g[zero])
    return out
