r"""The activations after ReLU (leaky_relu, elu, gelu, silu, softplus, hardtanh, mish, log_sigmoid,
hardsigmoid) and their gradients, rounded step by step as PyTorch 2.13's CPU kernels
(``aten/src/ATen/native/cpu/Activation.cpp``).

Each of those kernels is a ``cpu_kernel_vec``: two formulas, one on vectors, one on single numbers.
When every input is laid out row-major (or is one number broadcast), the loop runs pairs of whole
vectors (2 × :data:`gradviz.kernels._threads.LANES` floats, half as many doubles) through the vector
formula and the elements left over through the scalar one, in each thread's range when more than
32,768 elements are shared (:func:`_vector_part`); other layouts go through the scalar formula
alone.  The two differ where the functions they call differ:

* vectors call SLEEF's ``exp``/``log1p`` (:mod:`._sleef`, bit for bit), its ``tanh`` and ``expm1``
  (:mod:`._sleef_hyperbolic`, bit for bit), ATen's own float32 ``erf`` (a polynomial,
  :func:`_vec_erf32`, bit for bit), SLEEF's double ``erf`` (not re-derived here: MKL's in its place,
  within 1 ulp of each call);
* single numbers call the C library's ``expf``/``exp``, ``log1p``, ``erf``, ``tanh``
  (:mod:`._libm`, bit for bit);
* the compiler fuses a product into the sum that follows it in the scalar formulas
  (``-ffp-contract=fast``), as measured against torch: :func:`_fma` where it does.

So every op here is PyTorch's to the bit at every size, float32 and float64, but float64
gelu(approximate='none') of 16 or more doubles (SLEEF's double erf: within an ulp per call).
float32 gelu of a contiguous tensor of two or more elements is oneDNN's in PyTorch, and here
(:mod:`._onednn`, to the bit).  hardtanh's gradient runs single vectors, not pairs (measured).
"""

import numpy as np

from . import _libm, _sleef, _vml
from ._blend import clamp
from ._numerics import fma32, fma64
from ._threads import _GRAIN, _chunk, _vector, get_num_threads

__all__ = ["leaky_relu", "leaky_relu_backward", "elu", "elu_backward", "gelu", "gelu_backward", "silu",
           "silu_backward", "softplus", "softplus_backward", "hardtanh", "hardtanh_backward", "mish",
           "mish_backward", "log_sigmoid", "log_sigmoid_backward", "hardsigmoid", "hardsigmoid_backward"]

_f = np.float32
_d = np.float64
_EXACT = (np.dtype(_f), np.dtype(_d))


# --- which elements the vector formula computes ------------------------------------------------------

