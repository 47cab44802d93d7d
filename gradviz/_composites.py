"""Tensor methods PyTorch writes out of other ops (its CompositeImplicitAutograd functions): the graph
they record is the ops they call, so a drawing shows ``tile`` as the RepeatBackward0 it is.

>>> import gradviz as torch
>>> x = torch.tensor([1.0, 4.0, 9.0], requires_grad=True)
>>> x.diff()
tensor([3., 5.], grad_fn=<SubBackward0>)
>>> x.tile(2).grad_fn.name(), x.broadcast_to(2, 3).grad_fn.name()
('RepeatBackward0', 'ExpandBackward0')
"""

import warnings

import numpy as np

from . import _dtype
from ._matmul_and_joins import cat, outer
from ._operands import _dims, _shape_args
from ._types import TensorBase

__all__ = ["tile", "broadcast_to", "diff", "ravel", "movedim", "fliplr", "flipud", "take_along_dim", "argwhere",
           "count_nonzero", "meshgrid", "install_composites"]


def tile(self, *dims):
    """Copies of ``self`` side by side: ``repeat`` with the missing leading counts taken as 1."""
    dims = _shape_args(dims)
    return self.repeat((1,) * (self.ndim - len(dims)) + dims)


def broadcast_to(self, *size):
    """``self`` seen with the shape ``size`` (``expand``: no copy; ``-1`` keeps a size)."""
    return self.expand(*size)


def diff(self, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along ``dim``: ``x[1:] - x[:-1]``, ``n`` times (XOR for bools), after
    ``prepend`` and ``append`` are put at the ends."""
    if self.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _dims(dim, self.ndim)[0]
    parts = [t for t in (prepend, self, append) if t is not None]
    for t in parts:
        if not isinstance(t, TensorBase) or t.ndim != self.ndim:
            raise RuntimeError(f"diff expects {'prepend' if t is prepend else 'append'} or "
                               f"{'append' if t is prepend else 'prepend'} to be the same dimension as input")
    if len(parts) > 1:
        self = cat(parts, d)
    if n == 0:              # PyTorch hands back a copy (its graph: CopyBackwards)
        return self.new_zeros(self.shape).copy_(self) if self.dtype.is_floating_point else self.clone()
    length = self.shape[d] - 1
    for _ in range(min(n, self.shape[d])):
        later, earlier = self.narrow(d, 1, length), self.narrow(d, 0, length)
        self = later ^ earlier if self.dtype is _dtype.bool else later - earlier
        length -= 1
    return self


def ravel(self):
    """The elements in one row: ``contiguous().view(-1)`` (a view where the elements lie in order, else a copy)."""
    return self.contiguous().view(-1)


def movedim(self, source, destination):
    """Dims ``source`` moved to the places ``destination`` (the others keep their order): a permute."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
                           f"contain the same number of dims as destination ({list(dst)} dims)")
    src, dst = _dims(src, self.ndim) if src else (), _dims(dst, self.ndim) if dst else ()
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(source if name == 'source' else destination)})")
    order = [None] * self.ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(self.ndim) if d not in src)
    return self.permute([d if d is not None else next(rest) for d in order])


def fliplr(self):
    """Left and right swapped: ``flip(1)``."""
    if self.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return self.flip(1)


def flipud(self):
    """Up and down swapped: ``flip(0)``."""
    if self.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return self.flip(0)


def take_along_dim(self, indices, dim=None):
    """``gather`` with ``indices`` broadcast against ``self`` (but along ``dim``); without ``dim``, of
    the flattened tensor."""
    if dim is None:
        return self.view(-1).gather(0, indices.view(-1))
    d = int(_dims(dim, self.ndim)[0])     # (PyTorch's gather is given the dim wrapped)
    if indices.ndim != self.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {self.ndim} dimensions for input, and {indices.ndim} "
                           "dimensions for indices")
    sizes = list(self.shape)
    sizes[d] = indices.shape[d]
    shape = list(np.broadcast_shapes(tuple(sizes), tuple(indices.shape)))
    indices = indices.broadcast_to(shape)
    shape[d] = self.shape[d]
    return self.broadcast_to(shape).gather(d, indices)


def argwhere(self):
    """The indices of the nonzero elements, one row each (``nonzero()``)."""
    return self.nonzero()


def count_nonzero(self, dim=None):
    """How many elements are not zero (along ``dim``): an int64 tensor, no gradient."""
    dims = None if dim is None else _dims(dim, self.ndim)
    return self._wrap(np.asarray(np.count_nonzero(self._data, axis=dims), np.int64))


def meshgrid(*tensors, indexing=None):
    """Grids from 1-D tensors: each viewed along its own dim and expanded to the grid's shape
    (``indexing="ij"``, the default, as matrices are indexed; ``"xy"``, as images are: the first two
    tensors' dims swapped)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    swap = indexing == "xy" and len(tensors) >= 2
    order = [1, 0, *range(2, len(tensors))] if swap else list(range(len(tensors)))
    ts = [tensors[k] for k in order]
    shape = [t.numel() for t in ts]
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        grids.append(t.view(view).expand(*shape))
    if swap:                      # (the grids come back in the order of the tensors given)
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# The legacy casts, each ``.to(dtype)``: x.float(), x.long(), x.byte()...
_CASTS = {"float": _dtype.float32, "double": _dtype.float64, "half": _dtype.float16, "long": _dtype.int64,
          "int": _dtype.int32, "short": _dtype.int16, "char": _dtype.int8, "byte": _dtype.uint8, "bool": _dtype.bool}


def _cast(name, dtype):
    def cast(self, memory_format=None):
        return self.to(dtype)
    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"``self.to({dtype!r})``: a copy in {dtype.name} (self itself when it is {dtype.name} already)."
    return cast


def install_composites(cls):
    """Set the composites and the casts as methods of the tensor class ``cls``."""
    for fn in (tile, broadcast_to, diff, ravel, movedim, fliplr, flipud, take_along_dim, argwhere, count_nonzero):
        setattr(cls, fn.__name__, fn)
    cls.moveaxis, cls.swapdims, cls.outer, cls.ger = movedim, cls.transpose, outer, outer
    for name, dtype in _CASTS.items():
        setattr(cls, name, _cast(name, dtype))
