"""The layers: Linear, the activations, Sequential -- each a Module printing as PyTorch's does."""

import math
from collections import OrderedDict
from itertools import islice
import operator

from .. import _dtype
from ..tensor import _filled
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Linear", "Identity", "Flatten", "ReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Sequential"]


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
        return F.linear(input, self.weight, self.bias)

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
        return F.relu(input, inplace=self.inplace)

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
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log softmax along ``dim`` (LogSoftmaxBackward0)."""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


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
