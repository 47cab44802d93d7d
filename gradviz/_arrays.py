"""Python data as numpy arrays, read as ``torch.tensor`` reads it: shapes checked, dtypes inferred.

>>> as_array([[1, 2], [3, 4.5]]).dtype, as_array([True, 2]).dtype, as_array(3).dtype
(dtype('float32'), dtype('int64'), dtype('int64'))
"""

import builtins

import numpy as np

from . import _dtype
from ._types import TensorBase

__all__ = ["as_array"]


def as_array(value, dtype=None):
    """A numpy array from a tensor, number, nested list (of numbers or tensors) or array."""
    if isinstance(value, TensorBase):
        a = value._data
    elif isinstance(value, np.ndarray):
        a = value
    else:
        a = _from_data(value, _dtype.as_dtype(dtype))
    if dtype is not None:
        a = a.astype(_dtype.as_dtype(dtype).np, copy=False)
    elif a.dtype not in _dtype._BY_NP:
        _dtype.from_numpy_dtype(a.dtype)
    return a


def _from_data(value, dtype=None):
    """Python data as ``torch.tensor`` reads it: the shape from the first element at each depth,
    every other element checked against it, and the dtype promoted over all the numbers
    (a Python float counts as the default dtype, an int as int64, numpy scalars as themselves)."""
    sizes, first = [], value
    while isinstance(first, _SEQUENCES):
        sizes.append(len(first))
        if not first:
            break
        first = first[0]
    if isinstance(first, np.ndarray):  # arrays inside lists add their dimensions
        sizes.extend(first.shape)
    if 0 in sizes:   # nothing to store: PyTorch checks no lengths (torch.tensor([[], [1]]) is 2x0)
        return np.zeros(sizes, (dtype or _empty_data_dtype(value)).np)
    dtypes, misplaced = [], []
    _check_nested(value, 0, sizes, dtypes, misplaced)
    dt = dtypes[0] if dtypes else _dtype.get_default_dtype()
    for other in dtypes[1:]:
        dt = _dtype._promote(dt, other)
    if misplaced:  # a list where a number belongs: [[1, 2], [3, [4]]]
        name = type(misplaced[0]).__name__
        raise TypeError(f"must be real number, not {name}" if dt.is_floating_point
                        else f"'{name}' object cannot be interpreted as an integer")
    if dt is _dtype.int64 and any(type(v) is builtins.int and not -2 ** 63 <= v < 2 ** 63 for v in _flat([value])):
        raise ValueError("Overflow when unpacking long long")
    return np.array(_untensor(value), dtype=(dtype or dt).np)  # Python floats straight to dtype


_SEQUENCES = (list, tuple, range)


def _empty_data_dtype(v):
    """The dtype PyTorch infers for data holding no element: promoted over every number found, an
    empty sequence counting as the default dtype."""
    if isinstance(v, np.ndarray):
        return _dtype.from_numpy_dtype(v.dtype)
    if not isinstance(v, _SEQUENCES):
        return _scalar_dtype(v)
    if len(v) == 0:
        return _dtype.get_default_dtype()
    dt = _empty_data_dtype(v[0])
    for x in v[1:]:
        dt = _dtype._promote(dt, _empty_data_dtype(x))
    return dt


def _check_nested(v, dim, sizes, dtypes, misplaced):
    if dim == len(sizes):  # a number
        if isinstance(v, _SEQUENCES):
            misplaced.append(v)
        else:
            dtypes.append(_scalar_dtype(v))
        return
    if isinstance(v, np.ndarray):
        if v.shape != tuple(sizes[dim:]):
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(v)})")
        dtypes.append(_dtype.from_numpy_dtype(v.dtype))
        return
    if not isinstance(v, _SEQUENCES):
        raise TypeError("not a sequence")
    if len(v) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(v)})")
    if dim + 1 == len(sizes):  # a row of numbers: one look per Python type, not per number
        kinds = set(map(type, v))
        if kinds <= _PY_NUMBERS.keys():
            dtypes.extend(_PY_NUMBERS[k]() for k in kinds)
            return
    for x in v:
        _check_nested(x, dim + 1, sizes, dtypes, misplaced)


_PY_NUMBERS = {builtins.bool: lambda: _dtype.bool, builtins.int: lambda: _dtype.int64, builtins.float: _dtype.get_default_dtype}


def _scalar_dtype(v):
    if isinstance(v, TensorBase):
        if v._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return v.dtype
    if isinstance(v, (builtins.bool, np.bool_)):
        return _dtype.bool
    if isinstance(v, np.generic):
        return _dtype.from_numpy_dtype(v.dtype)
    if isinstance(v, builtins.int):
        return _dtype.int64
    if isinstance(v, builtins.float):
        return _dtype.get_default_dtype()
    if isinstance(v, (str, bytes, complex)):
        raise TypeError(f"new(): invalid data type '{type(v).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(v).__name__}")


def _flat(v):
    for x in v:
        if isinstance(x, _SEQUENCES):
            yield from _flat(x)
        else:
            yield x


def _untensor(v):
    if isinstance(v, TensorBase):  # one-element tensors inside a list are numbers
        return v.item()
    if isinstance(v, _SEQUENCES):
        return [_untensor(x) for x in v]
    return v
