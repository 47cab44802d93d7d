r"""float32 ``x ** y`` as PyTorch's CPU ``pow`` kernel computes it, so the last bit agrees.

For an exponent other than 0, ±1, 2, 3, −2 and ±0.5 (those are multiplications, a reciprocal or a
square root), PyTorch 2.13's kernel runs whole pairs of vectors through SLEEF's vectorised
``powf`` (``Sleef_powf8_u10``, within 1 ulp) and the elements left over, fewer than two vectors,
through the C library's ``pow`` in double, rounded once.  :func:`sleef_powf` re-derives SLEEF's
algorithm in numpy -- the same steps, the same fused multiply-adds, whole arrays at a time:

.. math::  x^y = \exp(y \ln|x|),

with :math:`\ln|x|` and the product by :math:`y` carried as double-float pairs (a float and what
its rounding dropped), the exponential from a degree-5 polynomial on the reduced argument, and
the signs, zeros, infinities and nans of C's ``pow`` put in afterwards.  The pair arithmetic is
SLEEF's ``df.h`` with fused multiply-adds (its AVX2 and AVX-512 builds agree on these steps).

A tensor exponent (``x ** b``, ``2 ** x``) goes through the same powf where PyTorch's loop is
vectorised and the C library's ``powf`` elsewhere (:func:`pow_tensor_kernel`).  Not reproduced yet:
a broadcast whose innermost loop is short and strided, e.g. ``x.unsqueeze(-1).pow(tensor([1., 2., 3.]))``
on 2000 values, where PyTorch's loop order differs and 99.9% of results agree (1 ulp apart).
float64 powers are pow in double (PyTorch: SLEEF's double ``pow``, within 1 ulp of it).

>>> import numpy as np
>>> float(sleef_powf(np.float32(2), np.float32(10)))
1024.0
"""

import numpy as np

from . import _exact, _libm, _vml
from ._numerics import fma32, two_sum
from ._sleef import _L2L, _L2U, _LN2_HI, _LN2_LO, _R_LN2, _ilogb32, df_div
from ._threads import LANES

__all__ = ["sleef_powf", "pow_kernel", "pow_tensor_kernel", "power", "powers"]

_f = np.float32
_C_HI, _C_LO = _f(0.66666662693023681640625), _f(3.69183861259614332084311e-09)


# --- double-float pairs (h, l): h + l carries twice a float's precision --------------------------

def _add2(xh, xl, yh, yl):
    """(x) + (y) for any magnitudes (``dfadd2``)."""
    s = xh + yh
    v = s - xh
    return s, ((xh - (s - v)) + (yh - v)) + (xl + yl)


def _add(xh, xl, yh, yl):
    """(x) + (y) when |x| ≥ |y| (``dfadd``)."""
    s = xh + yh
    return s, (((xh - s) + yh) + xl) + yl


def _mul(xh, xl, yh, yl):
    """(x)·(y), the high product's error recovered by a fused multiply-add (``dfmul``)."""
    s = xh * yh
    return s, fma32(xh, yl, fma32(xl, yh, fma32(xh, yh, -s)))


def _mul1(xh, xl, y):
    """(x)·y for a float y."""
    s = xh * y
    return s, fma32(xl, y, fma32(xh, y, -s))


def _square(xh, xl):
    s = xh * xh
    return s, fma32(xh + xh, xl, fma32(xh, xh, -s))


# --- the two halves of SLEEF's powf ------------------------------------------------------------

def _log_pair(d):
    r"""ln d for d > 0 as a pair (SLEEF ``logkf``): :math:`d = m·2^e`, :math:`m ∈ [0.75, 1.5)`,
    :math:`\ln d = e \ln 2 + 2\,\mathrm{atanh}\,x` with :math:`x = (m − 1)/(m + 1)`."""
    tiny = d < _f(np.finfo(_f).tiny)
    d = np.where(tiny, d * _f(2.0 ** 64), d)
    e = _ilogb32(d * _f(1 / 0.75))
    m = (d.view(np.int32) - (e << 23)).view(_f)
    e = np.where(tiny, e - 64, e).astype(_f)
    xh, xl = df_div(*two_sum(_f(-1), m), *two_sum(_f(1), m))
    x2h, x2l = _square(xh, xl)
    t = fma32(fma32(_f(0.240320354700088500976562), x2h, _f(0.285112679004669189453125)),
             x2h, _f(0.400007992982864379882812))
    sh, sl = _mul1(_LN2_HI, _LN2_LO, e)
    sh, sl = _add(sh, sl, xh * _f(2), xl * _f(2))
    x3h, x3l = _mul(x2h, x2l, xh, xl)
    ph, pl = _add2(*_mul1(x2h, x2l, t), _C_HI, _C_LO)
    return _add(sh, sl, *_mul(x3h, x3l, ph, pl))


