"""Everything that reproduces PyTorch's numerics: one function per op, computed where PyTorch computes it.

The op table reads ``forward=kernels.exp``; what is behind the name is this package's business:

* MKL (the ``exact`` extra: ``pip install -e ".[exact]"``): PyTorch's CPU build calls the MKL it ships for ``exp``,
  ``log``, ``tanh``... (vector maths) and for every matrix product (BLAS); gradviz calls the same
  library through ctypes (:mod:`._mkl`), so the last digit is PyTorch's;
* SLEEF and the C library, re-derived in numpy where PyTorch's kernels call them (:mod:`._sleef`,
  :mod:`._powf`, :mod:`._libm`): sigmoid, softmax and log_softmax, ``x ** y``, the activations
  (:mod:`._activations`: elu, gelu, silu, softplus...);
* the order PyTorch's kernels add in (:mod:`._reduce`; norms: :mod:`._norms`; LayerNorm: :mod:`._layer_norm`), their fused multiply-adds (:mod:`._numerics`),
  the vector width and thread count that cut their loops (:mod:`._threads`).

Without MKL, each function is computed in double and rounded once, and products are numpy's
(within rounding).  :func:`info` says which backend each family runs on here.

The families a first lesson does not reach (norms, LayerNorm, LAPACK's solve/inv/det, the
smooth-L1 and Huber losses) load the first time one of their names is read (:data:`ON_FIRST_USE`, a module ``__getattr__``), so
``import gradviz`` does not pay for them (issue 16).

>>> import numpy as np
>>> float(sigmoid(np.array([0.0], np.float32))[0])
0.5
"""

import importlib
import math

import numpy as np

from . import _mkl
from ._exact import get_exact_limit, set_exact_limit
from ._numerics import add, fma
from ._blend import addcdiv, addcmul, clamp, lerp
from ._powf import power as pow, powers as pow_tensor  # noqa: A001 -- kernels.pow, as torch.pow
from ._products import addmm, bmm, column_major, dot, mm, mv
from ._reduce import batch_norm_backward_sums, batch_norm_grad_sum, batch_norm_sums, cumprod, cumsum, nll_sums, sum_to, summed_axes, torch_sum as sum  # noqa: A001
from ._softmax import log_softmax, log_softmax_backward, sigmoid, softmax, softmax_backward
from ._activations import (elu, elu_backward, gelu, gelu_backward, hardsigmoid, hardsigmoid_backward, hardtanh,
                           hardtanh_backward, leaky_relu, leaky_relu_backward, log_sigmoid, log_sigmoid_backward, mish,
                           mish_backward, silu, silu_backward, softplus, softplus_backward)
from ._threads import LANES, get_num_threads, set_num_threads
from ._vml import acos, asin, atan, cos, erf, exp, in_double, log, log2, log10, sin, sqrt, tan, tanh, tanh_backward
from ._libm import log as c_log, log1p as c_log1p   # the C library's, as PyTorch's scalar loops call them
from ._sleef import exp as sleef_exp, log as sleef_log, log1p as sleef_log1p   # SLEEF's, as its vectorised loops

__all__ = ["add", "fma", "addcmul", "addcdiv", "lerp", "clamp", "pow", "pow_tensor", "mm", "addmm", "mv", "dot", "bmm", "column_major", "sum", "sum_to", "summed_axes", "mean", "norm", "cumsum", "cumprod", "solve", "inv", "det", "det_backward", "zero_pivot",
           "nll_sums", "batch_norm_sums", "layer_norm", "layer_norm_stats", "layer_norm_backward", "layer_norm_weight_grad",
           "layer_norm_bias_grad", "batch_norm_backward_sums", "batch_norm_grad_sum", "sigmoid", "softmax", "log_softmax",
           "softmax_backward", "log_softmax_backward", "leaky_relu", "leaky_relu_backward", "elu", "elu_backward", "gelu",
           "gelu_backward", "silu", "silu_backward", "softplus", "softplus_backward", "hardtanh", "hardtanh_backward", "mish",
           "mish_backward", "smooth_l1", "smooth_l1_backward", "huber", "huber_backward", "log_sigmoid", "log_sigmoid_backward", "hardsigmoid", "hardsigmoid_backward", "exp", "log", "sin",
           "cos", "tan", "tanh", "sqrt", "atan",
           "asin", "acos", "log2", "log10", "erf", "tanh_backward", "in_double", "c_log", "c_log1p", "sleef_exp",
           "sleef_log", "sleef_log1p", "get_exact_limit", "set_exact_limit", "LANES", "get_num_threads", "set_num_threads", "info"]


# name -> (submodule, its name there): loaded on first use by __getattr__ below, then an ordinary attribute
ON_FIRST_USE = {
    "norm": ("_norms", "vector_norm"),
    **{name: ("_layer_norm", name) for name in ("layer_norm", "layer_norm_backward", "layer_norm_bias_grad",
                                                "layer_norm_stats", "layer_norm_weight_grad")},
    **{name: ("_lapack", name) for name in ("det", "det_backward", "inv", "solve", "zero_pivot")},
    **{name: ("_losses", name) for name in ("huber", "huber_backward", "smooth_l1", "smooth_l1_backward")},
}
_SUBMODULES_ON_FIRST_USE = frozenset(module for module, _ in ON_FIRST_USE.values())


def __getattr__(name):
    # (importlib, not ``from . import x``: that form asks this very __getattr__ first, forever)
    if name in ON_FIRST_USE:
        module, attribute = ON_FIRST_USE[name]
        value = globals()[name] = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
        return value
    if name in _SUBMODULES_ON_FIRST_USE:       # kernels._lapack...: the module, loaded now
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(ON_FIRST_USE))


def mean(a, axis=None, keepdims=False):
    """The mean as PyTorch's CPU kernel computes it: its ordered sum, divided by the count."""
    a = np.asarray(a)
    if axis is None:
        count = a.size
    else:
        count = math.prod([a.shape[d] for d in ((axis,) if isinstance(axis, int) else axis)])
    return sum(a, axis=axis, keepdims=keepdims) / count


def _sleef_backend(mkl):
    """Where sigmoid, softmax, log_softmax and ``x ** y`` take SLEEF's exp/log/powf from, here."""
    limit = get_exact_limit()
    if limit is None:
        return "SLEEF's algorithms in numpy (bit for bit, at every size: set_exact_limit(None))"
    fast = "MKL's vector exp/log" if mkl else "numpy in double, rounded once"
    return (f"SLEEF's algorithms in numpy (bit for bit) up to {limit:,} elements per call; above, {fast} "
            "in their place (within 1 ulp of SLEEF's; set_exact_limit(None) for bit for bit at every size)")


def info():
    """Which backend each family of kernels runs on here, so a user who sees other digits can tell why.

    >>> sorted(info())
    ['blas', 'reductions', 'sleef', 'threads', 'vector_floats', 'vml']
    """
    found = _mkl.library() is not None
    return {
        "vml": f"MKL {_mkl.VERSION} (PyTorch's)" if found else "numpy in double, rounded once (within 1 ulp)",
        "blas": f"MKL {_mkl.VERSION} (PyTorch's)" if found else
                "numpy; PyTorch's order for inner dimensions up to 192 (float32)",
        "sleef": _sleef_backend(found),
        "reductions": "PyTorch's order in numpy (bit for bit)",
        "vector_floats": LANES,
        "threads": get_num_threads(),
    }
