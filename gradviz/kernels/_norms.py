r"""Vector norms as PyTorch's CPU kernel computes them (``linalg_vector_norm``), float32 and float64.

PyTorch 2.13 (``aten/src/ATen/native/cpu/ReduceOpsKernel.cpp``, ``norm_kernel_tensor_iterator_impl``
and ``cpu/Reduce.h``) takes one of two paths:

* **p = 2 along the innermost memory** (the reduced dimensions, once those of size 1 are left out,
  are one contiguous block at the end of memory): per output, the squares are accumulated a
  vector at a time into 8 float (4 double) lanes, each square rounded before it is added
  (``norm_two_reduce_step``); the lanes are added one after the other into the first; the
  elements after the last whole vector follow, in groups of 4 whose squares are rounded before
  they are added, then one by one fused (``acc + x·x`` rounded once, the compiler's multiply-add);
  then the square root.
* **everything else** (``binary_kernel_reduce``): per output, one running accumulator in the
  order the elements lie in memory -- ``acc + |x|`` (p = 1), ``acc + x·x`` (p = 2, two roundings),
  ``max``/``min`` of ``|x|`` (p = ±∞), a count of nonzeros (p = 0), ``acc + |x|^p`` then
  ``acc^(1/p)`` (other p, with ``1/p`` rounded to the dtype).  A single output of at least 32,768
  elements is cut into one run per thread (``parallel_for``), each summed from 0, and the runs'
  sums added in thread order.

A reduction over dimensions that all have size 1 is no reduction: ``|x|`` (``x != 0`` for p = 0).

Exact where PyTorch's arithmetic is: all p = 0, 1, 2, ±∞ (bit for bit).  For other p, PyTorch calls
the C library's ``powf``/``pow`` once per element; here the power is taken in double and rounded
once, float64 in extended precision (equal on all but about 0.1% of elements, within 1 ulp).

>>> x = np.array([[3.0, 4.0], [6.0, 8.0]], np.float32)
>>> vector_norm(x, 2, (1,)).tolist(), float(vector_norm(x, 1, None))
([5.0, 10.0], 21.0)
"""

import math

import numpy as np

from ._numerics import fma
from ._threads import _GRAIN, get_num_threads

__all__ = ["vector_norm"]

# the vector width of PyTorch's norm kernel on x86-64 (its AVX2 build serves AVX-512 machines too)
_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}
_TAIL_GROUP = 4    # the compiled tail loop squares 4 elements at a time (rounded), then goes one by one


def vector_norm(a, p=2, dim=None, keepdim=False):
    """‖a‖_p over ``dim`` (a tuple of dims, or None for every dim), in ``a``'s floating dtype."""
    a = np.asarray(a)
    axes = tuple(range(a.ndim)) if dim is None or dim == () or a.ndim == 0 else \
        tuple(sorted(d % a.ndim for d in ((dim,) if isinstance(dim, int) else dim)))
    out_shape = tuple(1 if d in axes else n for d, n in enumerate(a.shape)) if keepdim else \
        tuple(n for d, n in enumerate(a.shape) if d not in axes)
    p = float(p)
    with np.errstate(all="ignore"):
        if all(a.shape[d] == 1 for d in axes):          # nothing to add up: |x| (or x != 0)
            out = (a != 0).astype(a.dtype) if p == 0 else np.abs(a)
            return np.reshape(out, out_shape)
        if a.size == 0:                                  # the identity: 0, or inf for the min
            return np.full(out_shape, np.inf if p < 0 else 0, a.dtype)
        rows = _rows(a, axes)
        if p == 2 and _innermost(a, axes) and a.dtype in _LANES:
            out = np.sqrt(_lanes_of_squares(rows))
        else:
            out = _running(rows, p)
    return out.reshape(out_shape)


def _reduced_order(a, axes):
    """The reduced dims outermost first, as PyTorch's iterator walks them: by their stride in memory."""
    return sorted(axes, key=lambda d: (abs(a.strides[d]), a.shape[d]), reverse=True)


