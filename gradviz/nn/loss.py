"""The losses: MSELoss, L1Loss, SmoothL1Loss, HuberLoss, KLDivLoss, CrossEntropyLoss, NLLLoss, BCELoss and BCEWithLogitsLoss, printing and computing as PyTorch's do."""

from . import functional
from .module import Module

__all__ = ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss"]


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
        return functional.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error: mean(|input − target|)."""

    __module__ = "gradviz.nn.modules.loss"

    def forward(self, input, target):
        return functional.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic for errors smaller than ``beta``, linear beyond: ½(x − t)²/β or |x − t| − ½β, averaged.

    >>> import gradviz as torch
    >>> torch.nn.SmoothL1Loss()(torch.tensor([0.5, 3.0]), torch.tensor([0.0, 0.0]))
    tensor(1.3125)
    """

    __module__ = "gradviz.nn.modules.loss"

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return functional.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic for errors smaller than ``delta``, linear beyond: ½(x − t)² or δ(|x − t| − ½δ), averaged."""

    __module__ = "gradviz.nn.modules.loss"

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return functional.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """The KL divergence of the target's distribution from the input's log-probabilities:
    Σ t·(log t − x), averaged over the elements (``'batchmean'``: summed and divided by the batch size,
    the divergence itself); ``log_target=True`` takes the target as log-probabilities too."""

    __module__ = "gradviz.nn.modules.loss"

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return functional.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class _WeightedLoss(_Loss):
    """A loss with per-class weights, kept as a buffer (saved in ``state_dict``, moved with ``to``)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """The loss of a classifier: the softmax of the scores ("logits") against the right class,
    −log softmax(x)[target], averaged over the batch (LogSoftmaxBackward0, then NllLossBackward0).

    >>> import gradviz as torch
    >>> torch.nn.CrossEntropyLoss()(torch.tensor([[2.0, 0.0, -1.0]]), torch.tensor([0]))
    tensor(0.1698)
    """

    __module__ = "gradviz.nn.modules.loss"

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        return functional.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """−(the log-probability given to the right class), averaged: for a model ending in LogSoftmax."""

    __module__ = "gradviz.nn.modules.loss"

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return functional.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities (after a Sigmoid) against targets in [0, 1]."""

    __module__ = "gradviz.nn.modules.loss"

    def forward(self, input, target):
        return functional.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of sigmoid(scores), from the scores themselves (no Sigmoid layer needed,
    and no overflow); ``pos_weight`` weighs the positive examples."""

    __module__ = "gradviz.nn.modules.loss"

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return functional.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)
