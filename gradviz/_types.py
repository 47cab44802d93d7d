"""The small types around a tensor: its device, layout, shape (``Size``), the named pairs that
``max(dim)`` returns, and ``TensorBase``, the type every gradviz tensor has.

``TensorBase`` lets the modules below :mod:`gradviz.tensor` (promotion, indexing, in-place writes)
recognise a tensor without importing the class that does the maths: ``Tensor`` derives from it,
as ``torch.Tensor`` derives from ``torch._C.TensorBase``.
"""

import math

__all__ = ["TensorBase", "device", "check_device", "layout", "strided", "Size", "return_types"]


class TensorBase:
    """What ``isinstance(v, TensorBase)`` asks below gradviz.tensor: is ``v`` a gradviz tensor?"""

    __slots__ = ()


class device:
    """Where a tensor lives: ``device(type='cpu')`` (gradviz computes on the CPU only)."""

    __module__ = "gradviz"

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        kind, _, number = str(type).partition(":")
        self.type, self.index = kind, int(number) if number else index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


def check_device(device):
    """``device="cuda"`` fails as it does in a PyTorch built without CUDA: gradviz computes on the CPU."""
    if device is not None and str(device).split(":")[0] not in ("cpu",):
        raise AssertionError("Torch not compiled with CUDA enabled")


class layout:
    """How a tensor's elements are laid out in memory; gradviz has PyTorch's default only."""

    __module__ = "gradviz"

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "gradviz." + self.name


strided = layout("strided")


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``gradviz.Size([2, 3])``."""

    __module__ = "gradviz"

    def __repr__(self):
        return f"gradviz.Size({list(self)!r})"

    __str__ = __repr__

    # slicing, joining and repeating a shape gives a shape
    def __getitem__(self, key):
        item = super().__getitem__(key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to gradviz.Size")
        return Size(tuple(self) + other)

    def __radd__(self, other):
        return Size(other + tuple(self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def numel(self):
        return math.prod(self)


class _ReturnType(tuple):
    _fields = ("values", "indices")

    def __new__(cls, values, indices):
        return super().__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])

    def __repr__(self):
        return f"gradviz.return_types.{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"


class return_types:
    """``torch.return_types``: the named pairs that ``max(dim)`` and ``min(dim)`` return."""
    max = type("max", (_ReturnType,), {"_name": "max", "__module__": "gradviz.return_types"})
    sort = type("sort", (_ReturnType,), {"_name": "sort", "__module__": "gradviz.return_types"})
    topk = type("topk", (_ReturnType,), {"_name": "topk", "__module__": "gradviz.return_types"})
    median = type("median", (_ReturnType,), {"_name": "median", "__module__": "gradviz.return_types"})
    min = type("min", (_ReturnType,), {"_name": "min", "__module__": "gradviz.return_types"})
