"""The layers: Linear, the activations, Sequential -- each a Module printing as PyTorch's does."""

import math
import operator
from collections import OrderedDict
from collections.abc import Iterable
from itertools import islice

from .. import _dtype
from ..autograd import no_grad
from .._creation import _filled
from . import functional
from . import init
from .module import Module, _addindent
from .parameter import Parameter

__all__ = ["Linear", "Identity", "Flatten", "ReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Dropout", "Embedding",
           "Sequential", "ModuleList"]


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


# --- containers ---------------------------------------------------------------------------------

class Sequential(Module):
    """Modules applied one after another; each is registered under its position ("0", "1"...).

    >>> import gradviz as torch
    >>> torch.nn.Sequential(torch.nn.Linear(2, 1), torch.nn.Sigmoid())
    Sequential(
      (0): Linear(in_features=2, out_features=1, bias=True)
      (1): Sigmoid()
    )
    """

    __module__ = "gradviz.nn.modules.container"

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _item(self, iterator, idx):
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return next(islice(iterator, idx % size, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._item(iter(self._modules.values()), idx)

    def __setitem__(self, idx, module):
        setattr(self, self._item(iter(self._modules.keys()), idx), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A Python list of modules whose parameters the model can find (a plain list would hide them).

    >>> import gradviz as torch
    >>> torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)] + [torch.nn.ReLU()])
    ModuleList(
      (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)
      (3): ReLU()
    )
    """

    __module__ = "gradviz.nn.modules.container"

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def _index(self, idx):
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx % len(self))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._index(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._index(idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._index(idx))
        modules = list(self._modules.values())     # renumber from 0
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(modules))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(list(self) + list(other)):
            combined.add_module(str(i), module)
        return combined

    def insert(self, index, module):
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def __repr__(self):
        # PyTorch's: runs of equal children print once, as "(0-2): 3 x Linear(...)"
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs = []                      # [first index, last index, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = [_addindent(f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}", 2) for a, b, r in runs]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"
