"""Elementwise functions as PyTorch's CPU kernels compute them: MKL's vector maths, else in double.

PyTorch 2.13 computes ``exp``, ``log``, ``sin``, ``tanh``, ``sqrt``... of float32 and float64 tensors
with MKL's ``vmsExp``/``vmdExp``... (:mod:`gradviz.kernels._mkl` calls the same library).  Without
MKL each function is computed in double and rounded once (:func:`in_double`): within 1 ulp.

>>> float(exp(np.array([0.0], np.float32))[0])
1.0
"""

import ctypes
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
    routines = {}   # dtype -> MKL's vms<name>/vmd<name>, or None for a dtype MKL does not compute

    def vml(a, out=None):     # (out: an array MKL may write into, a itself for in place; see _mkl.vml)
        # the usual call, an array laid by rows: straight to MKL (no np.errstate, which costs more
        # than the function on a lesson's 512 floats: MKL raises no numpy error)
        if type(a) is np.ndarray and 0 < a.size <= _MAX_N and _mkl.library() is not None:
            flags = a.flags
            if flags.c_contiguous:
                dtype = a.dtype
                fn = routines.get(dtype, _UNSEEN)
                if fn is _UNSEEN:
                    fn = routines[dtype] = _routine(name, dtype)
                if fn is not None:
                    if out is None or not (out.flags.c_contiguous and out.flags.writeable and out.shape == a.shape
                                           and out.dtype == dtype):
                        out = np.empty_like(a)
                    fn(a.size, _byref(_char_view(a)) if flags.writeable else _at(a), _byref(_char_view(out)), _MODE)
                    return out
        with np.errstate(all="ignore"):
            if not isinstance(a, (np.ndarray, np.generic)):   # a recorded value (create_graph=True): its op
                return f(a)
            result = _mkl.vml(name, a, out)
            return fallback(a) if result is None else result
    vml.__name__ = fallback.__name__
    vml.__doc__ = f"{fallback.__name__}, as PyTorch's CPU kernels compute it (MKL's vms{name}/vmd{name})"
    return vml


_UNSEEN = object()
_MODE = ctypes.c_int64(_mkl._MODE)      # (passed as MKL's 64-bit mode argument, built once)
_MAX_N = _mkl._MAX_N
_at = _mkl._at                          # an array's first element as a ctypes argument
_byref, _char_view = ctypes.byref, ctypes.c_char.from_buffer     # (the quickest way there, for a writable one)


def _routine(name, dtype):
    """MKL's vector function ``name`` for ``dtype`` as a function object of its own, called without
    ``argtypes`` (ctypes converting declared arguments costs more than MKL on a lesson's array):
    the size as a C int (MKL_INT, LP64), addresses and the mode as ctypes objects; MKL is loaded.
    None for a dtype MKL has no such function for (then :func:`_mkl.vml` and the fallback decide)."""
    prefix = _mkl._PREFIX.get(dtype)
    if prefix is None:
        return None
    lib = _mkl.library()
    fn = lib[prefix + name]
    fn.restype = None
    return fn


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
    if y.dtype == np.float64:
        return g * fma64(-y, y, np.float64(1))
    if type(y) is np.ndarray is type(g) and y.dtype == np.float32 and g.dtype == np.float32:
        d = np.multiply(y, y, dtype=np.float64)     # in double (in_double's steps, in one array), then
        d = np.subtract(1.0, d, out=d) if y.ndim else 1.0 - d    # rounded to float32 once, inside
        return np.multiply(g, d, dtype=np.float32, casting="same_kind")     # the product's loop
    return g * in_double(lambda t: 1 - t * t)(y)
