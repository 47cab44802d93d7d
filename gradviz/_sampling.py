"""A tensor's random draws and fills -- ``x.multinomial(n)``, ``x.bernoulli()``, ``x.uniform_()``,
``x.normal_()``, ``x.random_()`` -- with the numbers PyTorch's generator gives after ``manual_seed``
(or from ``generator=``); :mod:`gradviz._cpu_generator` is that generator. The functions are the
:class:`~gradviz.tensor.Tensor` methods of those names.
"""

import numpy as np

from . import _dtype
from . import _cpu_generator
from .autograd.engine import apply
from ._inplace import _check_leaf
from ._operands import _check_bernoulli, _check_bernoulli_p, _check_multinomial
from ._types import TensorBase
from .ops import OPS

__all__ = ["multinomial", "bernoulli", "bernoulli_", "uniform_", "normal_", "random_"]



def multinomial(self, num_samples, replacement=False, *, generator=None):
    """Indices drawn from each row of this tensor (non-negative weights): ``num_samples`` distinct ones, or
    with ``replacement=True`` any; after ``manual_seed`` (or with ``generator=``), PyTorch's draws."""
    _check_multinomial(self, num_samples, replacement)
    return type(self)._wrap(_cpu_generator.multinomial(self._data, int(num_samples), replacement, generator))


def bernoulli(self, p=None, *, generator=None):
    """0 or 1 per element, 1 with this tensor's value as probability (or with ``p``): PyTorch's draws."""
    if p is not None:
        return type(self)._wrap(_cpu_generator.bernoulli(self.shape, float(p), self._data.dtype, generator))
    _check_bernoulli(self)
    sample = _cpu_generator.bernoulli(self.shape, self._data, self._data.dtype, generator)
    return apply(OPS["bernoulli"], (self,), sample=sample)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0 or 1, 1 with probability ``p`` (a number, or a tensor of them)."""
    _check_leaf(self)
    probs = np.broadcast_to(p._data, self.shape) if isinstance(p, TensorBase) else _check_bernoulli_p(p)
    return self.fill_(_cpu_generator.bernoulli(self.shape, probs, self._data.dtype, generator))


def _fill_floats(t, kernel, draw):
    """Fill a floating-point ``t`` with ``draw(shape, dtype)``; other dtypes fail as PyTorch's kernel does."""
    _check_leaf(t)
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.TYPE_NAMES[t.dtype.name]}\'')
    return t.fill_(draw(t.shape, t._data.dtype))


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill with uniform samples in [a, b), the numbers PyTorch's generator gives."""
    return _fill_floats(self, "check_uniform_bounds", lambda shape, dt: _cpu_generator.rand(shape, dt, generator, a, b))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples, the numbers PyTorch's generator gives."""
    return _fill_floats(self, "normal_kernel_cpu", lambda shape, dt: _cpu_generator.randn(shape, dt, generator, mean, std))


def random_(self, low=None, high=None, *, generator=None):
    """Fill with integers in [low, high) (``random_(high)`` means [0, high); ``random_()`` the
    dtype's whole non-negative range, as the DataLoader draws its seeds)."""
    if low is None and high is None:
        _check_leaf(self)
        return self.fill_(_cpu_generator.random_full(self.shape, self._data.dtype, generator))
    if low is None:
        low = 0
    if high is None:
        low, high = 0, low
    return self.fill_(_cpu_generator.randint(low, high, self.shape, generator))
