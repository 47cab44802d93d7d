"""Batch normalisation layers: BatchNorm1d, BatchNorm2d and BatchNorm3d, one NativeBatchNormBackward0 node each."""

from .. import _dtype
from .._creation import _filled
from . import functional
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


class _BatchNorm(Module):
    """What the three layers share: learned ``weight`` and ``bias`` per channel (axis 1), running
    averages of the batch statistics for ``eval()`` mode, and PyTorch's choice of which statistics
    to use.  Each layer only says which inputs it takes (:meth:`_check_input_dim`)."""

    __module__ = "gradviz.nn.modules.batchnorm"

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dt = _dtype.as_dtype(dtype) or _dtype.get_default_dtype()
        if affine:
            self.weight = Parameter(_filled((num_features,), 1.0, dt, False))
            if bias:
                self.bias = Parameter(_filled((num_features,), 0.0, dt, False))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _filled((num_features,), 0.0, dt, False))
            self.register_buffer("running_var", _filled((num_features,), 1.0, dt, False))
            self.register_buffer("num_batches_tracked", _filled((), 0, _dtype.int64, False))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        """Running mean 0, running variance 1, no batch seen."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """The running statistics reset, the weight back to 1 and the bias to 0."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def forward(self, input):
        self._check_input_dim(input)
        # momentum=None: the cumulative average, 1/k for the k-th batch
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        # the batch's statistics while training, and in eval mode when there are no running ones
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats      # (updated only when tracked)
        return functional.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                                     self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Normalises each feature (channel, axis 1) of a batch of rows (N, C) or sequences (N, C, L) to
    mean 0 and variance 1, then scales and shifts it by learned ``weight`` and ``bias``; keeps
    running averages of the statistics for ``eval()`` mode (NativeBatchNormBackward0).

    >>> import gradviz as torch
    >>> torch.nn.BatchNorm1d(4)
    BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    __module__ = "gradviz.nn.modules.batchnorm"

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """BatchNorm1d for a batch of images (N, C, H, W): each channel normalised over the batch and
    all its pixels, then scaled and shifted (NativeBatchNormBackward0).

    >>> import gradviz as torch
    >>> torch.nn.BatchNorm2d(3, momentum=None)
    BatchNorm2d(3, eps=1e-05, momentum=None, affine=True, bias=True, track_running_stats=True)
    """

    __module__ = "gradviz.nn.modules.batchnorm"

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """BatchNorm1d for a batch of volumes (N, C, D, H, W): each channel normalised over the batch
    and all its voxels, then scaled and shifted (NativeBatchNormBackward0).

    >>> import gradviz as torch
    >>> torch.nn.BatchNorm3d(2, affine=False)
    BatchNorm3d(2, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=True)
    """

    __module__ = "gradviz.nn.modules.batchnorm"

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")