def _exp_pair(dh, dl):
    r"""e^{(dh, dl)} rounded to a float (SLEEF ``expkf``): :math:`2^q e^s` with
    :math:`q = \mathrm{rint}(d / \ln 2)` and :math:`e^s ≈ 1 + s + s^2 u(s)`."""
    q = np.rint((dh + dl) * _R_LN2)
    qi = q.astype(np.int32)
    sh, sl = _add2(dh, dl, q * -_L2U, _f(0))
    sh, sl = _add2(sh, sl, q * -_L2L, _f(0))
    s = sh + sl
    sh, sl = s, (sh - s) + sl
    u = _f(0.00136324646882712841033936)
    for c in (0.00836596917361021041870117, 0.0416710823774337768554688, 0.166665524244308471679688,
              0.499999850988388061523438):
        u = fma32(u, sh, _f(c))
    th, tl = _add(sh, sl, *_mul1(*_square(sh, sl), u))
    s = _f(1) + th
    th, tl = s, ((_f(1) - s) + th) + tl
    r = np.ldexp(th + tl, qi).astype(_f)
    return np.where(dh < _f(-104), _f(0), r)


def sleef_powf(x, y):
    """SLEEF ``powf_u10`` of float32 arrays (broadcast), C's special cases included."""
    x, y = np.broadcast_arrays(np.asarray(x, _f), np.asarray(y, _f))
    if not _exact.exact(x.size):   # above the limit: pow in double rounded once, within 1 ulp (:mod:`._exact`)
        with np.errstate(all="ignore"):
            return np.power(x.astype(np.float64), y.astype(np.float64)).astype(_f)
    with np.errstate(all="ignore"):
        ay = np.abs(y)
        y_int = (np.trunc(y) == y) | (ay > _f(1 << 24))
        y_odd = y_int & (ay < _f(1 << 24)) & (np.fmod(np.where(y_int, y, 0), 2) != 0)
        ax = np.abs(x)
        lh, ll = _log_pair(np.where(ax > 0, ax, _f(1)))
        dh, dl = _mul1(lh, ll, y)
        r = _exp_pair(dh, dl)
        r = np.where(np.isnan(r) | (dh > _f(88.72283172607421875)), _f(np.inf), r)   # SLEEF's overflow test
        r = r * np.where(x > 0, _f(1), np.where(y_int, np.where(y_odd, _f(-1), _f(1)), _f(np.nan)))
        efx = np.where(np.signbit(y), _f(1) - ax, ax - _f(1))         # |x| − 1, its sign times y's
        r = np.where(np.isinf(y), np.where(efx < 0, _f(0), np.where(efx == 0, _f(1), _f(np.inf))), r)
        edge = np.where(np.signbit(y) ^ (x == 0), _f(0), _f(np.inf))
        signed = np.signbit(np.where(y_odd, x, _f(1)))                # the sign of x, for an odd y
        r = np.where(np.isinf(x) | (x == 0), np.where(signed, -edge, edge), r)
        r = np.where(np.isnan(x) | np.isnan(y), _f(np.nan), r)
        return np.where((y == 0) | (x == 1), _f(1), r).astype(_f)


def pow_kernel(a, exponent, lanes):
    """PyTorch's float32 kernel for ``a ** exponent`` (a number): pairs of vectors of ``lanes``
    floats through SLEEF's powf, the rest (in C order) through pow in double, rounded once."""
    flat = np.ascontiguousarray(a).reshape(-1)
    cut = flat.size - flat.size % (2 * lanes)
    with np.errstate(all="ignore"):
        tail = np.power(flat[cut:].astype(np.float64), float(exponent)).astype(_f)
    return np.concatenate((sleef_powf(flat[:cut], _f(exponent)), tail)).reshape(np.shape(a))


