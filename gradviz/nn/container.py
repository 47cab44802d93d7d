"""The containers: modules and parameters held in order (Sequential, ModuleList, ParameterList) or by
name (ModuleDict, ParameterDict), registered so that ``model.parameters()`` finds what they hold.

As PyTorch's ``torch/nn/modules/container.py``, whose reprs and errors these print.

>>> import gradviz as torch
>>> torch.nn.ModuleDict({"encoder": torch.nn.Linear(2, 3), "act": torch.nn.ReLU()})
ModuleDict(
  (encoder): Linear(in_features=2, out_features=3, bias=True)
  (act): ReLU()
)
>>> torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2, 3)), torch.ones(3)])
ParameterList(
    (0): Parameter containing: [gradviz.float32 of size 2x3]
    (1): Parameter containing: [gradviz.float32 of size 3]
)
"""

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import islice

from ..tensor import Tensor
from .module import Module, _addindent, _typename
from .parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


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


def _pairs(values, name):
    """The (key, value) pairs of what ``update`` is given: a mapping's items (a plain dict's sorted by
    key for ParameterDict, as PyTorch sorts them), or a sequence of pairs, PyTorch's errors otherwise."""
    if not isinstance(values, Iterable):
        raise TypeError(f"{'ParametersDict' if name == 'ParameterDict' else name}.update should be called with an "
                        f"iterable of key/value pairs, but got {type(values).__name__}")
    if isinstance(values, (OrderedDict, ModuleDict, ParameterDict)) or name == "ModuleDict" and isinstance(values, Mapping):
        return list(values.items())
    if isinstance(values, Mapping):
        return sorted(values.items())
    pairs = []
    for j, pair in enumerate(values):
        if not isinstance(pair, Iterable):
            raise TypeError(f"{name} update sequence element #{j} should be Iterable; is{type(pair).__name__}")
        if len(pair) != 2:
            raise ValueError(f"{name} update sequence element #{j} has length {len(pair)}; 2 is required")
        pairs.append((pair[0], pair[1]))
    return pairs


class ModuleDict(Module):
    """Modules by name, in the order they were put in: ``model.layers["encoder"]``."""

    __module__ = "gradviz.nn.modules.container"

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        for key, module in _pairs(modules, "ModuleDict"):
            self[key] = module


def _entry_line(key, value, typename=False):
    """One line of a ParameterList's or ParameterDict's repr: the tensor's kind, dtype and size (the
    dict names the type as ``torch.typename`` does, FloatTensor; the list prints the dtype)."""
    if not isinstance(value, Tensor):
        return f"  ({key}): Object of type: {type(value).__name__}"
    size = "x".join(str(n) for n in value.size())
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    return f"  ({key}): {kind} containing: [{_typename(value) if typename else value.dtype} of size {size}]"


class ParameterList(Module):
    """Parameters in order, each registered under its position: a plain tensor put in becomes a Parameter."""

    __module__ = "gradviz.nn.modules.container"

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _index(self, idx):
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx + len(self) if idx < 0 else idx)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._index(idx))

    def __setitem__(self, idx, param):
        # (every way into the list comes here: the one place a tensor is made a Parameter)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, self._index(idx), param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value):
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        if not isinstance(values, Iterable) or isinstance(values, Tensor):   # (a tensor is never unpacked here)
            raise TypeError("ParameterList.extend should be called with an iterable, but got " + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(_entry_line(k, p) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """Parameters by name: ``params["w"]``; a plain tensor put in becomes a Parameter."""

    __module__ = "gradviz.nn.modules.container"

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _attr(key):
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string "
                            f"(type is '{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key):
        return getattr(self, self._attr(key))

    def __setitem__(self, key, value):
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, self._attr(key), value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, self._attr(key))

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for k in self._keys.copy():
            del self[k]

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        k = next(reversed(self._keys))
        return k, self.pop(k)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        for key, value in _pairs(parameters, "ParameterDict"):
            self[key] = value

    def extra_repr(self):
        return "\n".join(_entry_line(k, p, typename=True) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other):
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other):
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other):
        self.update(other)
        return self
