"""Making tensors: ``tensor(data)``, ``ones``, ``zeros``, ``full``, ``arange``, ``linspace``, ``eye``,
``from_numpy``, and the random ones (``rand``, ``randn``, ``randint``...), each with PyTorch's
dtypes, its rounding, and, after ``manual_seed``, its very numbers.
"""

import builtins
import math
import warnings

import numpy as np

from . import _dtype
from . import _cpu_generator
from ._arg_errors import MISSING, check
from ._arrays import as_array
from .kernels import fma
from ._operands import _finish, _new_shape, _shape_args
from ._types import check_device
from .tensor import Tensor

__all__ = ["tensor", "as_tensor", "tril_indices", "triu_indices", "from_numpy", "ones", "zeros", "empty", "full", "ones_like", "zeros_like",
           "empty_like", "full_like", "arange", "linspace", "logspace", "eye", "rand", "randn", "rand_like",
           "randn_like", "randint", "randint_like", "randperm", "bernoulli", "multinomial", "normal"]


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data`` (numbers, nested lists, arrays or tensors).

    >>> tensor([1, 2]), tensor([1., 2.]), tensor(True)
    (tensor([1, 2]), tensor([1., 2.]), tensor(True))
    """
    check_device(device)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).", UserWarning, 2)
    return _finish(Tensor._wrap(np.array(as_array(data, dtype), copy=True)), requires_grad)


def _filled(shape, value, dtype, requires_grad):
    if dtype is None:
        dtype = _dtype.bool if isinstance(value, (builtins.bool, np.bool_)) else \
            _dtype.int64 if isinstance(value, (builtins.int, np.integer)) else _dtype.get_default_dtype()
    dtype = _dtype.as_dtype(dtype)
    return _finish(Tensor._wrap(np.full(shape, value, dtype=dtype.np)), requires_grad)


def _new(array, dtype, requires_grad):
    dt = _dtype.as_dtype(dtype)
    if dt is not None:
        array = array.astype(dt.np, copy=False)
    return _finish(Tensor._wrap(array), requires_grad)


def _size(args, size, fn):
    """The shape from ``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))``; ``f()`` refused as PyTorch
    refuses it (``zeros() missing 1 required positional arguments: "size"``)."""
    if not args and size is None:
        check(fn, (), method=False)
    return _new_shape(args if size is None else (size,), fn)


# --- creation -----------------------------------------------------------------------------------

def ones(*args, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))``."""
    return _filled(_size(args, size, "ones"), 1.0, dtype or _dtype.get_default_dtype(), requires_grad)


def zeros(*args, size=None, dtype=None, device=None, requires_grad=False):
    return _filled(_size(args, size, "zeros"), 0.0, dtype or _dtype.get_default_dtype(), requires_grad)


