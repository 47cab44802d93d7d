"""``torch.random``: generators, seeding and the generator's state, as PyTorch has them.

The numbers themselves are drawn in :mod:`gradviz._cpu_generator`, with PyTorch's CPU algorithm, so
``manual_seed(0); randn(3)`` prints what PyTorch prints.

>>> import gradviz as torch
>>> g = torch.Generator().manual_seed(0)
>>> torch.rand(3, generator=g)
tensor([0.4963, 0.7682, 0.0885])
"""

import numpy as np

from . import _cpu_generator
from .tensor import Tensor

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state"]


class Generator:
    """A random-number generator with PyTorch's CPU algorithm (``torch.Generator()``)."""

    __module__ = "gradviz._C"

    def __init__(self, device="cpu"):
        self.device = device
        self._rng = _cpu_generator.Mt19937()

    def __repr__(self):
        return f"<gradviz._C.Generator object at {hex(id(self))}>"

    def manual_seed(self, seed):
        """Restart the sequence from ``seed`` (only its low 32 bits reach mt19937, as in PyTorch)."""
        self._rng.manual_seed(seed)
        return self

    def seed(self):
        """Seed from the operating system's entropy; returns the seed."""
        return self._rng.seed()

    def initial_seed(self):
        return self._rng.initial_seed()

    def get_state(self):
        """The state as PyTorch lays it out: a uint8 tensor of 5056 bytes."""
        return Tensor._wrap(self._rng.get_state())

    def set_state(self, state):
        self._rng.set_state(state._data if isinstance(state, Tensor) else np.asarray(state))
        return self


default_generator = Generator()
default_generator._rng = _cpu_generator.DEFAULT   # what every draw without generator= uses


def manual_seed(s):
    """Make the following random tensors reproducible; returns the default generator."""
    return default_generator.manual_seed(s)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)