def _rows(a, axes):
    """(outputs, reduced) -- each output's elements in the order the kernel meets them."""
    kept = [d for d in range(a.ndim) if d not in axes]
    moved = np.transpose(a, kept + _reduced_order(a, axes))
    return np.ascontiguousarray(moved).reshape(math.prod(a.shape[d] for d in kept), -1)


def _innermost(a, axes):
    """Are the reduced dims (those longer than 1) one contiguous block at the end of memory
    (PyTorch's ``is_reduce_lastdim``, after its iterator has merged them into one)?"""
    step = a.itemsize
    for d in reversed(_reduced_order(a, [d for d in axes if a.shape[d] > 1])):
        if a.strides[d] != step:
            return False
        step *= a.shape[d]
    return True


def _in_order(x):
    """Each row of ``x`` (outputs, n) summed left to right from 0, one rounding per addition.

    (numpy adds across rows one row after another, but along a single row pairwise: one row is
    a running sum instead.)"""
    if not x.shape[1]:
        return np.zeros(len(x), x.dtype)
    if len(x) == 1:
        return np.add.accumulate(x[0])[-1:] + x.dtype.type(0)
    return np.add.reduce(np.ascontiguousarray(x.T), axis=0) + x.dtype.type(0)


def _lanes_of_squares(rows):
    """Σ x² per row as the vectorised p = 2 kernel adds it (see the module docstring)."""
    n = rows.shape[1]
    lanes = _LANES[rows.dtype]
    full = n - n % lanes
    blocks = rows[:, :full].reshape(len(rows), -1, lanes)
    squares = blocks * blocks                                          # rounded, then added
    acc = np.add.reduce(np.moveaxis(squares, 1, 0), axis=0) + rows.dtype.type(0) if full else \
        np.zeros((len(rows), lanes), rows.dtype)                       # (rows, lanes), each from 0
    total = np.add.accumulate(acc, axis=1)[:, -1]                      # buffer[0] + buffer[1] + ...
    grouped = full + (n - full) // _TAIL_GROUP * _TAIL_GROUP
    for j in range(full, grouped):                                     # fewer than one vector:
        total = total + rows[:, j] * rows[:, j]                        # squares rounded (4 at a time)
    for j in range(grouped, n):
        total = fma(rows[:, j], rows[:, j], total, rows.dtype)         # then fused
    return total


def _running(rows, p):
    """``binary_kernel_reduce``: one accumulator per output, in order (per thread for one long output)."""
    dt = rows.dtype.type
    x = np.abs(rows)
    if p == np.inf:
        return _nan_max(x)
    if p == -np.inf:
        return -_nan_max(-x)
    if p == 0:
        terms = (x != 0).astype(rows.dtype)
    elif p == 1:
        terms = x
    elif p == 2:
        terms = rows * rows
    else:
        terms = _power(x, dt(p))
    total = _split_sum(terms)
    if p in (0, 1):
        return total
    if p == 2:
        return np.sqrt(total)
    return _power(total, dt(1) / dt(p))                 # static_cast<acc_t>(1.0) / norm_


def _power(x, p):
    """x^p rounded to x's dtype from a wider one (the C library's powf/pow: within 1 ulp, most equal)."""
    wider = np.float64 if x.dtype == np.float32 else np.longdouble
    return np.power(x.astype(wider), wider(p)).astype(x.dtype)


def _nan_max(x):
    """max along each row, nan if the row holds one (PyTorch's ``max_impl``)."""
    return np.max(x, axis=1)


def _split_sum(terms):
    """Each row's running sum; one long row (a single output) is cut into per-thread runs."""
    n = terms.shape[1]
    threads = min(get_num_threads(), -(-n // _GRAIN))
    if len(terms) != 1 or n < _GRAIN or threads <= 1:
        return _in_order(terms)
    size = -(-n // threads)
    runs = np.zeros((threads, size), terms.dtype)                     # zeros after the end change
    runs.reshape(-1)[:n] = terms[0]                                    # no sum of non-negatives
    partial = _in_order(runs)
    return np.add.accumulate(np.concatenate(([terms.dtype.type(0)], partial)))[-1:]
