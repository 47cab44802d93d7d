r"""SLEEF's vectorised exp, log and log1p, float32 and float64, re-derived in numpy to the bit.

PyTorch's CPU kernels take these from SLEEF (https://sleef.org, public): ``Vectorized<float>::exp()``
is ``Sleef_expf8_u10`` (``..f16..`` with AVX-512), ``Vectorized<double>::exp()`` is
``Sleef_expd4_u10`` (``..d8..``), and so for ``log`` (``_u10``, SLEEF's ``xlog_u1``) and ``log1p``.
sigmoid, softmax, log_softmax and their gradients (:mod:`gradviz.kernels._softmax`) and ``log_sigmoid``
(binary cross entropy with logits) call them.  Each step here is the C code's step on whole arrays
(no loop over elements): the same constants, the same fused multiply-adds (float32: the float64
sum rounded once, :func:`_fma_step`; float64: :func:`gradviz.kernels._numerics.fma64`) and the same
double-float pairs (hi, lo) that carry twice the precision through the few steps that need it.

They were compared with the SLEEF functions inside PyTorch's own library (``libtorch_cpu.so``, AVX2
build), once, bit for bit equal: float32 exp, log and log1p on all 2³² inputs, float64 on 6 million
random, wide-range, all-bit-pattern and special inputs each.  The test suite checks them through
sigmoid, softmax, log_softmax and the losses against torch.

>>> float(exp(np.array([1.0]))[0]), float(log(np.array([2.0], np.float32))[0])
(2.718281828459045, 0.6931471824645996)
"""

import numpy as np

from . import _exact, _vml
from ._numerics import fma32, fma64, two_sum

__all__ = ["exp", "log", "log1p", "df_div"]

_f = np.float32
_d = np.float64


def exp(x, out=None):
    """e^x as SLEEF's ``expf``/``exp`` (u10) computes it, for a float32 or float64 array (``out``:
    an array the result may be written into, ``x`` itself for in place; the result is returned)."""
    x = np.asarray(x)
    if not _exact.exact(x.size):   # above the limit: MKL's (or in double), within 1 ulp (:mod:`._exact`)
        return _vml.exp(x, out)
    return _exp64(x.reshape(-1)).reshape(x.shape) if x.dtype == _d else _exp32(x)


def log(x):
    """ln x as SLEEF's ``logf_u1``/``log_u1`` computes it, for a float32 or float64 array."""
    x = np.asarray(x)
    if not _exact.exact(x.size):   # above the limit: MKL's (or in double), within 1 ulp (:mod:`._exact`)
        return _vml.log(x)
    return _log64(x.reshape(-1)).reshape(x.shape) if x.dtype == _d else _log32(x)


def log1p(x):
    """ln(1 + x) as SLEEF's ``log1pf``/``log1p`` computes it, for a float32 or float64 array."""
    x = np.asarray(x)
    if not _exact.exact(x.size):   # above the limit: MKL's (or in double), within 1 ulp (:mod:`._exact`)
        return _vml.log1p(x)
    return _log1p64(x.reshape(-1)).reshape(x.shape) if x.dtype == _d else _log1p32(x)


# --- float32 ------------------------------------------------------------------------------------

