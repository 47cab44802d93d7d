"""Tensor methods PyTorch writes out of other ops (its CompositeImplicitAutograd functions): the graph
they record is the ops they call, so a drawing shows ``tile`` as the RepeatBackward0 it is.

>>> import gradviz as torch
>>> x = torch.tensor([1.0, 4.0, 9.0], requires_grad=True)
>>> x.diff()
tensor([3., 5.], grad_fn=<SubBackward0>)
>>> x.tile(2).grad_fn.name(), x.broadcast_to(2, 3).grad_fn.name()
('RepeatBackward0', 'ExpandBackward0')
"""

from . import _dtype
from ._matmul_and_joins import cat
from ._operands import _dims, _shape_args
from ._types import TensorBase

__all__ = ["tile", "broadcast_to", "diff", "install_composites"]


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
    ends = [t for t in (prepend, append) if t is not None]
    for t in ends:
        if not isinstance(t, TensorBase) or t.ndim != self.ndim:
            raise RuntimeError(f"diff expects {'prepend' if t is prepend else 'append'} or "
                               f"{'append' if t is prepend else 'prepend'} to be the same dimension as input")
    if ends:
        self = cat([t for t in (prepend, self, append) if t is not None], d)
    if n == 0:              # PyTorch hands back a copy (its graph: CopyBackwards)
        return self.new_zeros(self.shape).copy_(self) if self.dtype.is_floating_point else self.clone()
    length = self.shape[d] - 1
    for _ in range(min(n, self.shape[d])):
        later, earlier = self.narrow(d, 1, length), self.narrow(d, 0, length)
        self = later ^ earlier if self.dtype is _dtype.bool else later - earlier
        length -= 1
    return self


def install_composites(cls):
    """Set the composites as methods of the tensor class ``cls``."""
    for fn in (tile, broadcast_to, diff):
        setattr(cls, fn.__name__, fn)