def empty(*args, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor of the given shape, its values unset (gradviz fills it with zeros)."""
    return _filled(_size(args, size, "empty"), 0.0, dtype or _dtype.get_default_dtype(), requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    """``full((2, 3), 3)`` is _dtype.int64 and ``full((2, 3), 3.)`` _dtype.float32, as in PyTorch 2."""
    return _filled(_new_shape((size,), "full"), fill_value, dtype, requires_grad)


def _like(name, input, extra):
    """The tensor of ``torch.<name>(input)``, refused in PyTorch's words when it is not one or has
    more positional arguments beside it (PyTorch's take their options as keywords only)."""
    if extra or not isinstance(input, Tensor):
        check(name, (input, *extra), method=False)
    return input


def ones_like(input=MISSING, *extra, dtype=None, requires_grad=False):
    return _filled(_like("ones_like", input, extra).shape, 1, dtype or input.dtype, requires_grad)


def zeros_like(input=MISSING, *extra, dtype=None, requires_grad=False):
    return _filled(_like("zeros_like", input, extra).shape, 0, dtype or input.dtype, requires_grad)


def empty_like(input=MISSING, *extra, dtype=None, requires_grad=False):
    return _filled(_like("empty_like", input, extra).shape, 0, dtype or input.dtype, requires_grad)


def full_like(t, fill_value, dtype=None, requires_grad=False):
    return _filled(t.shape, fill_value, dtype or t.dtype, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """``arange(5)`` is _dtype.int64 ``[0, 1, 2, 3, 4]``; any float argument makes it _dtype.float32."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    ints = builtins.all(isinstance(v, (builtins.int, np.integer)) for v in (start, end, step))
    default = _dtype.int64 if ints else _dtype.get_default_dtype()
    n = builtins.max(0, math.ceil((end - start) / step))
    dt = _dtype.as_dtype(dtype) or default
    idx = np.arange(n, dtype=np.float64)
    if ints or not dt.is_floating_point:
        return _new((start + step * idx).astype(dt.np), None, requires_grad)
    # PyTorch's kernel: whole AVX2 vectors (8 floats, 4 doubles; two at a time) start from
    # start + step * first and count up within the vector; the rest is start + step * i.
    # Each product-plus-sum is one fused multiply-add in double.
    lanes = 8 if dt is _dtype.float32 else 4
    vec = n // (2 * lanes) * 2 * lanes
    first = idx[:vec] - idx[:vec] % lanes
    base = fma(first, step, start, np.float64).astype(dt.np).astype(np.float64)
    head = fma(idx[:vec] % lanes, step, base, np.float64)
    a = np.concatenate((head, fma(idx[vec:], step, start, np.float64)))
    return _new(a.astype(dt.np), None, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end``, rounded exactly as PyTorch rounds.

    PyTorch counts the first half up from ``start`` and the second half down from ``end``,
    each value one fused multiply-add in the tensor's precision.
    """
    dt = _dtype.as_dtype(dtype) or _dtype.get_default_dtype()
    acc = dt.np if dt.is_floating_point and dt is not _dtype.float16 else np.dtype(np.float64)
    lo, hi = (acc.type(start), acc.type(end)) if dt.is_floating_point else \
        (acc.type(builtins.int(start)), acc.type(builtins.int(end)))
    idx = np.arange(steps)
    if steps == 1:
        a = np.array([lo])
    else:
        step = (hi - lo) / acc.type(steps - 1)
        first = fma(idx[:steps // 2].astype(acc), step, lo, acc)
        second = fma((steps - 1 - idx[steps // 2:]).astype(acc), -step, hi, acc)
        a = np.concatenate((first, second))
    return _new(a.astype(dt.np), None, requires_grad)


def logspace(start, end, steps, base=10.0, dtype=None, device=None, requires_grad=False):
    """``base ** linspace(start, end, steps)``: the exponents as linspace counts them, the power in double."""
    dt = _dtype.as_dtype(dtype) or _dtype.get_default_dtype()
    exponents = linspace(start, end, steps, dtype=dt if dt.is_floating_point else _dtype.float64)._data
    return _new(np.power(builtins.float(base), exponents.astype(np.float64)).astype(dt.np), None, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    return _new(np.eye(n, m, dtype=(_dtype.as_dtype(dtype) or _dtype.get_default_dtype()).np), None, requires_grad)


def tril_indices(row, col, offset=0, dtype=None, device=None, layout=None):
    """The (row, column) indices of a ``row`` x ``col`` matrix's lower triangle, row by row, as two rows."""
    return _tri_indices(np.tril_indices(row, offset, col), dtype)


def triu_indices(row, col, offset=0, dtype=None, device=None, layout=None):
    """The (row, column) indices of the upper triangle (``offset`` diagonals up), row by row."""
    return _tri_indices(np.triu_indices(row, offset, col), dtype)


def _tri_indices(pair, dtype):
    return _new(np.stack(pair).astype((_dtype.as_dtype(dtype) or _dtype.int64).np).reshape(2, -1), None, False)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtype):
        return data
    return tensor(data, dtype=dtype)


def from_numpy(a):
    """A tensor sharing memory with the numpy array ``a``."""
    _dtype.from_numpy_dtype(a.dtype)
    return Tensor._wrap(a)


# --- random -------------------------------------------------------------------------------------

def _random_dtype(dtype, kernel):
    dt = _dtype.as_dtype(dtype) or _dtype.get_default_dtype()
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.TYPE_NAMES[dt.name]}\'')
    return dt


def rand(*args, size=None, dtype=None, generator=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1): after ``manual_seed(s)``, the very numbers PyTorch gives."""
    dt = _random_dtype(dtype, "check_uniform_bounds")
    return _new(_cpu_generator.rand(_size(args, size, "rand"), dt.np, generator), None, requires_grad)


def randn(*args, size=None, dtype=None, generator=None, device=None, requires_grad=False):
    """Standard normal samples: after ``manual_seed(s)``, the very numbers PyTorch gives."""
    dt = _random_dtype(dtype, "normal_kernel_cpu")
    return _new(_cpu_generator.randn(_size(args, size, "randn"), dt.np, generator), None, requires_grad)


def rand_like(input=MISSING, *extra, dtype=None, requires_grad=False, generator=None):
    return rand(_like("rand_like", input, extra).shape, dtype=dtype or input.dtype, requires_grad=requires_grad,
                generator=generator)


def randn_like(input=MISSING, *extra, dtype=None, requires_grad=False, generator=None):
    return randn(_like("randn_like", input, extra).shape, dtype=dtype or input.dtype, requires_grad=requires_grad,
                 generator=generator)


def randint(low=0, high=None, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers in [low, high): ``randint(10, (3,))`` or ``randint(3, 10, (2, 2))``; _dtype.int64."""
    if size is None:
        low, high, size = 0, low, high
    return _new(_cpu_generator.randint(low, high, _shape_args((size,)), generator), dtype, requires_grad)


def randint_like(t, low, high=None, dtype=None, requires_grad=False, generator=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, t.shape, generator=generator, dtype=dtype or t.dtype,
                   requires_grad=requires_grad)


def randperm(n, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of ``0 .. n-1`` (_dtype.int64)."""
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return _new(_cpu_generator.randperm(n, generator), dtype, requires_grad)


def bernoulli(input, p=None, *, generator=None):
    """0 or 1 per element, 1 with probability ``input`` (or ``p``): PyTorch's draws after ``manual_seed``."""
    return input.bernoulli(p, generator=generator)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from each row of ``input`` (non-negative weights): PyTorch's draws after ``manual_seed``."""
    return input.multinomial(num_samples, replacement, generator=generator)


def normal(mean, std=1.0, size=None, generator=None, dtype=None, requires_grad=False):
    """Normal samples: ``normal(0., 1., (3,))``, or with a tensor of means or of stds."""
    if size is not None:
        dt = _random_dtype(dtype, "normal_kernel_cpu")
        out = _cpu_generator.randn(_shape_args((size,)), dt.np, generator, builtins.float(mean), builtins.float(std))
        return _new(out, None, requires_grad)
    ref = mean if isinstance(mean, Tensor) else std
    z = _cpu_generator.randn(ref.shape, ref.dtype.np, generator)
    m = mean._data if isinstance(mean, Tensor) else mean
    s = std._data if isinstance(std, Tensor) else std
    return _new((z * s + m).astype(ref.dtype.np), None, requires_grad)
