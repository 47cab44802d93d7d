"""Floating-point building blocks of PyTorch's CPU kernels, so gradviz rounds where they round.

``fma(a, b, c)`` is ``a * b + c`` rounded once, as a compiled kernel's fused multiply-add
computes it: ``arange``, ``linspace``, ``rand(low, high)`` and ``add(alpha=)`` use it.

>>> float(fma(0.1, 3.0, -0.3, np.float64)), 0.1 * 3.0 - 0.3    # one rounding, or two
(2.7755575615628914e-17, 5.551115123125783e-17)
"""

import numpy as np

__all__ = ["fma"]


def fma(a, b, c, np_dtype):
    """``a * b + c`` rounded once, as the compiled kernels' fused multiply-add does."""
    if np.dtype(np_dtype) == np.float32:  # the float32 product is exact in double
        return (np.asarray(a, np.float64) * np.float64(b) + np.float64(c)).astype(np.float32)
    a, b = np.asarray(a, np.float64), np.float64(b)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl   # p + err == a * b exactly (Dekker)
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)                         # s + t == p + c exactly (Knuth)
    return s + (t + err)


def _split(x):
    """``x`` as a high half and a low half of 26 bits each, whose products are exact (Veltkamp)."""
    t = 134217729.0 * x   # 2**27 + 1
    hi = t - (t - x)
    return hi, x - hi
