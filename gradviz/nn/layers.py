"""The layers: Linear, the activations, Dropout, Embedding -- each a Module printing as PyTorch's does.

(The containers, Sequential and the lists and dicts of modules and parameters, are in :mod:`.container`;
the BatchNorms in :mod:`.batchnorm`.)"""

import math

from .. import _dtype
from ..autograd import no_grad
from .._creation import _filled
from . import functional
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Linear", "Identity", "Flatten", "Unflatten", "ReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Softmin",
           "CosineSimilarity", "Dropout", "Embedding"]


class Linear(Module):
    """y = x Wᵀ + b, with W of shape (out_features, in_features) and PyTorch's initial values.

    >>> import gradviz as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.nn.Linear(3, 2)
    Linear(in_features=3, out_features=2, bias=True)
    """

    __module__ = "gradviz.nn.modules.linear"

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        dt = _dtype.as_dtype(dtype) or _dtype.get_default_dtype()
        self.weight = Parameter(_filled((out_features, in_features), 0.0, dt, False))
        if bias:
            self.bias = Parameter(_filled((out_features,), 0.0, dt, False))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_ with a = √5 gives U(−1/√in, 1/√in) for W; the bias then draws from the
        # same range.  The weight draws first, so after manual_seed the numbers are PyTorch's.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1]
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return functional.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Identity(Module):
    """Returns its input unchanged (a placeholder layer)."""

    __module__ = "gradviz.nn.modules.linear"

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Module):
    """Flattens dimensions ``start_dim`` to ``end_dim`` (by default all but the batch dimension)."""

    __module__ = "gradviz.nn.modules.flatten"

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dimension ``dim`` into ``unflattened_size`` (Flatten's inverse: back to images from rows)."""

    __module__ = "gradviz.nn.modules.flatten"

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(unflattened_size).__name__}")
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError("unflattened_size must be tuple of ints, "
                                f"but found element of type {type(elem).__name__} at pos {idx}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


# --- activations --------------------------------------------------------------------------------

class ReLU(Module):
    """max(0, x), elementwise (ReluBackward0)."""

    __module__ = "gradviz.nn.modules.activation"

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return functional.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """σ(x) = 1 / (1 + e^{−x}), elementwise (SigmoidBackward0)."""

    __module__ = "gradviz.nn.modules.activation"

    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    """tanh(x), elementwise (TanhBackward0)."""

    __module__ = "gradviz.nn.modules.activation"

    def forward(self, input):
        return input.tanh()


class Softmax(Module):
    """Softmax along ``dim`` (SoftmaxBackward0)."""

    __module__ = "gradviz.nn.modules.activation"

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return functional.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log softmax along ``dim`` (LogSoftmaxBackward0)."""

    def forward(self, input):
        return functional.log_softmax(input, self.dim, _stacklevel=5)


class Softmin(Softmax):
    """Softmax of ``-input`` along ``dim``: the smallest score gets the largest weight."""

    def forward(self, input):
        return functional.softmin(input, self.dim, _stacklevel=5)


class CosineSimilarity(Module):
    """⟨x1, x2⟩ / (‖x1‖ ‖x2‖) along ``dim`` (``functional.cosine_similarity``)."""

    __module__ = "gradviz.nn.modules.distance"

    def __init__(self, dim=1, eps=1e-08):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return functional.cosine_similarity(x1, x2, self.dim, self.eps)


# --- dropout ------------------------------------------------------------------------------------

class Dropout(Module):
    """While training, zeroes each element with probability ``p`` and scales the others by
    1/(1 − p); in ``eval()`` mode it passes the input through. The masks after ``manual_seed`` are PyTorch's.

    >>> import gradviz as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.nn.Dropout(0.5)(torch.ones(6))
    tensor([0., 0., 2., 0., 0., 0.])
    """

    __module__ = "gradviz.nn.modules.dropout"

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return functional.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


# --- embedding and batch norm ------------------------------------------------------------------------

class Embedding(Module):
    """A table of ``num_embeddings`` learned vectors of size ``embedding_dim``; ``emb(indices)`` looks
    rows up (initial values: standard normal, as PyTorch draws them; the padding row zero).

    >>> import gradviz as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.nn.Embedding(10, 3, padding_idx=0)
    Embedding(10, 3, padding_idx=0)
    """

    __module__ = "gradviz.nn.modules.sparse"

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < num_embeddings, "Padding_idx must be within num_embeddings"
            elif padding_idx < 0:
                assert padding_idx >= -num_embeddings, "Padding_idx must be within num_embeddings"
                padding_idx = num_embeddings + padding_idx
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        dt = _dtype.as_dtype(dtype) or _dtype.get_default_dtype()
        if _weight is None:
            self.weight = Parameter(_filled((num_embeddings, embedding_dim), 0.0, dt, False), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return functional.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq=True"
        if self.sparse is not False:
            s += ", sparse=True"
        return s
