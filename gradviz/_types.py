"""The small types around a tensor: its device, layout, shape (``Size``), the named pairs that
``max(dim)`` returns, a dim or index wrapped into range (``Wrapped``, ``WorkedOut``), and ``TensorBase``, the type every gradviz tensor has.

``TensorBase`` lets the modules below :mod:`gradviz.tensor` (promotion, indexing, in-place writes)
recognise a tensor without importing the class that does the maths: ``Tensor`` derives from it,
as ``torch.Tensor`` derives from ``torch._C.TensorBase``.
"""

import math

__all__ = ["TensorBase", "device", "check_device", "layout", "strided", "Size", "return_types", "Wrapped", "WorkedOut", "wrapped", "int64", "remembered", "as_written"]


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


class Wrapped(int):
    """A negative dim or index wrapped into range (dim -1 of a matrix is 1), which remembers how it
    was written: the op and its gradient rule use the number, the node shows ``written``.

    PyTorch's node keeps a dim as the user wrote it, an int64 that ``grad_fn._saved_dim`` reads
    through an unsigned getter: ``x.softmax(-1)`` shows 18446744073709551615 (2**64 - 1), and
    ``x.softmax(1)`` shows 1.  Only a negative one is made a Wrapped (the only kind whose two
    numbers differ), so a dim written as 0 or 1 stays a plain int.

    >>> d = wrapped(-1, 2); d, d.written, as_written(d), as_written((d, 0))
    (1, -1, 18446744073709551615, (18446744073709551615, 0))
    """

    def __new__(cls, value, written):
        self = super().__new__(cls, value)
        self.written = written
        return self

    def __getnewargs__(self):      # (copied and pickled whole)
        return int(self), self.written


class WorkedOut(tuple):
    """A tuple the op uses, worked out from what was written, which the node shows: the dims a
    reduction runs over (every one for ``dim=None`` or ``()``, none of a 0-d tensor's for ``dim=-1``;
    ``x.sum(dim=None)``'s ``_saved_dim`` is None, as in PyTorch), a split's sizes (its ``split_size``).

    >>> as_written(WorkedOut((0, 1), None)), as_written(WorkedOut((), (wrapped(-1, 1),)))
    (None, (18446744073709551615,))
    """

    def __new__(cls, dims, written):
        self = super().__new__(cls, dims)
        self.written = written
        return self

    def __getnewargs__(self):
        return tuple(self), self.written


def wrapped(index, n):
    """``index`` (a dim, or a position along a dim of size ``n``) wrapped into ``range(n)``; a negative
    one as a :class:`Wrapped` that remembers it (``index`` is checked to be in range already)."""
    return index if index >= 0 else Wrapped(index % n, int(index))


def int64(value):
    """An int64 parameter a node keeps (nll_loss's ``ignore_index``): shown, as PyTorch's unsigned
    getter shows it, 2**64 + it when negative (-100 is 18446744073709551516)."""
    return value if value >= 0 else Wrapped(value, int(value))


def remembered(value, written):
    """``value``, remembering that it was written as ``written`` where the two differ (a slice's
    bound: ``x[:, -2:]`` starts at 1 of 3, and its node shows -2, as 2**64 - 2)."""
    return value if value == written else Wrapped(value, int(written))


def as_written(value):
    """A dim or index (or a tuple of them) as PyTorch's node shows it: as written, -1 as 2**64 - 1."""
    kind = type(value)
    if kind is Wrapped:
        return value.written % 2 ** 64
    if kind is WorkedOut:
        return as_written(value.written)
    if kind is tuple and any(type(v) is Wrapped for v in value):
        return tuple(as_written(v) for v in value)
    return value


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
