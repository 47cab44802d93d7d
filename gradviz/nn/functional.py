"""``torch.nn.functional``: layers and losses as plain functions, recording the nodes PyTorch records."""

import warnings

import numpy as np

from .. import _dtype, _random
from ..ops import OPS
from ..tensor import Tensor, _broadcast_error, apply

__all__ = ["linear", "relu", "sigmoid", "tanh", "softmax", "log_softmax", "dropout", "one_hot", "mse_loss", "l1_loss"]


def linear(input, weight, bias=None):
    """y = x Wᵀ + b, as PyTorch runs it: one ``addmm`` (AddmmBackward0) for a batch of rows;
    other shapes are viewed as rows first and the result viewed back (ViewBackward0)."""
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if weight.ndim != 2:
        out = input.matmul(weight.t())
        return out if bias is None else out + bias
    wt = weight.t()                                      # TBackward0: the layer stores W as (out, in)
    rows = input.numel() // input.shape[-1] if input.shape[-1] else 0
    if input.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                           f"{wt.shape[0]}x{wt.shape[1]})")
    if bias is None:     # MmBackward0 (a vector: its (un)squeeze; a batch: folded into rows and back)
        return input.matmul(wt)
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{_dtype.TYPE_NAMES[input.dtype.name]} and {_dtype.TYPE_NAMES[weight.dtype.name]}")
    if input.ndim == 2:
        return apply(OPS["addmm"], (bias, input, wt))
    if not input.is_contiguous():                        # PyTorch's fallback: a product, then bias added in place
        return input.matmul(wt).add_(bias)
    out = apply(OPS["addmm"], (bias, input.reshape(rows, input.shape[-1]), wt))
    return out.view(*input.shape[:-1], wt.shape[1])


# --- activations --------------------------------------------------------------------------------

def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def _softmax_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """e^{x_i} / Σ_j e^{x_j} along ``dim`` (SoftmaxBackward0)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """x_i − log Σ_j e^{x_j} along ``dim`` (LogSoftmaxBackward0)."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return input.log_softmax(dim, dtype=dtype)


# --- dropout ------------------------------------------------------------------------------------

def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by 1/(1 − p), so the expected
    value is unchanged; PyTorch's CPU recipe: a bernoulli(1 − p) mask, divided by 1 − p, times the
    input (MulBackward0). Not training: the input itself."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    dt = input._data.dtype
    if p == 1:
        noise = np.zeros((), dt)
    else:
        noise = _random.bernoulli(input.shape, 1 - p, dt)
        noise /= dt.type(1 - p)
    noise = Tensor._wrap(noise)
    return input.mul_(noise) if inplace else input * noise


# --- encodings ----------------------------------------------------------------------------------

def one_hot(tensor, num_classes=-1):
    """Each class index as a row of 0s with a 1 at that index (int64; ``num_classes=-1``: max + 1)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"one_hot(): argument 'input' (position 1) must be Tensor, not {type(tensor).__name__}")
    if tensor.dtype is not _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    a = tensor._data
    if a.size == 0 and num_classes <= 0:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if num_classes == -1:
        num_classes = int(a.max()) + 1
    if a.size and a.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if a.size and a.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._wrap((a[..., None] == np.arange(num_classes)).astype(np.int64))


# --- losses -------------------------------------------------------------------------------------

def _reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_sizes(input, target):
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size "
                      f"({input.size()}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _broadcast(input, target):
    """Both expanded to one shape (ExpandBackward0 only where a shape changes), as broadcast_tensors does."""
    try:
        shape = tuple(np.broadcast_shapes(input.shape, target.shape))
    except ValueError:
        raise _broadcast_error(input.shape, target.shape) from None
    return tuple(t if t.shape == shape else t.expand(*shape) for t in (input, target))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """mean((input − target)²): one MseLossBackward0 node, its gradient 2(input − target)/n."""
    _check_sizes(input, target)
    _reduction(reduction)
    a, b = _broadcast(input, target)
    if a.dtype is not b.dtype:
        dt = _dtype.result_type(a, b)
        a, b = a.to(dt), b.to(dt)
    return apply(OPS["mse_loss"], (a, b), reduction=reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """mean(|input − target|): composed in PyTorch too (SubBackward0, AbsBackward0, MeanBackward0)."""
    _check_sizes(input, target)
    _reduction(reduction)
    a, b = _broadcast(input, target)
    loss = (a - b).abs()
    return loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()

