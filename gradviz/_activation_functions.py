"""The activations as functions: ``leaky_relu``, ``elu``, ``selu``, ``celu``, ``gelu``, ``silu``, ``softplus``,
``hardtanh``, ``relu6``, ``mish``, ``logsigmoid``, ``softsign``, ``hardsigmoid`` (and their in-place forms),
each recording the node PyTorch records.  ``torch.nn.functional`` re-exports them; ``torch.celu``,
``torch.selu`` and their in-place twins are the package face's.

>>> import gradviz as torch
>>> x = torch.tensor([-2.0, 0.5], requires_grad=True)
>>> leaky_relu(x, 0.1)
tensor([-0.2000,  0.5000], grad_fn=<LeakyReluBackward0>)
"""

import numbers

from . import _dtype
from ._inplace import _inplace
from .autograd.engine import apply
from .ops import OPS

__all__ = ["leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_", "celu", "celu_", "gelu", "silu", "softplus",
           "hardtanh", "hardtanh_", "relu6", "mish", "logsigmoid", "softsign", "hardsigmoid"]

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _floating(input, kernel):
    """PyTorch's kernels of these ops are written for floating types only."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.TYPE_NAMES[input._data.dtype.name]}\'')


def _number(fn, name, position, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Number, not {type(value).__name__}")


def _run(input, key, inplace, **params):
    """The op ``key`` on ``input``, or written into it (``inplace``)."""
    if inplace:
        return _inplace(input, lambda t: apply(OPS[key], (t,), **params))
    return apply(OPS[key], (input,), **params)


# --- piecewise linear ---------------------------------------------------------------------------------

def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x for x > 0, else negative_slope·x (LeakyReluBackward0; in place: LeakyReluBackward1)."""
    _number("leaky_relu", "negative_slope", 2, negative_slope)
    _floating(input, "leaky_relu_cpu")
    return _run(input, "leaky_relu_" if inplace else "leaky_relu", inplace, negative_slope=negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val] (HardtanhBackward0); integers stay integers."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype.is_floating_point:
        return _run(input, "hardtanh", inplace, min_val=min_val, max_val=max_val)
    if input._data.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    lo, hi = int(min_val), int(max_val)          # (PyTorch takes whole bounds for integer tensors)
    return input.clamp_(lo, hi) if inplace else input.clamp(lo, hi)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """min(max(x, 0), 6): hardtanh(x, 0, 6), as PyTorch records it."""
    return hardtanh(input, 0, 6, inplace)


def hardsigmoid(input, inplace=False):
    """min(max(x + 3, 0), 6) / 6 (HardsigmoidBackward0)."""
    _floating(input, "hardsigmoid_cpu")
    return _run(input, "hardsigmoid", inplace)


# --- exponentials -------------------------------------------------------------------------------------

def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, else α(eˣ − 1) (EluBackward0; in place: EluBackward1)."""
    _floating(input, "elu_cpu")
    return _run(input, "elu_" if inplace else "elu", inplace, alpha=alpha, scale=1, input_scale=1)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    """scale·elu(x, α) with PyTorch's two constants (EluBackward0, as PyTorch records it)."""
    _floating(input, "elu_cpu")
    return _run(input, "elu_" if inplace else "elu", inplace, alpha=SELU_ALPHA, scale=SELU_SCALE, input_scale=1)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, α(e^{x/α} − 1)) (CeluBackward0; in place: CeluBackward1)."""
    if float(alpha) == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _floating(input, "elu_cpu")
    return _run(input, "celu_" if inplace else "celu", inplace, alpha=alpha)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def softplus(input, beta=1, threshold=20):
    """log(1 + e^{βx}) / β, or x where βx > threshold (SoftplusBackward0)."""
    _floating(input, "softplus_cpu")
    return apply(OPS["softplus"], (input,), beta=beta, threshold=threshold)


def silu(input, inplace=False):
    """x·σ(x) (SiluBackward0, in place too)."""
    _floating(input, "silu_cpu")
    return _run(input, "silu", inplace)


def mish(input, inplace=False):
    """x·tanh(softplus(x)) (MishBackward0, in place too)."""
    _floating(input, "mish_cpu")
    return _run(input, "mish", inplace)


def logsigmoid(input):
    """log σ(x), computed without overflow (LogSigmoidBackward0)."""
    _floating(input, "log_sigmoid_cpu")
    return apply(OPS["log_sigmoid"], (input,))


def softsign(input):
    """x / (1 + |x|): as PyTorch, the ops it is made of (AbsBackward0, AddBackward0, DivBackward0)."""
    return input / (input.abs() + 1)


def gelu(input, *, approximate="none"):
    """x·Φ(x), Φ the standard normal's distribution function; approximate='tanh': its tanh
    approximation (GeluBackward0 either way)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _floating(input, "GeluKernelImpl")
    return apply(OPS["gelu" if approximate == "none" else "gelu_tanh"], (input,), approximate=approximate)
