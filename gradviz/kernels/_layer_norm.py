r"""LayerNorm's statistics, output and gradients, rounded as PyTorch's CPU kernel rounds them.

PyTorch 2.13's kernel (``aten/src/ATen/native/cpu/layer_norm_kernel.cpp``, with
``moments_utils.h``'s ``RowwiseMoments``) normalises each row of the input seen as (M, N), N the
elements of ``normalized_shape``:

* the mean and the biased variance of a row by Welford's algorithm on vectors of :data:`_LANES`
  numbers (each lane its own running mean and sum of squares), chunks of 16 vectors merged in a
  cascade (a binary counter of partial results, so long rows lose little), the last part vector
  by scalar Welford steps, then the lanes merged into it one by one;
* ``rstd = 1/√(var + eps)`` in the dtype, and ``y = (x − mean)·rstd·γ + β``;
* the backward: per row two sums taken a vector at a time (``Σ g·γ·x``, ``Σ g·γ``), then
  ``dx = a·g·γ + b·x + c`` with ``a = rstd``; ``dγ`` and ``dβ`` added up row after row into one
  buffer per thread (rows split between threads as ``parallel_for`` splits them), the buffers then
  added in thread order -- so their last bits depend on the thread count
  (:func:`gradviz.kernels.get_num_threads`).

Which products the compiled kernel fuses into the following addition (a fused multiply-add,
rounded once) is measured against torch 2.13, not read from the source: the compiler decides
(it fuses most of them, but not the running sums of a loop, and it rearranged one expression of
the chunks' merge, :func:`_merge_vectors`).  All numpy, vectorised across the rows: the loops are
over a row's vectors, never over the rows or the elements.

>>> m, v = row_moments(np.array([[1.0, 2.0, 4.0]], np.float32))
>>> m.tolist(), v.tolist()
([2.3333332538604736], [1.5555557012557983])
"""

import functools

import numpy as np

from ._numerics import fma
from ._reduce import _bn_runs, _in_order, _vector_sum

__all__ = ["row_moments", "layer_norm_stats", "layer_norm", "layer_norm_backward", "layer_norm_weight_grad",
           "layer_norm_bias_grad"]

# The numbers of one vector.  LayerNorm's kernel is registered for AVX2 only (REGISTER_DISPATCH,
# not ALSO_REGISTER_AVX512_DISPATCH), so an AVX-512 machine runs it on 8 floats too (measured).
_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}
_CHUNK = 16    # vectors of one Welford chunk (kChunkSize)


def _ceil_log2(m):
    """``utils::CeilLog2``: the cascade's depth for ``m`` chunks (1 for up to 2)."""
    return 1 if m <= 2 else int(m - 1).bit_length()


def _merge_vectors(count, m1_add, m2_add, level):
    """``AddMomentsVec``: the moments of ``count`` more vectors per lane merged into ``level``
    ([vectors, mean, sum of squares]).  Measured: the mean's product is not fused, and the sum of
    squares is computed as ``fma(δ·c, δ·m₀, m₂ + m₂')`` -- not in the order the source writes
    ``m₂ += m₂' + δ·δ·c·m₀``.  (Only a merge whose c is no power of two tells these orders apart:
    the last merge of a row of three or more chunks, 32/39 for 312 floats.)"""
    t = m1_add.dtype.type
    m0 = level[0]
    n = m0 + count
    c = t(0) if n == 0 else t(count) / t(n)
    delta = m1_add - level[1]
    level[1] = level[1] + c * delta
    level[2] = fma(delta * c, delta * t(m0), level[2] + m2_add, m1_add.dtype)
    level[0] = n


def row_moments(rows):
    """(mean, biased variance) of each row of ``rows`` (M, N), as ``RowwiseMoments`` computes them."""
    dt = rows.dtype
    t, w = dt.type, _LANES[dt]
    m_rows, size = rows.shape
    n = size // w
    chunks = -(-n // _CHUNK)
    depth = _ceil_log2(chunks)
    zero = np.zeros((m_rows, w), dt)
    levels = [[0, zero, zero] for _ in range(depth)]
    steps = [t(1) / t(j + 1) for j in range(_CHUNK)]
    for i in range(chunks):
        count = min(_CHUNK, n - i * _CHUNK)
        m1 = m2 = zero
        for j in range(count):      # Welford on whole vectors, both steps fused
            start = (i * _CHUNK + j) * w
            x = rows[:, start:start + w]
            delta = x - m1
            m1 = fma(delta, steps[j], m1, dt)
            m2 = fma(delta, x - m1, m2, dt)
        _merge_vectors(count, m1, m2, levels[0])
        done, j = i + 1, 1
        while j < depth and done & 1 == 0:       # carry up, as a binary counter adds one
            _merge_vectors(levels[j - 1][0], levels[j - 1][1], levels[j - 1][2], levels[j])
            levels[j - 1] = [0, zero, zero]
            done >>= 1
            j += 1
    for j in range(1, depth):
        _merge_vectors(levels[j][0], levels[j][1], levels[j][2], levels[0])
    m0, m1, m2 = 0, np.zeros(m_rows, dt), np.zeros(m_rows, dt)
    for i in range(n * w, size):    # the part vector: scalar Welford steps, not fused
        x = rows[:, i]
        delta = x - m1
        m0 += 1
        m1 = m1 + delta / t(m0)
        m2 = m2 + delta * (x - m1)
    for lane in range(w):           # then the lanes, one by one (AddMoments): both products fused
        total = m0 + n
        c = t(0) if total == 0 else t(n) / t(total)
        delta = levels[0][1][:, lane] - m1
        m1 = fma(c, delta, m1, dt)
        m2 = m2 + fma(delta * delta * c, t(m0), levels[0][2][:, lane], dt)
        m0 = total
    return m1, m2 / t(size)


def _in_float(f):
    """``f`` quiet about inf and nan (a constant row with eps=0: PyTorch says nothing either), and
    on float32 copies of float16 arrays, its results rounded back: PyTorch's half kernel converts
    each vector to two float vectors, in an order this module does not repeat (its results can
    differ in the last bits of the half)."""
    @functools.wraps(f)
    def run(*arrays, **kw):
        dt = next((a.dtype for a in arrays if isinstance(a, np.ndarray)), None)
        if dt is None:     # (recorded tensors under create_graph=True: the engine says it cannot record this)
            raise TypeError(f"{f.__name__} computes on numpy arrays")
        with np.errstate(all="ignore"):
            if dt in _LANES:
                return f(*arrays, **kw)
            up = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in arrays]
            out = f(*up, **kw)
        return tuple(o.astype(dt) for o in out) if isinstance(out, tuple) else out.astype(dt)
    return run


