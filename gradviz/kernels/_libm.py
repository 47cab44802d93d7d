"""The C library's scalar maths (``logf``, ``log1pf``...), called as PyTorch's scalar CPU kernels call it.

PyTorch's loss kernels (``binary_cross_entropy``...) are plain loops calling ``std::log`` on each
float: the C library's ``logf``, whose last bit differs from a correctly rounded log on a few
percent of inputs.  Through ctypes, gradviz calls the very same function, element by element
(teaching sizes: fine); where no C math library can be loaded, the float64 result rounded once.
``expf``, which the vectorised kernels call for the elements after their last whole vector, is
repeated in numpy instead (bit for bit, on whole arrays).

>>> float(log(np.array([2.0], np.float32))[0])
0.6931471824645996
"""

import ctypes
import functools
import math

import numpy as np

__all__ = ["exp", "log", "log1p", "expm1", "pow", "erf", "tanh"]


@functools.cache
def _library():
    """The C maths library, loaded the first time a function is asked for (not at import)."""
    import ctypes.util
    for name in ("libm.so.6", ctypes.util.find_library("m")):
        try:
            return ctypes.CDLL(name)
        except (OSError, TypeError):
            continue
    return None


def _scalar(name, fallback, arity=1):
    """``name`` (float) and ``name`` without the f (double) from the C library, over whole arrays
    (``arity`` of them, broadcast together), one call per element."""
    @functools.cache
    def functions():
        fns, lib = {}, _library()
        if lib is not None:
            for suffix, ctype, np_type in (("f", ctypes.c_float, np.float32), ("", ctypes.c_double, np.float64)):
                fn = getattr(lib, name + suffix)
                fn.restype, fn.argtypes = ctype, [ctype] * arity
                fns[np.dtype(np_type)] = fn
        return fns

    def apply(*arrays):
        arrays = np.broadcast_arrays(*map(np.asarray, arrays))
        a = arrays[0]
        fn = functions().get(a.dtype)
        if fn is None:
            with np.errstate(all="ignore"):
                return fallback(*(x.astype(np.float64) for x in arrays)).astype(a.dtype)
        values = zip(*(x.reshape(-1).tolist() for x in arrays))
        return np.array([fn(*v) for v in values], a.dtype).reshape(a.shape)
    apply.__name__ = name
    return apply


log = _scalar("log", np.log)
pow = _scalar("pow", np.power, arity=2)  # noqa: A001 -- C's powf/pow: x ** y
log1p = _scalar("log1p", np.log1p)
_c_exp = _scalar("exp", np.exp)


def exp(a):
    """e^x as the C library's ``expf``/``exp`` computes it (what PyTorch's scalar loops call):
    float32 repeated in numpy below (bit for bit, whole arrays), float64 called."""
    a = np.asarray(a)
    return _expf(a) if a.dtype == np.float32 else _c_exp(a)


# the C library's expf (glibc): x·32/ln 2 = k + r with k an integer and |r| ≤ ½, then
# e^x = 2^(k/32) · (1 + C₂r + C₁r² + C₀r³): 2^(k/32) from a table of 2^(i/32) (i = k mod 32) with
# k div 32 added to its exponent bits, everything in float64, one rounding to float32 at the end.
_EXP2_32 = 32
_INV_LN2_32 = float.fromhex("0x1.71547652b82fep+0") * _EXP2_32
_SHIFT = float.fromhex("0x1.8p+52")     # adding it rounds to an integer, kept in the low bits
_EXPF_C = (float.fromhex("0x1.c6af84b912394p-5") / _EXP2_32 ** 3,
           float.fromhex("0x1.ebfce50fac4f3p-3") / _EXP2_32 ** 2,
           float.fromhex("0x1.62e42ff0c52d6p-1") / _EXP2_32)
_EXPF_OVER, _EXPF_UNDER = np.float32(float.fromhex("0x1.62e42ep6")), np.float32(-float.fromhex("0x1.9fe368p6"))


def _exp2_table():
    """2^(i/32) for i < 32, correctly rounded to float64, less i·2⁴⁷ in the bits (so that adding
    k·2⁴⁷ puts k div 32 into the exponent)."""
    from decimal import Decimal, localcontext
    with localcontext() as ctx:
        ctx.prec = 50
        exact = [Decimal(2) ** (Decimal(i) / _EXP2_32) for i in range(_EXP2_32)]
    return np.array([np.float64(float(v)).view(np.int64) - (i << 47) for i, v in enumerate(exact)])


_EXP2_TABLE = []   # filled on first use (Decimal arithmetic, not at import)


def _expf(x):
    r"""e^x for float32 as the C library's ``expf`` computes it (what PyTorch's scalar loops call):
    within 0.502 ulp, so not always the correctly rounded value (0.06% of inputs differ)."""
    x = np.asarray(x, np.float32)
    if not x.size:       # (no elements left over for the scalar loop: the usual case of a vector kernel's tail)
        return x.copy()
    with np.errstate(all="ignore"):
        xd = x.astype(np.float64)
        z = _INV_LN2_32 * xd
        kd = z + _SHIFT
        ki = kd.view(np.int64)
        r = z - (kd - _SHIFT)
        if not len(_EXP2_TABLE):
            _EXP2_TABLE.append(_exp2_table())
        scale = (_EXP2_TABLE[0][ki % _EXP2_32] + (ki << 47)).view(np.float64)
        y = (_EXPF_C[0] * r + _EXPF_C[1]) * (r * r) + (_EXPF_C[2] * r + 1)
        out = (y * scale).astype(np.float32)
    out = np.where(x > _EXPF_OVER, np.float32(np.inf), out)
    out = np.where(x < _EXPF_UNDER, np.float32(0), out)
    return np.where(np.isnan(x), x, out)


erf = _scalar("erf", np.vectorize(math.erf, otypes=[np.float64]))   # std::erf: erff / erf
tanh = _scalar("tanh", np.tanh)                                                     # std::tanh: tanhf / tanh
expm1 = _scalar("expm1", np.expm1)                                                  # std::expm1: expm1f / expm1