def _vector_part(arrays, shape, dtype, grain=_GRAIN, pairs=True):
    """A flat mask: True where PyTorch's loop runs the vector formula.  Every input row-major in the
    result's shape, or a single number broadcast: pairs of whole vectors from the start of each
    thread's range (``pairs=False``: single vectors, as hardtanh's gradient runs, measured); any
    other layout: none (the scalar formula throughout)."""
    n = int(np.prod(shape))
    mask = np.zeros(n, bool)
    if n == 0 or dtype not in _EXACT:
        return mask
    step = (2 if pairs else 1) * _vector(dtype)
    full = np.zeros(shape, dtype).strides
    strides = [np.broadcast_to(a, shape).strides for a in arrays]
    single = [not any(st) for st in strides]                # one number, broadcast
    if all(st == full or one for st, one in zip(strides, single)):
        if sum(single) > 1:
            return mask
        size = _chunk(n, grain)
        for begin in range(0, n, size):
            end = min(n, begin + size)
            mask[begin:begin + (end - begin) // step * step] = True
        return mask
    # otherwise row by row (the last dim), when every input runs along it contiguously or is one
    # number there (a gradient expanded from a sum over dim 0: strides (0, 4))
    inner = [st[-1] for st in strides]
    if len(shape) == 0 or sum(s == 0 for s in inner) > 1 or any(s not in (0, dtype.itemsize) for s in inner):
        return mask
    rows = mask.reshape(-1, shape[-1])
    rows[:, :shape[-1] // step * step] = True
    return mask


def _pointwise(vector, scalar, *arrays, grain=_GRAIN, pairs=True):
    """``vector`` on the elements PyTorch's loop runs in vectors, ``scalar`` on the rest; each is
    called with the inputs' flat values there (one dtype, broadcast together) and returns theirs."""
    arrays = [np.asarray(a) for a in arrays]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    dtype = arrays[0].dtype
    mask = _vector_part(arrays, shape, dtype, grain, pairs)
    flat = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
    out = np.empty(int(np.prod(shape)), dtype)
    with np.errstate(all="ignore"):
        if dtype not in _EXACT:      # (float16...): the scalar formula, in the dtype numpy gives
            return np.asarray(scalar(*flat), dtype).reshape(shape)
        if mask.all():
            out[:] = vector(*flat)
        elif not mask.any():
            out[:] = scalar(*flat)
        else:
            out[mask] = vector(*(f[mask] for f in flat))
            rest = ~mask
            out[rest] = scalar(*(f[rest] for f in flat))
    return out.reshape(shape)


def _fma(a, b, c):
    """``a·b + c`` rounded once, in a's dtype (a contracted product and sum)."""
    a = np.asarray(a)
    return fma32(a, b, c) if a.dtype == _f else fma64(a, b, c)


def _t(x, value):
    """A Scalar argument as the kernel reads it: ``value.to<scalar_t>()``."""
    return x.dtype.type(value)


# --- leaky_relu, hardtanh, hardsigmoid: no function called ---------------------------------------------

def leaky_relu(a, negative_slope=0.01):
    """x if x > 0 else x·slope (the slope rounded to x's dtype)."""
    s = _t(a, negative_slope)
    with np.errstate(all="ignore"):
        return np.where(a > 0, a, a * s).astype(a.dtype, copy=False)


def leaky_relu_backward(g, a, negative_slope=0.01):
    """g if x > 0 else g·slope (x: the input, or the result for the in-place form)."""
    s = _t(g, negative_slope)
    with np.errstate(all="ignore"):
        return np.where(a > 0, g, g * s).astype(g.dtype, copy=False)


def hardtanh(a, min_val=-1.0, max_val=1.0):
    """clamp(x, min_val, max_val): at::clamp with number bounds, nan kept (integers: numpy's clip)."""
    if a.dtype not in _EXACT:
        return np.clip(a, min_val, max_val).astype(a.dtype, copy=False)
    lo, hi = np.array(min_val, a.dtype), np.array(max_val, a.dtype)
    return clamp(a, lo, hi)        # (which of 0 and −0 a tie keeps: the vector loop's or the scalar one's)


def hardtanh_backward(g, a, min_val=-1.0, max_val=1.0):
    """0 where x <= min_val or x >= max_val, else g.  A nan x passes g on in the scalar formula
    (both comparisons false) and 0 in the vector one (``(x > min) & (x < max)``)."""
    lo, hi = _t(g, min_val), _t(g, max_val)
    return _pointwise(lambda g, a: np.where((a > lo) & (a < hi), g, 0),
                      lambda g, a: np.where((a <= lo) | (a >= hi), 0, g), g, a, pairs=False)


_THREE, _SIX = 3.0, 6.0


def hardsigmoid(a):
    """min(max(x + 3, 0), 6) / 6."""
    dt = a.dtype.type
    with np.errstate(invalid="ignore"):
        return (np.minimum(np.maximum(a + dt(3), dt(0)), dt(6)) / dt(6)).astype(a.dtype, copy=False)


def hardsigmoid_backward(g, a):
    """g·(1/6) where −3 < x < 3, else 0 -- 1/6 rounded to float32 even for doubles, as the kernel's
    ``scalar_t one_sixth(1.0f / 6.0f)``."""
    sixth = g.dtype.type(_f(1) / _f(6))
    with np.errstate(all="ignore"):
        return np.where((a > -3) & (a < 3), g * sixth, 0).astype(g.dtype, copy=False)


# --- elu (and celu, selu): exp -------------------------------------------------------------------------

def _elu_coefficients(x, alpha, scale, input_scale):
    """(negcoef, poscoef, negiptcoef) as the kernel makes them: alpha·scale multiplied in x's dtype."""
    return _t(x, alpha) * _t(x, scale), _t(x, scale), _t(x, input_scale)


def elu(a, alpha=1.0, scale=1.0, input_scale=1.0):
    """scale·x for x >= 0, else (e^{x·input_scale} − 1)·alpha·scale, with expm1: the C library's on
    single numbers; on vectors SLEEF's (:mod:`._sleef_hyperbolic`)."""
    neg, pos, ipt = _elu_coefficients(a, alpha, scale, input_scale)
    from . import _sleef_hyperbolic     # (SLEEF's expm1 and tanh: loaded with the first activation that needs them)
    return _pointwise(lambda x: np.where(x >= 0, x * pos, _sleef_hyperbolic.expm1(x * ipt) * neg),
                      lambda x: np.where(x < 0, _libm.expm1(x * ipt) * neg, x * pos), a)


def elu_backward(g, a, alpha=1.0, scale=1.0, input_scale=1.0, is_result=False):
    """g·scale for x > 0, else g·input_scale·alpha·scale·e^{x·input_scale} (from the input), or
    g·input_scale·(y + alpha·scale) (from the result y, for the in-place form)."""
    neg, pos, ipt = _elu_coefficients(g, alpha, scale, input_scale)
    if is_result:
        def vector(g, b):
            return np.where(b > 0, g * pos, g * ipt * (b + neg))

        def scalar(g, b):
            return np.where(b <= 0, g * ipt * (b + neg), g * pos)
    else:
        def vector(g, b):
            return np.where(b > 0, g * pos, g * ipt * neg * _sleef.exp(b * ipt))

        def scalar(g, b):
            return np.where(b <= 0, g * ipt * neg * _libm.exp(b * ipt), g * pos)
    return _pointwise(vector, scalar, g, a)


# --- softplus: exp and log1p ---------------------------------------------------------------------------

def softplus(a, beta=1.0, threshold=20.0):
    """log(1 + e^{βx}) / β, or x where βx > threshold."""
    b, t = _t(a, beta), _t(a, threshold)
    return _pointwise(lambda x: np.where(x * b > t, x, _sleef.log1p(_sleef.exp(x * b)) / b),
                      lambda x: np.where(x * b > t, x, _libm.log1p(_libm.exp(x * b)) / b), a)


def softplus_backward(g, a, beta=1.0, threshold=20.0):
    """g·z / (z + 1) with z = e^{βx}, or g where βx > threshold."""
    b, t = _t(g, beta), _t(g, threshold)
    one = g.dtype.type(1)

    def vector(g, x):
        z = _sleef.exp(x * b)
        return np.where(x * b > t, g, g * z / (z + one))

    def scalar(g, x):
        z = _libm.exp(x * b)
        return np.where(x * b > t, g, g * z / (z + one))
    return _pointwise(vector, scalar, g, a)


# --- silu: exp -----------------------------------------------------------------------------------------

def silu(a):
    """x / (1 + e^{−x})."""
    one = a.dtype.type(1)
    return _pointwise(lambda x: x / (one + _sleef.exp(-x)), lambda x: x / (one + _libm.exp(-x)), a)


def silu_backward(g, a):
    """g·σ(x)·(1 + x·(1 − σ(x))), σ(x) = 1 / (1 + e^{−x}); the scalar formula's x·(1 − σ) + 1 fused."""
    one = g.dtype.type(1)

    def vector(g, x):
        s = one / (one + _sleef.exp(-x))
        return g * s * _fma(x, one - s, one)

    def scalar(g, x):
        s = one / (one + _libm.exp(-x))
        return g * s * _fma(x, one - s, one)
    return _pointwise(vector, scalar, g, a)


# --- gelu: erf, or tanh --------------------------------------------------------------------------------

_SQRT1_2 = 0.70710678118654752440        # M_SQRT1_2
_2_SQRTPI = 1.12837916709551257390       # M_2_SQRTPI
_SQRT2 = 1.41421356237309504880          # M_SQRT2
_ERF_P = [_f(c) for c in (0.3275911, 0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)]


def _vec_erf32(x):
    """ATen's ``Vectorized<float>::erf``: Abramowitz and Stegun's 7.1.26 with fused steps,
    1 − r·t·e^{−x²} signed as x (SLEEF's exp); not the C library's erff."""
    p, p1, p2, p3, p4, p5 = _ERF_P
    one = _f(1)
    ax = np.abs(x)
    t = one / fma32(p, ax, one)
    r = fma32(fma32(fma32(fma32(p5, t, p4), t, p3), t, p2), t, p1)
    e = _sleef.exp(-(x * x))
    out = fma32(-e * t, r, one)
    return np.where(np.signbit(x), -out, out)


def _vec_erf(x):
    """``Vectorized<T>::erf``: ATen's polynomial for floats; SLEEF's erf (u10) for doubles, whose
    place MKL's takes here (within 1 ulp)."""
    return _vec_erf32(x) if x.dtype == _f else _vml.erf(x)


def _vec_tanh(x):
    """``Vectorized<T>::tanh`` is SLEEF's tanh (u10), re-derived (:mod:`._sleef_hyperbolic`)."""
    from . import _sleef_hyperbolic
    return _sleef_hyperbolic.tanh(x)


def _gelu_grain(n):
    """gelu shares more than 16,384 elements between the threads in equal parts."""
    return n // get_num_threads() if n > 16384 else _GRAIN


class _Vector:
    """The functions the vector formulas call (``Vectorized<T>::exp()``...)."""
    exp, log1p, erf, tanh = staticmethod(_sleef.exp), staticmethod(_sleef.log1p), staticmethod(_vec_erf), \
        staticmethod(_vec_tanh)


class _Scalar:
    """The functions the scalar formulas call (``std::exp``...): the C library's."""
    exp, log1p, erf, tanh = staticmethod(_libm.exp), staticmethod(_libm.log1p), staticmethod(_libm.erf), \
        staticmethod(_libm.tanh)


def _both(formula, *arrays, grain=_GRAIN):
    """One formula, written once with its functions as ``fn.exp``..., run as both of the kernel's."""
    return _pointwise(lambda *xs: formula(_Vector, *xs), lambda *xs: formula(_Scalar, *xs), *arrays, grain=grain)


def _uses_onednn(a, approximate):
    """Does PyTorch hand this gelu to oneDNN (``use_mkldnn``: float32, contiguous, more than one element)?"""
    return approximate == "none" and a.dtype == _f and a.size > 1 and a.flags.c_contiguous


def gelu(a, approximate="none"):
    """x·Φ(x) = x·½(1 + erf(x/√2)); approximate='tanh': ½x(1 + tanh(√(2/π)(x + 0.044715x³))).

    float32 with approximate='none', contiguous, of more than one element: oneDNN's kernel, as PyTorch
    (:mod:`._onednn`)."""
    if _uses_onednn(np.asarray(a), approximate):
        from . import _onednn     # (oneDNN's polynomials: loaded with the first gelu that needs them)
        return _onednn.gelu_erf(a)
    dt = a.dtype.type
    half, one = dt(0.5), dt(1)
    if approximate == "tanh":
        beta, kappa = dt(_SQRT2 * _2_SQRTPI * 0.5), dt(0.044715)

        def formula(fn, x):
            inner = beta * _fma(kappa, x * x * x, x)
            return half * x * (one + fn.tanh(inner))
    else:
        alpha = dt(_SQRT1_2)

        def formula(fn, x):
            return x * half * (one + fn.erf(x * alpha))
    return _both(formula, a, grain=_gelu_grain(a.size))


def gelu_backward(g, a, approximate="none"):
    """g·(Φ(x) + x·φ(x)); approximate='tanh': the derivative of the tanh form, step by step as the kernel
    (oneDNN's where PyTorch calls it, as for the forward)."""
    if _uses_onednn(np.asarray(a), approximate):
        from . import _onednn
        shape = np.broadcast_shapes(np.shape(g), np.shape(a))
        return np.broadcast_to(_onednn.gelu_erf_backward(g, a), shape).astype(_f)
    dt = g.dtype.type
    half, one = dt(0.5), dt(1)
    if approximate == "tanh":
        beta, kappa, three = dt(_SQRT2 * _2_SQRTPI * 0.5), dt(0.044715), dt(3)

        def formula(fn, g, x):
            sq = x * x
            th = fn.tanh(beta * _fma(kappa, sq * x, x))
            left, right = half * x, one + th
            dtanh = _fma(-th, th, one)
            dinner = beta * _fma(three * kappa, sq, one)
            return g * (half * right + left * dtanh * dinner)     # (this sum is not fused: measured)
        return _both(formula, g, a)
    alpha, beta, minus_half = dt(_SQRT1_2), dt(_2_SQRTPI * _SQRT1_2 * 0.5), dt(-0.5)

    def formula(fn, g, x):
        cdf = half * (one + fn.erf(x * alpha))
        pdf = beta * fn.exp(x * x * minus_half)
        # (the vector formula's x·pdf + cdf is fused, the scalar one's is not: measured)
        return g * (_fma(x, pdf, cdf) if fn is _Vector else cdf + x * pdf)
    return _both(formula, g, a)


# --- mish: exp, log1p, tanh ----------------------------------------------------------------------------

def mish(a):
    """x·tanh(log(1 + e^x)) (the vector part: MKL's tanh in SLEEF's place, within 1 ulp)."""
    return _both(lambda fn, x: x * fn.tanh(fn.log1p(fn.exp(x))), a)


def mish_backward(g, a):
    """g·(tanh(sp) + x·σ(x)·(1 − tanh²(sp))), sp = log(1 + e^x)."""
    one = g.dtype.type(1)

    def formula(fn, g, x):
        s = one / (one + fn.exp(-x))
        t = fn.tanh(fn.log1p(fn.exp(x)))
        return g * _fma(x * s, _fma(-t, t, one), t)
    return _both(formula, g, a)


# --- log_sigmoid: every element in vectors ---------------------------------------------------------------

def log_sigmoid(a):
    """(log σ(x), buffer): min(x, 0) − log1p(e^{−|x|}), and the buffer e^{−|x|} the gradient reads;
    the kernel loads even the last part vector whole, so SLEEF's functions throughout."""
    a = np.asarray(a)
    if a.dtype not in _EXACT:
        with np.errstate(all="ignore"):
            buffer = np.exp(-np.abs(a))
            return np.minimum(a, 0) - np.log1p(buffer), buffer
    flat = a.reshape(-1)
    buffer = _sleef.exp(-np.abs(flat))
    out = np.minimum(flat, a.dtype.type(0)) - _sleef.log1p(buffer)
    return out.reshape(a.shape), buffer.reshape(a.shape)


def log_sigmoid_backward(g, a, buffer):
    """g·(m − s·b/(1 + b)): m = 1, s = 1 for x < 0, else m = 0, s = −1 (b: the forward's buffer)."""
    dt = g.dtype.type
    negative = a < 0
    m, s = np.where(negative, dt(1), dt(0)), np.where(negative, dt(1), dt(-1))
    with np.errstate(all="ignore"):
        return ((m - s * (buffer / (dt(1) + buffer))) * g).astype(g.dtype, copy=False)


