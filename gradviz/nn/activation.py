"""The activation layers after ReLU, Sigmoid and Tanh: LeakyReLU, ELU, SELU, CELU, GELU, SiLU, Softplus,
Hardtanh, ReLU6, Mish, LogSigmoid, Softsign, Hardsigmoid -- each a Module printing as PyTorch's does.

>>> import gradviz as torch
>>> torch.nn.LeakyReLU(), torch.nn.GELU(approximate='tanh'), torch.nn.ReLU6(inplace=True)
(LeakyReLU(negative_slope=0.01), GELU(approximate='tanh'), ReLU6(inplace=True))
"""

from . import functional
from .module import Module

__all__ = ["LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Softplus", "Hardtanh", "ReLU6", "Mish", "LogSigmoid",
           "Softsign", "Hardsigmoid"]


def _inplace_repr(inplace):
    return "inplace=True" if inplace else ""


class LeakyReLU(Module):
    """x for x > 0, else negative_slope·x (LeakyReluBackward0)."""

    __module__ = "gradviz.nn.modules.activation"

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return functional.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class ELU(Module):
    """x for x > 0, else α(eˣ − 1) (EluBackward0)."""

    __module__ = "gradviz.nn.modules.activation"

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return functional.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace_str}"


class CELU(ELU):
    """max(0, x) + min(0, α(e^{x/α} − 1)) (CeluBackward0)."""

    def forward(self, input):
        return functional.celu(input, self.alpha, self.inplace)


class SELU(Module):
    """scale·ELU(x) with PyTorch's α and scale (EluBackward0)."""

    __module__ = "gradviz.nn.modules.activation"

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return functional.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class GELU(Module):
    """x·Φ(x), or its tanh approximation (GeluBackward0)."""

    __module__ = "gradviz.nn.modules.activation"

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return functional.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(SELU):
    """x·σ(x) (SiluBackward0)."""

    def forward(self, input):
        return functional.silu(input, inplace=self.inplace)


class Mish(SELU):
    """x·tanh(softplus(x)) (MishBackward0)."""

    def forward(self, input):
        return functional.mish(input, inplace=self.inplace)


class Hardsigmoid(SELU):
    """min(max(x + 3, 0), 6) / 6 (HardsigmoidBackward0)."""

    def forward(self, input):
        return functional.hardsigmoid(input, self.inplace)


class Softplus(Module):
    """log(1 + e^{βx}) / β, x itself where βx > threshold (SoftplusBackward0)."""

    __module__ = "gradviz.nn.modules.activation"

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return functional.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """x clamped to [min_val, max_val] (HardtanhBackward0)."""

    __module__ = "gradviz.nn.modules.activation"

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")

    def forward(self, input):
        return functional.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace_str}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6): Hardtanh(0, 6) (HardtanhBackward0)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class LogSigmoid(Module):
    """log σ(x) (LogSigmoidBackward0)."""

    __module__ = "gradviz.nn.modules.activation"

    def forward(self, input):
        return functional.logsigmoid(input)


class Softsign(Module):
    """x / (1 + |x|)."""

    __module__ = "gradviz.nn.modules.activation"

    def forward(self, input):
        return functional.softsign(input)