_R_LN2 = _f(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U, _L2L = _f(0.693145751953125), _f(1.428606765330187045e-06)   # ln 2 = L2U + L2L (+ tiny)
_EXP_C = [_f(c) for c in (0.000198527617612853646278381, 0.00139304355252534151077271,
                          0.00833336077630519866943359, 0.0416664853692054748535156,
                          0.166666671633720397949219, 0.5)]


def _fma_step(a, b, c):
    """``a·b + c`` rounded once to float32, for the polynomial steps below: the float64 sum is
    exact there or far from a float32 tie, so the general tie check of ``fma32`` is left out
    (the comparison on all 2³² inputs is what shows it)."""
    p = np.multiply(a, b, dtype=_d)
    if type(p) is np.ndarray and p.ndim and (type(c) is not np.ndarray or not c.ndim or c.shape == p.shape):
        return np.add(p, c, out=p).astype(_f)         # in place: one float64 array, not two
    return np.add(p, c).astype(_f)


def _exp32(d):
    r"""SLEEF ``expf`` (1.0 ulp): :math:`e^d = 2^q e^s` with :math:`q = \mathrm{rint}(d/\ln 2)`.

    :math:`s = d - q \ln 2` is formed with ln 2 split in two (L2U has few bits, so ``q·L2U`` is
    exact), then :math:`e^s ≈ 1 + s + s^2 P(s)` with a degree-5 polynomial P in Horner form, one
    fused multiply-add per coefficient, and :math:`2^q` put into the exponent.  Below −104 the
    result is 0, above 100 it is ∞.
    """
    d = np.asarray(d, _f)
    inside = d.size == 0 or (d.min() >= _f(-104) and d.max() <= _f(88))   # False for nan
    x = d if inside else np.where((d >= _f(-104)) & (d <= _f(100)), d, _f(0))
    qf = np.rint(x * _R_LN2)
    s = _fma_step(qf, -_L2U, x)
    s = _fma_step(qf, -_L2L, s)
    u = _fma_step(s, _EXP_C[0], _EXP_C[1])
    for c in _EXP_C[2:]:
        u = _fma_step(u, s, c)
    u = _f(1) + _fma_step(s * s, u, s)
    if inside:
        return np.ldexp(u, qf.astype(np.int32))
    with np.errstate(over="ignore"):   # e^x beyond float32 is ∞, silently as in PyTorch
        u = np.ldexp(u, qf.astype(np.int32))
    u = np.where(d < _f(-104), _f(0), u)
    u = np.where(d > _f(100), _f(np.inf), u)
    return np.where(np.isnan(d), d, u)


def df_div(nh, nl, dh, dl, fused=fma32):
    """(nh, nl) / (dh, dl), float32 pairs (SLEEF's ``dfdiv``): one division, then the remainder
    corrected with fused multiply-adds (``fused``: ``fma32``, or :func:`_fma_step` where that is
    shown exact, as for the logarithms here).  :mod:`gradviz.kernels._powf` shares it."""
    t = _f(1) / dh
    s = nh * t
    u = fused(t, nh, -s)
    v = fused(-dl, t, fused(-dh, t, _f(1)))
    return s, fused(s, v, fused(nl, t, u))


_LN2_HI, _LN2_LO = _f(0.69314718246459960938), _f(-1.904654323148236017e-09)
_LOG_C = [_f(c) for c in (0.3027294874, 0.3996108174, 0.6666694880)]


def _log32(d):
    r"""SLEEF ``logf_u1`` (1.0 ulp), the vectorised ``log()`` of PyTorch's float32 kernels.

    Write :math:`d = m·2^e` with :math:`m ∈ [0.75, 1.5)`, then :math:`\ln d = e \ln 2 + 2\,
    \mathrm{atanh}\,x` with :math:`x = (m − 1)/(m + 1)` and :math:`2\,\mathrm{atanh}\,x ≈ 2x +
    x^3 t(x^2)`; ``e ln 2``, ``2x`` and their sum are double-float pairs, rounded once at the end.
    """
    d = np.asarray(d, _f)
    inside = d.size == 0 or (d.min() > 0 and d.max() < _f(np.inf))   # False for nan
    safe = d if inside else np.where(np.isfinite(d) & (d > 0), d, _f(1))
    mant, ex = np.frexp(safe)                              # safe = mant·2^ex, mant ∈ [0.5, 1)
    high = mant >= _f(0.75)
    m = np.where(high, mant, mant * _f(2))                 # in [0.75, 1.5)
    e = (ex - 1 + high).astype(_f)
    r = _log_tail32(e, *df_div(*two_sum(_f(-1), m), *two_sum(_f(1), m), fused=_fma_step))
    if inside:
        return r
    r = np.where(d == 0, _f(-np.inf), r)
    r = np.where((d < 0) | np.isnan(d), _f(np.nan), r)
    return np.where(np.isposinf(d), _f(np.inf), r)


def _log_tail32(e, xh, xl):
    """e·ln 2 + 2x + x³·t(x²) for the pair x = (xh, xl), as ``logf_u1`` and ``log1pf`` end."""
    sh = _LN2_HI * e                                       # (ln 2)·e as a pair
    sl = _fma_step(_LN2_LO, e, _fma_step(_LN2_HI, e, -sh))
    x2 = xh * xh
    t = _fma_step(_fma_step(x2, _LOG_C[0], _LOG_C[1]), x2, _LOG_C[2])
    s = sh + xh * _f(2)                                    # (sh, sl) + 2(xh, xl), |sh| ≥ |2xh|
    sl = (((sh - s) + xh * _f(2)) + sl) + xl * _f(2)
    w = (x2 * xh) * t                                      # ... + x³t, then one rounding
    return (s + w) + (((s - (s + w)) + w) + sl)


_LOG1PF_BOUND = _f(float.fromhex("0x1.2ced32p+126"))


def _log1p32(d):
    r"""SLEEF ``log1pf`` (1.0 ulp): as :func:`_log32` for :math:`1 + d = m·2^e`, with
    :math:`m = d·2^{−e} + (2^{−e} − 1)` (one fused step, so the low bits of a small d are kept) and
    :math:`x = m / (2 + m)`; above 10³⁸, ``logf_u1`` of d."""
    d = np.asarray(d, _f)
    with np.errstate(all="ignore"):
        dp1 = d + _f(1)
        small = dp1 < _f(2.0 ** -126)
        dp1 = np.where(small, dp1 * _f(2.0 ** 64), dp1)
        e = _ilogb32(dp1 * _f(1 / 0.75))
        t = (np.int32(127) - e).astype(np.int32) << 23    # 2^-e, put together from its bits
        t = t.view(_f)
        m = d * t + (t - _f(1))                            # a fused step: d·2^-e is exact
        e = np.where(small, e - 64, e).astype(_f)
        sh = m + _f(2)                                     # (2 + m) as a pair
        r = _log_tail32(e, *df_div(m, _f(0), sh, (_f(2) - sh) + m, fused=_fma_step))
        r = np.where(d <= _LOG1PF_BOUND, r, _log32(np.where(d <= _LOG1PF_BOUND, _f(1), d)))
    r = np.where((d < -1) | np.isnan(d), _f(np.nan), r)
    r = np.where(d == -1, _f(-np.inf), r)
    return np.where((d == 0) & np.signbit(d), _f(-0.0), r)


def _ilogb32(x):
    """The unbiased exponent field of float32 ``x`` (SLEEF's ``vilogb2k``: no check for 0, ∞, nan)."""
    return ((np.asarray(x, _f).view(np.int32) >> 23) & 0xFF) - np.int32(127)


# --- float64 ------------------------------------------------------------------------------------

_R_LN2_D = 1.442695040888963407359924681001892137426645954152985934135449406931
_L2U_D = 0.69314718055966295651160180568695068359375   # 41 bits: q·L2U is exact for |q| < 2^12
_L2L_D = 0.28235290563031577122588448175013436025525412068e-12
_EXP_D = (0.2081276378237164457e-8, 0.2511210703042288022e-7, 0.2755762628169491192e-6,
          0.2755723402025388239e-5, 0.2480158687479686264e-4, 0.1984126989855865850e-3,
          0.1388888888914497797e-2, 0.8333333333314938210e-2, 0.4166666666666602598e-1,
          0.1666666666666669072e+0)
_EXP_ODD, _EXP_EVEN = np.array(_EXP_D[0::2])[:, None], np.array(_EXP_D[1::2])[:, None]
_LOG_DBL_MAX = float.fromhex("0x1.62e42fefa39efp+9")


def _exp64(d):
    r"""SLEEF ``exp`` (u10): :math:`e^d = 2^q e^s`, :math:`q = \mathrm{rint}(d/\ln 2)`.

    :math:`s = d − q \ln 2` (ln 2 in two parts), :math:`e^s ≈ 1 + s + s^2/2 + s^3 P(s)` with P of
    degree 9 by Estrin's scheme (:math:`s^2, s^4, s^8`), then three Horner steps; :math:`2^q` is
    multiplied in as two powers of two.  Above ln(DBL_MAX) the result is ∞, below −1000 it is 0.
    """
    d = np.asarray(d, _d)
    inside = d.size == 0 or (d.min() >= -1000 and d.max() <= _LOG_DBL_MAX)   # False for nan
    x = d if inside else np.where((d >= -1000) & (d <= _LOG_DBL_MAX), d, 0.0)
    q = np.rint(x * _R_LN2_D)
    s = x - q * _L2U_D                                     # a fused step: the product is exact
    s = fma64(q, -_L2L_D, s)
    s2 = s * s
    s4 = s2 * s2
    # Estrin: the pairs of each level are independent, so each level is one (stacked) call
    p1 = fma64(s, _EXP_ODD, _EXP_EVEN)                     # c9 s + c8, c7 s + c6, ..., c1 s + c0
    p2 = fma64(s2, p1[1::2], p1[2::2])                     # (c7..c4)(s), (c3..c0)(s)
    u = fma64(s4 * s4, p1[0], fma64(s4, p2[0], p2[1]))
    for k in (0.5, 1.0, 1.0):
        u = fma64(u, s, k)
    q = q.astype(np.int64)
    half = q >> 1
    with np.errstate(all="ignore"):
        u = np.ldexp(np.ldexp(u, half), q - half)
    if inside:
        return u
    u = np.where(d > _LOG_DBL_MAX, np.inf, u)
    u = np.where(d < -1000, 0.0, u)
    return np.where(np.isnan(d), d, u)


_LN2_HI_D, _LN2_LO_D = 0.693147180559945286226764, 2.319046813846299558417771e-17
_LOG_D = (0.1532076988502701353e+0, 0.1525629051003428716e+0, 0.1818605932937785996e+0,
          0.2222214519839380009e+0, 0.2857142932794299317e+0, 0.3999999999635251990e+0,
          0.6666666666667333541e+0)
_LOG_ODD, _LOG_EVEN = np.array(_LOG_D[1::2])[:, None], np.array(_LOG_D[2::2])[:, None]


def _rows(*arrays):
    """The arrays (numbers too) broadcast together and stacked: independent steps in one call."""
    return np.stack(np.broadcast_arrays(*arrays))


def _dd_div(nh, nl, dh, dl):
    """(nh, nl) / (dh, dl) as SLEEF's ``dddiv`` with fused steps."""
    t = 1.0 / dh
    s = nh * t
    u, v = fma64(_rows(t, -dh), _rows(nh, t), _rows(-s, 1.0))
    v, w = fma64(_rows(-dl, nl), t, _rows(v, u))  # v = 1 − (dh + dl)t, w = nl t + (nh t − s)
    return s, fma64(s, v, w)


def _log_tail64(e, xh, xl):
    r"""e·ln 2 + 2x + x³·t(x²) for the pair x = (xh, xl), as ``log_u1`` and ``log1p`` end:
    t of degree 6 in x² by Estrin's scheme, ``e ln 2`` and the sums as double-double pairs."""
    x2 = xh * xh
    x4 = x2 * x2
    p1 = fma64(x2, _LOG_ODD, _LOG_EVEN)                    # c5 x² + c4, c3 x² + c2, c1 x² + c0
    p2 = fma64(x4, _rows(_LOG_D[0], p1[1]), p1[0::2])
    t = fma64(x4 * x4, p2[0], p2[1])
    sh = _LN2_HI_D * e
    sl = fma64(_LN2_LO_D, e, fma64(_LN2_HI_D, e, -sh))
    s = sh + xh * 2                                        # (sh, sl) + 2(xh, xl), |sh| ≥ |2xh|
    sl = (((sh - s) + xh * 2) + sl) + xl * 2
    w = (x2 * xh) * t
    return (s + w) + (((s - (s + w)) + w) + sl)


def _ilogb64(x):
    """The unbiased exponent field of float64 ``x`` (``vilogb2k``: no check for 0, ∞, nan)."""
    return ((np.asarray(x, _d).view(np.int64) >> 52) & 0x7FF) - 0x3FF


def _scaled(x, e):
    """x·2^−e by adding −e to the exponent bits (``vldexp3``; x and the result normal)."""
    return (np.asarray(x, _d).view(np.int64) - (e << 52)).view(_d)


def _log64(d):
    r"""SLEEF ``log_u1`` (1.0 ulp), what ``Vectorized<double>::log()`` calls.

    :math:`d = m·2^e` with :math:`m ∈ [0.75, 1.5)` (e from the exponent of ``d·(1/0.75)``),
    :math:`x = (m − 1)/(m + 1)` as a double-double pair, then :func:`_log_tail64`.  Subnormal d
    are scaled by 2⁶⁴ first.
    """
    d = np.asarray(d, _d)
    with np.errstate(all="ignore"):
        tiny = d < 2.0 ** -1022
        ds = np.where(tiny, d * 2.0 ** 64, d)
        e = _ilogb64(ds * (1.0 / 0.75))
        m = _scaled(ds, e)
        e = np.where(tiny, e - 64, e).astype(_d)
        r = _log_tail64(e, *_dd_div(*two_sum(-1.0, m), *two_sum(1.0, m)))
    r = np.where(np.isposinf(ds), np.inf, r)
    r = np.where((ds < 0) | np.isnan(ds), np.nan, r)
    return np.where(ds == 0, -np.inf, r)


_LOG1P_BOUND = float.fromhex("0x1.c7b1f3cac7433p+1019")


def _log1p64(d):
    r"""SLEEF ``log1p`` (1.0 ulp): as :func:`_log64` for :math:`1 + d = m·2^e`, with
    :math:`m = d·2^{−e} + (2^{−e} − 1)` in one fused step and :math:`x = m / (2 + m)`; above
    10³⁰⁷, ``log_u1`` of d."""
    d = np.asarray(d, _d)
    with np.errstate(all="ignore"):
        dp1 = d + 1.0
        small = dp1 < 2.0 ** -1022
        dp1 = np.where(small, dp1 * 2.0 ** 64, dp1)
        e = _ilogb64(dp1 * (1.0 / 0.75))
        t = _scaled(1.0, e)
        m = d * t + (t - 1.0)                              # a fused step: d·2^-e is exact
        e = np.where(small, e - 64, e).astype(_d)
        sh = m + 2.0                                       # (2 + m) as a pair
        r = _log_tail64(e, *_dd_div(m, 0.0, sh, (2.0 - sh) + m))
        core = d <= _LOG1P_BOUND
        if not core.all():
            r = np.where(core, r, _log64(np.where(core, 1.0, d)))
    r = np.where((d < -1) | np.isnan(d), np.nan, r)
    r = np.where(d == -1, -np.inf, r)
    return np.where((d == 0) & np.signbit(d), -0.0, r)