def _powf(x, y):
    """The C library's ``powf``, one element at a time (PyTorch's scalar loop calls ``std::pow``);
    past 4,096 elements, pow in double rounded once (the per-element calls would be slow)."""
    if x.size > 4096:
        with np.errstate(all="ignore"):
            return np.power(x.astype(np.float64), y.astype(np.float64)).astype(_f)
    return _libm.pow(x, y)


def _inner_size(shape, *operands):
    """How many elements PyTorch's TensorIterator walks in one inner loop: the trailing dimensions
    it can merge into one (every operand steps through them evenly)."""
    n, d = (shape[-1] if shape else 1), len(shape) - 1
    while d > 0:
        if not all(op.shape[d] == 1 or op.shape[d - 1] == 1 or
                   op.strides[d] * op.shape[d] == op.strides[d - 1] for op in operands):
            break
        n *= shape[d - 1]
        d -= 1
    return n


def pow_tensor_kernel(a, b, lanes):
    """float32 ``a ** b`` for tensors (broadcast) as PyTorch's kernel loops over them: in each inner
    loop where both walk contiguously (or one stands still), pairs of vectors through SLEEF's powf
    and the rest through the C library's ``powf``; every element through ``powf`` otherwise."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    x, y = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    if x.size == 0:                      # nothing to raise (a 0-d base to an empty exponent: empty)
        return np.empty(shape, np.float32)
    n = _inner_size(shape, x, y)
    flat_x, flat_y = np.ascontiguousarray(x).reshape(-1, n), np.ascontiguousarray(y).reshape(-1, n)
    inner = [d for d in range(len(shape)) if shape[d] != 1][-1:]      # the merged loop's stride
    strides = {op.strides[inner[0]] if inner else 0 for op in (x, y)}
    vectorised = n > 1 and strides <= {0, x.itemsize}
    cut = n - n % (2 * lanes) if vectorised else 0
    out = np.empty((flat_x.shape[0], n), _f)
    if cut:
        out[:, :cut] = sleef_powf(flat_x[:, :cut], flat_y[:, :cut])
    if cut < n:
        out[:, cut:] = _powf(flat_x[:, cut:].reshape(-1), flat_y[:, cut:].reshape(-1)).reshape(-1, n - cut)
    return out.reshape(shape)


# --- the pow kernels: which exponents multiply, which run SLEEF's powf ----------------------------

def power(a, n):
    """aⁿ as PyTorch's kernel computes it: small exponents by multiplying (or a square root), other
    float32 ones by SLEEF's powf on whole pairs of vectors and pow in double on the rest
    (:func:`pow_kernel`), so the bits agree."""
    if a.dtype.kind != "f":
        return np.power(a, n, dtype=a.dtype)
    special = _SPECIAL.get(n)
    if special is not None:
        return special(a)
    return pow_kernel(a, n, LANES) if a.dtype == np.float32 else _vml.in_double(lambda t: np.power(t, n))(a)


def _quietly(f):
    """``f`` without numpy's warnings (1/0 and the root of −1 are ordinary inputs: PyTorch is silent)."""
    def quiet(a):
        with np.errstate(all="ignore"):
            return f(a)
    return quiet


# PyTorch's pow_tensor_scalar_optimized_kernel (aten/src/ATen/native/cpu/PowKernel.cpp) writes
# these exponents out as multiplications, a reciprocal or a square root, in the tensor's dtype.
# Every path of power() is silent where numpy would warn (the products can only overflow, which
# gradviz's warning filter hides, as for x * x), so the op table calls it without np.errstate
_SPECIAL = {0: np.ones_like, 1: lambda a: a.copy(), 2: lambda a: a * a, 3: lambda a: a * a * a,
            -1: _quietly(lambda a: 1 / a), -2: _quietly(lambda a: 1 / (a * a)), 0.5: lambda a: _vml.sqrt(a),
            -0.5: _quietly(lambda a: 1 / np.sqrt(a))}


def powers(a, b):
    """a ** b for tensors, elementwise as PyTorch's kernel loops over them (float32: SLEEF's powf
    and the C library's, :func:`pow_tensor_kernel`)."""
    if a.dtype == np.float32 and np.asarray(b).dtype == np.float32:
        return pow_tensor_kernel(a, b, LANES)
    return _vml.in_double(lambda t: np.power(t, b))(a)
