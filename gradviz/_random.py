"""Random numbers: ``manual_seed``, ``rand``, ``randn``, ``randint``, ``randperm``."""

import numpy as np

__all__ = ["manual_seed", "seed", "initial_seed", "rand", "randn", "randint", "randperm"]

_state = {"seed": 67280421310721, "gen": np.random.default_rng(67280421310721)}


def manual_seed(s):
    """Make the following random tensors reproducible."""
    s = int(s)
    _state["seed"], _state["gen"] = s, np.random.default_rng(s & 0xFFFFFFFFFFFFFFFF)
    return None


def seed():
    s = int(np.random.SeedSequence().entropy) & 0xFFFFFFFFFFFFFFFF
    manual_seed(s)
    return s


def initial_seed():
    return _state["seed"]


def rand(shape, dtype):
    return _state["gen"].random(shape).astype(dtype.np)


def randn(shape, dtype):
    return _state["gen"].standard_normal(shape).astype(dtype.np)


def randint(low, high, shape):
    return _state["gen"].integers(low, high, shape, dtype=np.int64)


def randperm(n):
    return _state["gen"].permutation(n).astype(np.int64)
