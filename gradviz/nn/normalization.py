"""LayerNorm: each sample normalised over its own last dimensions (NativeLayerNormBackward0)."""

import numbers

from .. import _dtype
from .._creation import _filled
from . import functional
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["LayerNorm"]


class LayerNorm(Module):
    """Normalises each sample over its last dimensions, ``normalized_shape``, to mean 0 and
    variance 1 (the statistics of that sample alone, the same in training and eval mode), then
    scales and shifts each element by a learned ``weight`` and ``bias`` of ``normalized_shape``.

    >>> import gradviz as torch
    >>> torch.nn.LayerNorm(4)
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> torch.nn.LayerNorm([2, 3], elementwise_affine=False)
    LayerNorm((2, 3), eps=1e-05, elementwise_affine=False, bias=False)
    """

    __module__ = "gradviz.nn.modules.normalization"

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        dt = _dtype.as_dtype(dtype) or _dtype.get_default_dtype()
        if elementwise_affine:
            self.weight = Parameter(_filled(self.normalized_shape, 1.0, dt, False))
            if bias:
                self.bias = Parameter(_filled(self.normalized_shape, 0.0, dt, False))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """The weight back to 1 and the bias to 0."""
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return functional.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")
