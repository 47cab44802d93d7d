"""The losses: MSELoss and L1Loss, printing and computing as PyTorch's do."""

from . import functional as F
from .module import Module

__all__ = ["MSELoss", "L1Loss"]


class _Loss(Module):
    __module__ = "gradviz.nn.modules.loss"

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = reduction


class MSELoss(_Loss):
    """Mean squared error: mean((input − target)²), one MseLossBackward0 node.

    ``reduction='sum'`` adds the squares up instead, ``'none'`` keeps one per element.
    """

    __module__ = "gradviz.nn.modules.loss"

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error: mean(|input − target|)."""

    __module__ = "gradviz.nn.modules.loss"

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)
