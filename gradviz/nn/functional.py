"""``torch.nn.functional``: layers and losses as plain functions, recording the nodes PyTorch records."""

import warnings

import numpy as np

from .. import _dtype, _cpu_generator
from .._nn_ops import _bn_stats
from .. import kernels, linalg
from .._activation_functions import (celu, celu_, elu, elu_, gelu, hardsigmoid, hardtanh, hardtanh_, leaky_relu,
                                     leaky_relu_, logsigmoid, mish, relu6, selu, selu_, silu, softplus, softsign)
from ..autograd import no_grad
from ..ops import OPS
from .._types import int64
from ..tensor import Tensor, _broadcast_error, apply

__all__ = ["linear", "relu", "sigmoid", "tanh", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_", "celu",
           "celu_", "gelu", "silu", "softplus", "hardtanh", "hardtanh_", "relu6", "mish", "logsigmoid", "softsign",
           "hardsigmoid", "softmax", "softmin", "log_softmax", "dropout", "embedding", "batch_norm", "layer_norm",
           "one_hot", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "normalize", "cosine_similarity", "nll_loss", "cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits"]


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


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """e^{-x_i} / Σ_j e^{-x_j} along ``dim``: the softmax of ``-input`` (NegBackward0, then SoftmaxBackward0)."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim)
    return (-input).softmax(dim, dtype=dtype)


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
        noise = _cpu_generator.bernoulli(input.shape, 1 - p, dt)
        noise /= dt.type(1 - p)
    noise = Tensor._wrap(noise)
    return input.mul_(noise) if inplace else input * noise


# --- embedding and batch norm ------------------------------------------------------------------------

def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Row ``i`` of ``weight`` for each index ``i`` in ``input`` (EmbeddingBackward0: each row's
    gradient is the sum of the gradients of its lookups; the padding row gets none)."""
    if input._data.dtype.name not in ("int64", "int32"):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("gradviz's embedding has no max_norm, scale_grad_by_freq or sparse gradients")
    idx = input._data.astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return apply(OPS["embedding"], (weight,), indices=idx, padding_idx=padding_idx)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Each channel (axis 1) normalised to mean 0 and variance 1 -- with the batch's statistics while
    training (and the running ones updated in place), the running ones otherwise -- then scaled by
    ``weight`` and shifted by ``bias``: one NativeBatchNormBackward0 node."""
    if training and input.numel() // input.shape[1] == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.size()}")
    c, dt = input.shape[1], input._data.dtype
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    w = weight if weight is not None else Tensor._wrap(np.ones(c, dt))
    b = bias if bias is not None else Tensor._wrap(np.zeros(c, dt))
    rm = None if running_mean is None else running_mean._data
    rv = None if running_var is None else running_var._data
    out = apply(OPS["native_batch_norm"], (input, w, b), running_mean=rm, running_var=rv, training=training, eps=eps,
                has_weight=weight is not None, has_bias=bias is not None)
    if training and running_mean is not None:
        _update_running_stats(input._data, running_mean, running_var, momentum)
    return out


def _update_running_stats(x, running_mean, running_var, momentum):
    """running ← momentum·batch + (1 − momentum)·running, in the buffers' dtype (the variance
    unbiased, over n − 1), from the op's own statistics, so the update and the output agree; rounded
    as PyTorch's compiled update rounds them (measured on torch 2.13: the mean's products and sum
    each rounded; the variance's too in float64, its last product fused into its sum in float32;
    1 − momentum taken from the momentum already rounded to the dtype, which matters for
    momentum=None's 1/3, 1/5...)."""
    mean, _, var_sum = _bn_stats(x, True, None, None, 0.0)
    dt = running_mean._data.dtype.type
    unbiased = var_sum.astype(dt) / dt(x.size // x.shape[1] - 1)
    m = dt(momentum)
    one_minus = dt(1) - m
    running_mean._data[...] = m * mean.astype(dt) + one_minus * running_mean._data     # three roundings
    if dt is np.float64:
        running_var._data[...] = m * unbiased + one_minus * running_var._data
    else:
        running_var._data[...] = kernels.fma(m, unbiased, one_minus * running_var._data, dt)
    running_mean._vbox[0] += 1
    running_var._vbox[0] += 1


def _sizes(shape):
    return "[" + ", ".join(str(n) for n in shape) + "]"


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Each row -- the last ``len(normalized_shape)`` dimensions -- normalised to mean 0 and
    variance 1 with its own statistics, then scaled by ``weight`` and shifted by ``bias``, both of
    ``normalized_shape``: one NativeLayerNormBackward0 node.  Bit for bit as PyTorch's CPU kernel in
    float32 and float64 (float16: computed in float32, within its last bit).

    >>> import gradviz as torch
    >>> torch.nn.functional.layer_norm(torch.tensor([[1., 2., 3.]]), (3,))
    tensor([[-1.2247,  0.0000,  1.2247]])
    """
    if not isinstance(normalized_shape, (tuple, list)) or not all(isinstance(n, (int, np.integer))
                                                                  for n in normalized_shape):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    shape = tuple(int(n) for n in normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{_sizes(t.shape)} and normalized_shape = {_sizes(shape)}")
    if input.ndim < len(shape) or tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={_sizes(shape)}, expected input with shape [*, "
                           f"{', '.join(str(n) for n in shape)}], but got input of size{_sizes(input.shape)}")
    dt = input._data.dtype
    if dt.kind != "f":
        raise NotImplementedError(f'"LayerNormKernelImpl" not implemented for \'{_dtype.TYPE_NAMES[dt.name]}\'')
    if any(t is not None and t._data.dtype != dt for t in (weight, bias)):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    w = weight if weight is not None else Tensor._wrap(np.ones(shape, dt))
    b = bias if bias is not None else Tensor._wrap(np.zeros(shape, dt))
    return apply(OPS["native_layer_norm"], (input, w, b), normalized_shape=shape, eps=eps,
                 has_weight=weight is not None, has_bias=bias is not None)


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



def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """½(x − t)²/β where |x − t| < β, |x − t| − ½β beyond, averaged: one SmoothL1LossBackward0 node.

    ``beta=0`` is :func:`l1_loss` (composed: SubBackward0, AbsBackward0, MeanBackward0), as in PyTorch.
    """
    _check_sizes(input, target)
    _reduction(reduction)
    a, b = _broadcast(input, target)
    if beta == 0.0:
        loss = (a - b).abs()
        return loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    # (an integer target is made floating; a float64 one is promoted inside the op: no ToCopyBackward0)
    if not b.is_floating_point():
        b = b.to(a.dtype if a.is_floating_point() else _dtype.result_type(a, b))
    return apply(OPS["smooth_l1_loss"], (a, b), reduction=reduction, beta=float(beta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """½(x − t)² where |x − t| < δ, δ(|x − t| − ½δ) beyond, averaged: one HuberLossBackward0 node.

    With ``delta=1`` it is smooth_l1_loss; in general δ times smooth_l1_loss with β = δ.  ``weight``
    (one per element) multiplies the unreduced losses before the mean or sum, as PyTorch does.
    """
    _check_sizes(input, target)
    a, b = _broadcast(input, target)
    if weight is not None:
        if weight.size() != input.size():
            raise ValueError("Weights and input must have the same size.")
        loss = huber_loss(a, b, reduction="none", delta=delta) * weight
        if reduction == "none":
            return loss
        if reduction == "sum":
            return loss.sum()
        if reduction == "mean":
            return loss.mean()
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    _reduction(reduction)
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    # (PyTorch writes the loss into a tensor like the input: a float64 target computes in double, then rounds)
    if not b.is_floating_point():
        b = b.to(a.dtype if a.is_floating_point() else _dtype.result_type(a, b))
    return apply(OPS["huber_loss"], (a, b), reduction=reduction, delta=float(delta))


_KL_MEAN = ("reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.")


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Σ t·(log t − x) with x = log q (log-probabilities) and t the target's probabilities: written out of
    other ops, as PyTorch 2.13 writes it -- xlogy(t, t) − t·x (log_target: e^t·(t − x)), then the mean,
    the sum, or ('batchmean') the sum divided by the batch size, the KL divergence itself.
    """
    if reduction == "mean":
        warnings.warn(_KL_MEAN, stacklevel=2)
    if reduction != "batchmean":
        _reduction(reduction)
    for t in (input, target):
        if not t.is_floating_point():
            raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        out = target.exp() * (target - input)
    else:
        # (t·x recorded first, as PyTorch's compiled C++ evaluates the right operand first: a target that
        # requires grad gets xlogy's two parts added before t·x's, as there)
        product = target * input
        out = target.xlogy(target) - product
    if reduction == "none":
        return out
    if reduction == "mean":
        return out.mean()
    out = out.sum()
    return out / input.size()[0] if reduction == "batchmean" and input.dim() != 0 else out


# --- classification losses ------------------------------------------------------------------------

_LEGACY_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
                "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _type_name(t):
    return _LEGACY_TYPE[t._data.dtype.name]


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """−(the score of each row's target class), averaged over the rows: one NllLossBackward0 node.

    With log-probabilities as input (``log_softmax``), this is the cross entropy; ``weight`` weighs
    each class, ``ignore_index`` rows count for nothing (not even in the mean's denominator).  The
    classes are dimension 1: an image batch (N, C, H, W) with a class per pixel is one
    NllLoss2DBackward0 node; (N, C, d1) or more dimensions are viewed as (N, C, 1, -1) first, as
    PyTorch does.
    """
    _reduction(reduction)
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and target.ndim > 0 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    n_classes = input.shape[0 if input.ndim == 1 else 1]
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}")
    if target._data.dtype.name not in ("int64", "uint8"):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_type_name(target)}")
    if input.ndim == 4:
        if target.ndim != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {target.ndim}")
        if tuple(target.shape) != tuple(input.shape[:1] + input.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
        key = "nll_loss2d"
    elif input.ndim > 2:
        n, out_size = input.shape[0], [input.shape[0]] + list(input.shape[2:])
        if tuple(target.shape[1:]) != tuple(input.shape[2:]):
            raise RuntimeError(f"Expected target size {out_size}, got {list(target.shape)}")
        flat = input.contiguous().view(n, n_classes, 1, -1) if input.numel() else input.view(n, n_classes, 0, 0)
        flat_target = target.contiguous().view(n, 1, -1) if target.numel() else target.view(n, 0, 0)
        out = nll_loss(flat, flat_target, weight, ignore_index=ignore_index, reduction=reduction)
        return out.view(out_size) if reduction == "none" else out
    else:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if not (input.ndim == 1 and target.ndim == 0) and input.shape[0] != target.shape[0]:
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)}, target: {list(target.shape)})")
        key = "nll_loss"
    t = target._data.astype(np.int64)
    for c in t.reshape(-1).tolist():
        if c != ignore_index and not 0 <= c < n_classes:
            raise IndexError(f"Target {c} is out of bounds.")
    w = None if weight is None else weight._data.astype(input._data.dtype)
    return apply(OPS[key], (input,), target=t, weight=w, reduction=reduction, ignore_index=int64(ignore_index))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """The cross entropy between the softmax of ``input`` (scores, "logits") and the target classes:
    ``nll_loss(log_softmax(input, 1), target)``, recorded as PyTorch records it (NllLossBackward0
    after LogSoftmaxBackward0). A target of class probabilities (the input's shape) is summed instead.

    With ``label_smoothing`` ε, the target is a mix of the class (1 − ε) and of all classes alike
    (ε / C), written as PyTorch writes it: ``(1 − ε)·nll + ε/C · (−Σ_c log p_c)``, reduced alike.
    """
    _reduction(reduction)
    class_dim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[class_dim]
    if input.shape == target.shape:           # class probabilities: −Σ p·log softmax(x), composed
        if not target.dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class probabilities, got "
                               f"{_type_name(target)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes "
                               f"but got weight tensor of shape: {list(weight.shape)}")
        logp = input.log_softmax(class_dim)
        if label_smoothing > 0.0:
            _smoothing_in_range(label_smoothing)
            target = target * (1 - label_smoothing) + (label_smoothing / n_classes)
        terms = logp * target
        if weight is not None:
            terms = terms * weight.view(*([n_classes] + [1] * (input.ndim - 1 - class_dim)))
        if reduction == "none":
            return -terms.sum(class_dim)
        if reduction == "sum":
            return -terms.sum()
        return apply(OPS["div_scalar"], (-terms.sum(),), c=input.numel() // n_classes)
    logp = input.log_softmax(class_dim)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing > 0.0:
        return nll
    _smoothing_in_range(label_smoothing)
    if weight is not None:
        shape = [1] * input.ndim
        shape[class_dim] = weight.shape[0]
        smooth = -(logp * weight.view(*shape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    ignored = target == ignore_index
    smooth.masked_fill_(ignored, 0.0)
    if reduction == "mean":
        counted = weight.gather(0, target.masked_select(~ignored).flatten()) if weight is not None else ~ignored
        smooth = smooth.sum() / counted.sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return apply(OPS["mul_scalar"], (nll,), c=1 - label_smoothing) + \
        apply(OPS["mul_scalar"], (smooth,), c=label_smoothing / n_classes)


def _smoothing_in_range(label_smoothing):
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")


def _bce_inputs(input, target, weight, reduction):
    _reduction(reduction)
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_type_name(target)} but expected {_type_name(input)}")
    return None if weight is None else np.broadcast_to(weight._data, input.shape).astype(input._data.dtype)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """−(t·log p + (1 − t)·log(1 − p)) for probabilities p (after a sigmoid): BinaryCrossEntropyBackward0."""
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    w = _bce_inputs(input, target, weight, reduction)
    return apply(OPS["binary_cross_entropy"], (input, target), weight=w, reduction=reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """The binary cross entropy of sigmoid(input), computed from the scores directly (no overflow,
    no log of 0): BinaryCrossEntropyWithLogitsBackward0. ``pos_weight`` weighs the positive class."""
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    _reduction(reduction)
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"result type {_type_name(input)} can't be cast to the desired output type "
                           f"{_type_name(target)}")
    target = target.to(input.dtype) if target.dtype is not input.dtype else target
    w = _bce_inputs(input, target, weight, reduction)
    pw = None if pos_weight is None else np.broadcast_to(pos_weight._data, input.shape).astype(input._data.dtype)
    return apply(OPS["binary_cross_entropy_with_logits"], (input, target), weight=w, pos_weight=pw,
                 reduction=reduction)


# --- distances ------------------------------------------------------------------------------------

def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """x / max(‖x‖_p, ε) along ``dim``: rows of length 1, written out of norm, clamp_min, expand and div as PyTorch's is."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom if out is None else out.copy_(input / denom)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """⟨x1, x2⟩ / (‖x1‖ ‖x2‖) along ``dim``, as PyTorch computes it: each input divided by its norm
    (at least ``eps``) first, so the result stays within [-1, 1]; then their product summed."""
    dt = _dtype.result_type(x1, x2)
    if not dt.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_dtype.TYPE_NAMES[dt.name]}")
    x1, x2 = (t if t.dtype.is_floating_point else t.to(dt) for t in (x1, x2))
    if x1.shape != x2.shape:            # (expand_outplace: both expanded, once the shapes differ)
        try:
            shape = tuple(np.broadcast_shapes(x1.shape, x2.shape))
        except ValueError:
            raise _broadcast_error(x1.shape, x2.shape) from None
        x1, x2 = x1.expand(*shape), x2.expand(*shape)
    norms = [linalg.vector_norm(t, 2, dim=dim, keepdim=True).clone() for t in (x1, x2)]
    with no_grad():
        for n in norms:
            n.clamp_min_(eps)
    return ((x1 / norms[0]) * (x2 / norms[1])).sum(dim)

