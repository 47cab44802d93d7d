"""Elementwise functions as PyTorch's CPU kernels compute them: MKL's vector maths, else in double.

PyTorch 2.13 computes ``exp``, ``log``, ``sin``, ``tanh``, ``sqrt``... of float32 and float64 tensors
with MKL's ``vmsExp``/``vmdExp``... (:mod:`gradviz.kernels._mkl` calls the same library).  Without
MKL each function is computed in double and rounded once (:func:`in_double`): within 1 ulp.

>>> float(exp(np.array([0.0], np.float32))[0])
1.0
"""

import math

import numpy as np

from . import _mkl
from ._numerics import fma64

__all__ = ["in_double", "exp", "log", "log1p", "sin", "cos", "tanh", "tan", "sqrt", "atan", "asin", "acos", "log2",
           "log10", "erf", "expm1", "tanh_backward"]


def in_double(f):
    """``f`` computed in double and rounded once: float32 results then agree with PyTorch's nearly
    always (its vectorised functions are within an ulp of exact; numpy's float32 ones differ more)."""
    def rounded(a):
        with np.errstate(all="ignore"):   # PyTorch makes nan and inf silently
            if not isinstance(a, (np.ndarray, np.generic)):   # a recorded value (create_graph=True): the
                return f(a)                                     # ops f calls are recorded, each rounded so
            return f(a.astype(np.float64)).astype(a.dtype) if a.dtype == np.float32 else f(a)
    rounded.__name__ = getattr(f, "__name__", "f")
    rounded.__doc__ = f"{rounded.__name__}, computed in double and rounded once"
    return rounded


def _torch_vml(name, f):
    """``f`` as PyTorch's CPU kernels compute it: by MKL's vector maths (``name`` is MKL's) for
    float32 and float64 when MKL is installed, else in double and rounded once."""
    fallback = in_double(f)

    def vml(a, out=None):     # (out: an array MKL may write into, a itself for in place; see _mkl.vml)
        if not isinstance(a, (np.ndarray, np.generic)):   # a recorded value (create_graph=True): its op
            with np.errstate(all="ignore"):
                return f(a)
        result = _mkl.vml(name, a, out)
        if result is not None:
            return result
        with np.errstate(all="ignore"):
            return fallback(a)
    vml.__name__ = fallback.__name__
    vml.__doc__ = f"{fallback.__name__}, as PyTorch's CPU kernels compute it (MKL's vms{name}/vmd{name})"
    return vml


exp, log, sin, cos, tanh, tan, sqrt, atan, asin, acos, log2, log10 = (
    _torch_vml(name, f) for name, f in (("Exp", np.exp), ("Ln", np.log), ("Sin", np.sin), ("Cos", np.cos),
                                        ("Tanh", np.tanh), ("Tan", np.tan), ("Sqrt", np.sqrt), ("Atan", np.arctan),
                                        ("Asin", np.arcsin), ("Acos", np.arccos), ("Log2", np.log2),
                                        ("Log10", np.log10)))
expm1 = _torch_vml("Expm1", np.expm1)   # (SLEEF's expm1 in ELU's vector loop: MKL's in its place, within 1 ulp)
log1p = _torch_vml("Log1p", np.log1p)   # not one of PyTorch's (SLEEF's, :mod:`._sleef`): its stand-in above
                                        # the exact limit (:mod:`._exact`)
_ERF = np.frompyfunc(math.erf, 1, 1)    # numpy has no erf; Python's is within an ulp or so in double
# erf(x) = (2/√π) ∫₀ˣ e^{−t²} dt
erf = _torch_vml("Erf", lambda a: np.asarray(_ERF(a), np.float64).astype(a.dtype))


def tanh_backward(g, y):
    """g · (1 − y²), with 1 − y² rounded once as PyTorch's tanh_backward kernel computes it (a fused
    multiply-add)"""
    if type(y) is np.ndarray is type(g) and y.dtype is _F32 and g.dtype is _F32:     # (the usual case)
        d = y.astype(np.float64)     # in_double's steps in one array: y² exact in double, 1 − y²
        d *= d                       # rounded to float32 once (ufuncs given dtype= cost more than these)
        return g * (1.0 - d).astype(np.float32)
    if y.dtype == np.float64:
        return g * fma64(-y, y, np.float64(1))
    return g * in_double(lambda t: 1 - t * t)(y)


_F32 = np.dtype(np.float32)
