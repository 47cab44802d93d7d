"""addcmul, addcdiv and lerp as PyTorch's CPU kernels round them: one fused multiply-add where the
kernel has one (checked against torch bit for bit, float32 and float64, at every length)."""

import numpy as np

from ._numerics import fma

__all__ = ["addcmul", "addcdiv", "lerp"]


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
