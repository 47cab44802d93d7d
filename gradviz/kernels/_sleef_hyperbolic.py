r"""SLEEF's float32 ``tanhf`` and ``expm1f`` (u10), re-derived in numpy to the bit, for the vector
formulas of PyTorch's activation kernels (``Vectorized<float>::tanh()`` is ``Sleef_tanhf16_u10``,
``expm1()`` is ``Sleef_expm1f16_u10``): gelu(approximate='tanh'), mish, elu/selu/celu.

Both start from SLEEF's ``expk2f``: e^x as a float pair (hi, lo) -- x = q ln 2 + s with ln 2 split in
two, a degree-6 polynomial in s summed in pairs, 2^q put back in two halves -- then tanh y =
(e^y − e^{−y}) / (e^y + e^{−y}) and expm1 x = e^x − 1, in pairs, rounded once at the end.  The pair
operations are SLEEF's ``df.h`` with fused multiply-adds (``ENABLE_FMA_SP``, as its AVX2 and AVX-512
builds), each step here on whole arrays.  The double versions are not re-derived (MKL's in their
place, within 1 ulp: :mod:`gradviz.kernels._activations`).

>>> float(tanh(np.array([0.5], np.float32))[0]), float(expm1(np.array([1e-3], np.float32))[0])
(0.46211716532707214, 0.0010005001677200198)
"""

import numpy as np

from . import _exact, _vml
from ._numerics import fma32

__all__ = ["tanh", "expm1"]

_f = np.float32
_R_LN2 = _f(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U, _L2L = _f(0.693145751953125), _f(1.428606765330187045e-06)
_EXPK2_C = [_f(c) for c in (0.1980960224e-3, 0.1394256484e-2, 0.8333456703e-2, 0.4166637361e-1)]


# --- SLEEF's float pairs (df.h, with fused multiply-adds): (hi, lo) ----------------------------------------

def _add2_ff(x, y):
    """dfadd2_vf2_vf2_vf: pair + number, the sum's error kept whatever their sizes."""
    s = x[0] + y
    v = s - x[0]
    return s, ((x[0] - (s - v)) + (y - v)) + x[1]


def _add2_pp(x, y):
    """dfadd2_vf2_vf2_vf2: pair + pair."""
    s = x[0] + y[0]
    v = s - x[0]
    return s, ((x[0] - (s - v)) + (y[0] - v)) + (x[1] + y[1])


def _add_pp(x, y):
    """dfadd_vf2_vf2_vf2 (|x| >= |y|)."""
    s = x[0] + y[0]
    return s, (((x[0] - s) + y[0]) + x[1]) + y[1]


def _add_np(x, y):
    """dfadd_vf2_vf_vf2: number + pair (|x| >= |y|)."""
    s = x + y[0]
    return s, ((x - s) + y[0]) + y[1]


def _mul_pf(x, y):
    """dfmul_vf2_vf2_vf: pair · number."""
    s = x[0] * y
    return s, fma32(x[1], y, fma32(x[0], y, -s))


def _mul_pp(x, y):
    """dfmul_vf2_vf2_vf2: pair · pair."""
    s = x[0] * y[0]
    return s, fma32(x[0], y[1], fma32(x[1], y[0], fma32(x[0], y[0], -s)))


def _squ(x):
    """dfsqu_vf2_vf2: pair²."""
    s = x[0] * x[0]
    return s, fma32(x[0] + x[0], x[1], fma32(x[0], x[0], -s))


def _rec(d):
    """dfrec_vf2_vf2: 1 / pair."""
    s = _f(1) / d[0]
    return s, s * fma32(-d[1], s, fma32(-d[0], s, _f(1)))


def _div(n, d):
    """dfdiv_vf2_vf2_vf2: pair / pair."""
    t = _f(1) / d[0]
    s = n[0] * t
    u = fma32(t, n[0], -s)
    v = fma32(-d[1], t, fma32(-d[0], t, _f(1)))
    return s, fma32(s, v, fma32(n[1], t, u))


def _ldexp2(d, q):
    """d·2^q in two steps (2^(q>>1), then the rest), as SLEEF's vldexp2: no overflow of 2^q itself."""
    half = q >> 1
    return (d * np.ldexp(_f(1), half).astype(_f)) * np.ldexp(_f(1), q - half).astype(_f)


def _expk2(x):
    """e^x as a float pair (SLEEF's ``expk2f`` of the pair (x, 0))."""
    q = np.rint(x * _R_LN2).astype(np.int32)
    qf = q.astype(_f)
    s = _add2_ff((x, np.zeros_like(x)), qf * -_L2U)
    s = _add2_ff(s, qf * -_L2L)
    u = _EXPK2_C[0]
    for c in _EXPK2_C[1:]:
        u = fma32(u, s[0], c)
    t = _add2_ff(_mul_pf(s, u), _f(0.166666659414234244790680580464))
    t = _add2_ff(_mul_pp(s, t), _f(0.5))
    t = _add2_pp(s, _mul_pp(_squ(s), t))
    t = _add_np(_f(1), t)
    gone = x < -104
    return (np.where(gone, _f(0), _ldexp2(t[0], q)).astype(_f), np.where(gone, _f(0), _ldexp2(t[1], q)).astype(_f))


def _tanh32(x):
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        d = _expk2(ax)
        e = _rec(d)
        d = _div(_add_pp(d, (-e[0], -e[1])), _add_pp(d, e))
        y = d[0] + d[1]
        y = np.where((ax > _f(8.664339742)) | np.isnan(y), _f(1), y).astype(_f)
        y = np.where(np.signbit(x), -y, y).astype(_f)
        return np.where(np.isnan(x), x, y)


def _expm1_32(a):
    with np.errstate(all="ignore"):
        d = _add2_ff(_expk2(a), _f(-1))
        x = (d[0] + d[1]).astype(_f)
        x = np.where(a > _f(88.72283172607421875), _f(np.inf), x)
        x = np.where(a < _f(-16.635532333438687426013570), _f(-1), x)
        x = np.where((a == 0) & np.signbit(a), _f(-0.0), x)
        return np.where(np.isnan(a), a, x).astype(_f)


def tanh(x):
    """tanh x as SLEEF's ``tanhf`` (u10), float32 (float64: MKL's in SLEEF's place, within 1 ulp)."""
    x = np.asarray(x)
    if x.dtype != _f or not _exact.exact(x.size):
        return _vml.tanh(x)
    return _tanh32(x)


def expm1(x):
    """e^x − 1 as SLEEF's ``expm1f`` (u10), float32 (float64: MKL's in SLEEF's place, within 1 ulp)."""
    x = np.asarray(x)
    if x.dtype != _f or not _exact.exact(x.size):
        return _vml.expm1(x)
    return _expm1_32(x)