@_in_float
def layer_norm_stats(rows, eps):
    """(mean, rstd) of each row, ``rstd = 1/√(var + eps)`` in the dtype (eps rounded to it)."""
    t = rows.dtype.type
    if rows.size == 0:
        return np.zeros(rows.shape[0], rows.dtype), np.zeros(rows.shape[0], rows.dtype)
    mean, var = row_moments(rows)
    return mean, t(1) / np.sqrt(var + t(eps))


@_in_float
def layer_norm(rows, weight, bias, eps):
    """(y, mean, rstd) of rows (M, N): ``y = (x − mean)·rstd·γ + β`` with ``rstd = 1/√(var + eps)``;
    ``weight`` (γ) and ``bias`` (β) of shape (N,) or None, which takes the kernel's other loop."""
    dt = rows.dtype
    mean, rstd = layer_norm_stats(rows, eps)
    centred = rows - mean[:, None]
    beta = bias if bias is not None else dt.type(0)
    if weight is None:       # the scalar loop: γ = 1 folded away, the product fused into + β
        y = fma(centred, rstd[:, None], beta, dt)
    else:                    # the vector loop: ((x − mean)·rstd)·γ + β, the last two fused
        y = fma(centred * rstd[:, None], weight, beta, dt)
    return y, mean, rstd


@_in_float
def layer_norm_backward(g, rows, mean, rstd, weight):
    """dx for rows (M, N), the gradient ``g`` of y and the forward's mean and rstd, as the kernel
    computes it.  Per row, with ``h = g·γ``: ``ds = Σ h·x`` and ``db = Σ h`` a vector at a time; then
    ``b = (db·mean − ds)·rstd³/N``, ``c = −b·mean − db·rstd/N`` and ``dx = rstd·h + b·x + c``."""
    dt = rows.dtype
    t, w = dt.type, _LANES[dt]
    if rows.size == 0:
        return np.zeros_like(rows)
    if weight is None:
        ds = _vector_sum(g, rows, fused=True, lanes=w)
        db = _vector_sum(g, lanes=w)
        h = rstd[:, None] * g
    else:
        gamma = np.broadcast_to(weight, rows.shape)
        ds = _vector_sum(g * rows, gamma, fused=True, lanes=w)
        db = _vector_sum(g, gamma, fused=True, lanes=w)
        h = rstd[:, None] * g * weight
    scale = t(1) / t(rows.shape[1])
    b = fma(db, mean, -ds, dt) * rstd * rstd * rstd * scale
    c = fma(-b, mean, -(db * rstd * scale), dt)
    return fma(b[:, None], rows, h, dt) + c[:, None]


@_in_float
def layer_norm_weight_grad(g, rows, mean, rstd):
    """dγ = Σ g·(x − mean)·rstd over the rows: each thread adds its run of rows into its buffer
    from 0, one row after another (``buffer += g·(rstd·x − rstd·mean)``, both products fused), the
    buffers then added in thread order."""
    dt = rows.dtype
    total = np.zeros(rows.shape[1], dt)
    for x, gr, mu, r in zip(_bn_runs(rows), _bn_runs(g), _bn_runs(mean), _bn_runs(rstd)):
        acc = np.zeros(rows.shape[1], dt)
        for i in range(len(x)):
            acc = fma(gr[i], fma(r[i], x[i], -r[i] * mu[i], dt), acc, dt)
        total = total + acc
    return total


@_in_float
def layer_norm_bias_grad(g):
    """dβ = Σ g over the rows (M, N): per thread's run of rows from 0, then the runs in thread order."""
    total = np.zeros(g.shape[1], g.dtype)
    for run in _bn_runs(g):
        total = total + _in_order(run)
    return total
