"""The C library's scalar maths (``logf``, ``log1pf``...), called as PyTorch's scalar CPU kernels call it.

PyTorch's loss kernels (``binary_cross_entropy``...) are plain loops calling ``std::log`` on each
float: the C library's ``logf``, whose last bit differs from a correctly rounded log on a few
percent of inputs.  Through ctypes, gradviz calls the very same function, element by element
(teaching sizes: fine); where no C math library can be loaded, the float64 result rounded once.

>>> float(log(np.array([2.0], np.float32))[0])
0.6931471824645996
"""

import ctypes
import ctypes.util

import numpy as np

__all__ = ["log", "log1p"]


def _load():
    for name in ("libm.so.6", ctypes.util.find_library("m")):
        try:
            return ctypes.CDLL(name)
        except (OSError, TypeError):
            continue
    return None


_LIBM = _load()


def _scalar(name, fallback):
    """``name`` (float) and ``name`` without the f (double) from the C library, over a whole array."""
    fns = {}
    if _LIBM is not None:
        for suffix, ctype, np_type in (("f", ctypes.c_float, np.float32), ("", ctypes.c_double, np.float64)):
            fn = getattr(_LIBM, name + suffix)
            fn.restype, fn.argtypes = ctype, [ctype]
            fns[np.dtype(np_type)] = fn

    def apply(a):
        a = np.asarray(a)
        fn = fns.get(a.dtype)
        if fn is None:
            with np.errstate(all="ignore"):
                return fallback(a.astype(np.float64)).astype(a.dtype)
        return np.array([fn(v) for v in a.reshape(-1).tolist()], a.dtype).reshape(a.shape)
    apply.__name__ = name
    return apply


log = _scalar("log", np.log)
log1p = _scalar("log1p", np.log1p)
