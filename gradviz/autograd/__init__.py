"""``torch.autograd``: ``backward``, ``grad``, ``gradcheck``, the legacy ``Variable``; ``function``, ``functional``, ``graph``.

The engine that runs backward lives in :mod:`gradviz.autograd.engine`; this module is the public face
PyTorch has, with the parts that need the ``Tensor`` class.
"""

import warnings

import numpy as np

from ._backward_grad import backward, grad
from .node import AccumulateGrad, Node
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_detect_anomaly, set_grad_enabled)
from ..gradcheck import gradcheck, gradgradcheck
from ..tensor import Tensor
from .. import _lazy

__all__ = ["Variable", "Function", "FunctionCtx", "backward", "grad", "gradcheck", "gradgradcheck", "no_grad",
           "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_inference_mode_enabled",
           "Node", "AccumulateGrad", "set_detect_anomaly"]


# --- the legacy Variable ------------------------------------------------------------------------

class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(t, requires_grad=True)``: the pre-0.4 wrapper, now a new leaf sharing ``t``'s data."""

    __module__ = "gradviz.autograd.variable"   # where PyTorch's class lives: type() prints it

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            return Tensor._wrap(np.zeros((0,), np.float32))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            if not out.dtype.is_floating_point:
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            out._requires_grad = True
        return out


# torch.autograd.function (custom Functions), .functional (jacobian, hessian...) and .graph
# (saved-tensor hooks): modules that load on first use, so that ``import gradviz`` stays light (issue 16)
_LAZY_MODULES = ("function", "functional", "graph")
_LAZY_NAMES = {"Function": "function", "FunctionCtx": "function"}    # torch.autograd.Function: the class


def __getattr__(name):
    if name in _LAZY_MODULES:
        return _lazy.submodule(__name__, name)
    if name in _LAZY_NAMES:
        return getattr(_lazy.submodule(__name__, _LAZY_NAMES[name]), name)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_MODULES) | set(_LAZY_NAMES))
