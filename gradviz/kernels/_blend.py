"""addcmul, addcdiv and lerp as PyTorch's CPU kernels round them: one fused multiply-add where the
kernel has one (checked against torch bit for bit, float32 and float64, at every length)."""

import numpy as np

from ._numerics import fma
from ._threads import _GRAIN, _chunk, _vector

__all__ = ["addcmul", "addcdiv", "lerp", "clamp"]


def addcmul(a, t1, t2, value=1):
    """a + value·t1·t2: (value·t1) times t2 plus a, rounded once (integers: value made whole, as PyTorch)."""
    dt = np.result_type(a, t1, t2)
    v = dt.type(value)
    if dt.kind != "f":
        return np.asarray(a + v * t1 * t2, dt)
    return np.asarray(fma(t2, t1 if value == 1 else v * t1, a, dt), dt)


def addcdiv(a, t1, t2, value=1):
    """a + value·t1/t2: (value·t1) / t2, then added (a division is not fused)."""
    dt = np.result_type(a, t1, t2)
    return np.asarray(a + (dt.type(value) * t1) / t2, dt)


def lerp(a, end, weight):
    """a + w·(end − a), one fused multiply-add from whichever end is nearer (|w| < 0.5: from a)."""
    dt = np.result_type(a, end)
    w = np.asarray(weight, dt)
    small = np.abs(w) < 0.5
    if w.ndim == 0:
        return np.asarray(fma(end - a, w, a, dt) if small else fma(end - a, w - dt.type(1), end, dt), dt)
    d = end - a
    return np.asarray(np.where(small, fma(d, w, a, dt), fma(d, w - dt.type(1), end, dt)), dt)


def clamp(a, lo, hi):
    """min(max(a, lo), hi) with tensor bounds, nan wherever one of the three is nan; where they tie
    (0 and −0), the vector loop keeps the bound (``_mm256_max_ps``), the scalar one ``a`` (``std::max``)."""
    shape = np.broadcast_shapes(a.shape, lo.shape, hi.shape)
    a, lo, hi = (np.broadcast_to(x, shape) for x in (a, lo, hi))
    with np.errstate(invalid="ignore"):
        vector = np.where(a > lo, a, lo)
        vector = np.where(vector < hi, vector, hi)
        scalar = np.where(a < lo, lo, a)
        scalar = np.where(hi < scalar, hi, scalar)
    # a bound not given (clamp(x, min=t), clamp_min) comes as one infinite number: no operand of PyTorch's loop
    given = [x for x in (a, lo, hi) if not (x.ndim and not any(x.strides) or x.ndim == 0) or np.isfinite(x.flat[0])]
    out = np.where(_vectorised(shape, [x.strides for x in given], a.dtype), vector, scalar)
    out[np.isnan(a) | np.isnan(lo) | np.isnan(hi)] = np.nan
    return out


def _vectorised(shape, strides, dtype):
    """Which elements PyTorch's elementwise loop computes with vectors: in each row it runs (the whole
    tensor when every input is whole or one number, else the last dim), the first whole vectors' worth
    (of LANES floats, LANES/2 doubles: as measured against torch) -- when every input is contiguous
    along it, or one of them is a single number; the rest one number at a time."""
    n = int(np.prod(shape))
    mask = np.zeros(n, bool)
    if n == 0 or dtype.kind != "f":
        return mask.reshape(shape)
    step = _vector(dtype)
    whole = [all(s == 0 for s in st) for st in strides]          # a single number, broadcast
    full = [st == np.zeros(shape, dtype).strides for st in strides]
    if all(w or f for w, f in zip(whole, full)):
        if sum(whole) > 1:
            return mask.reshape(shape)
        size = _chunk(n, _GRAIN)
        for begin in range(0, n, size):
            end = min(n, begin + size)
            mask[begin:begin + (end - begin) // step * step] = True
        return mask.reshape(shape)
    row = shape[-1]
    inner = [st[-1] for st in strides]
    if sum(s == 0 for s in inner) > 1 or any(s not in (0, dtype.itemsize) for s in inner):
        return mask.reshape(shape)
    mask = mask.reshape(-1, row)
    mask[:, :row // step * step] = True
    return mask.reshape(shape)
