"""LU factorisation and solves by MKL's LAPACK, as PyTorch's ``linalg.solve``, ``inv`` and ``det`` call it.

PyTorch 2.13 factors A with ``getrf`` and solves with ``getrs`` (``aten/src/ATen/native/
BatchLinearAlgebra.cpp``): ``linalg.solve(A, B)`` and ``linalg.inv(A)`` (the solve of A X = I)
factor A itself; ``linalg.det(A)`` factors Aᵀ -- the row-major A read as a column-major matrix,
no copy -- and multiplies the pivots' sign by U's diagonal, one element after the other.  The
gradient of det solves Aᵀ X = det·g·I with that same factorisation.  A batch is solved matrix by
matrix (as PyTorch loops over it), each result column-major.  Through the MKL that
:mod:`._mkl` loads, the results are PyTorch's bits (matrices up to 64×64 checked; PyTorch's
threaded MKL may round larger ones differently); without it, numpy's LAPACK in double, rounded
once (within rounding).

>>> a = np.array([[4.0, 3.0], [6.0, 3.0]])
>>> float(det(a)), inv(a).tolist()
(-6.0, [[-0.5, 0.5], [1.0, -0.6666666666666666]])
"""

import ctypes
import functools

import numpy as np

from . import _mkl

__all__ = ["lu_factor", "lu_solve", "solve", "solve_matrix", "inv", "det", "det_backward", "zero_pivot"]

_LETTER = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}


@functools.cache
def _routine(name):
    fn = getattr(_mkl.library(), name)
    fn.restype = None
    return fn


def _int(v):
    return ctypes.byref(ctypes.c_int(v))


def _has_mkl(dtype):
    return _mkl.library() is not None and np.dtype(dtype) in _LETTER


def lu_factor(a):
    """(LU, pivots, info) of the square matrix ``a`` (``getrf``; LU column-major, pivots from 1)."""
    n = a.shape[0]
    lu = np.array(a, order="F", copy=True)
    pivots = np.zeros(n, np.int32)
    info = ctypes.c_int(0)
    if n:
        _routine(_LETTER[lu.dtype] + "getrf")(_int(n), _int(n), ctypes.c_void_p(lu.ctypes.data), _int(n),
                                              ctypes.c_void_p(pivots.ctypes.data), ctypes.byref(info))
    return lu, pivots, info.value


def lu_solve(lu, pivots, b, transpose=False):
    """X with A X = B (Aᵀ X = B if ``transpose``), A given by :func:`lu_factor` (``getrs``)."""
    n, k = b.shape
    x = np.array(b, dtype=lu.dtype, order="F", copy=True)
    info = ctypes.c_int(0)
    if n and k:
        _routine(_LETTER[lu.dtype] + "getrs")(ctypes.c_char_p(b"T" if transpose else b"N"), _int(n), _int(k),
                                              ctypes.c_void_p(lu.ctypes.data), _int(n),
                                              ctypes.c_void_p(pivots.ctypes.data), ctypes.c_void_p(x.ctypes.data),
                                              _int(n), ctypes.byref(info))
    return x                   # column-major, as PyTorch's result (its strides are (1, n))


def _matrices(a):
    """The matrices of a batch (*batch, n, m), one after the other."""
    return a.reshape((-1,) + a.shape[-2:])


def _column_major(results, batch):
    """Matrices stacked into a batch whose matrices are each column-major (PyTorch's strides for a
    batch of LAPACK results: (n·k, 1, n))."""
    n, k = results[0].shape if results else (0, 0)
    out = np.empty((len(results), k, n), results[0].dtype if results else np.float32)
    for i, x in enumerate(results):
        out[i] = x.T
    return np.swapaxes(out, -1, -2).reshape(batch + (n, k)) if len(batch) == 1 else \
        np.swapaxes(out.reshape(batch + (k, n)), -1, -2)


def solve(a, b, transpose=False):
    """X with A X = B (Aᵀ X = B if ``transpose``) for each matrix of a batch of A (*batch, n, n) and
    B (*batch, n, k) (the same batch dims), column-major as PyTorch returns it."""
    if a.ndim == 2:
        return solve_matrix(a, b, transpose)[0]
    batch = a.shape[:-2]
    return _column_major([solve_matrix(m, r, transpose)[0] for m, r in zip(_matrices(a), _matrices(b))], batch)


def solve_matrix(a, b, transpose=False):
    """(X with A X = B -- or Aᵀ X = B --, the first zero pivot's position or 0) for one matrix."""
    if not _has_mkl(a.dtype):
        x = np.linalg.solve(np.swapaxes(a, -1, -2) if transpose else a, b) if _regular(a) else np.full(b.shape, np.nan)
        return np.asarray(x, a.dtype), 0 if _regular(a) else 1
    lu, pivots, info = lu_factor(a)
    return lu_solve(lu, pivots, b, transpose), info


def _regular(a):
    with np.errstate(all="ignore"):
        return a.shape[0] == 0 or np.linalg.matrix_rank(a.astype(np.float64)) == a.shape[0]


def inv(a):
    """A⁻¹: the solve of A X = I (each matrix of a batch)."""
    if a.ndim > 2:
        return _column_major([inv(m) for m in _matrices(a)], a.shape[:-2])
    return solve_matrix(a, np.eye(a.shape[0], dtype=a.dtype))[0]


def _lu_of_transpose(a):
    return lu_factor(np.ascontiguousarray(a).T)


def det(a):
    """det A: the sign of the pivots times U's diagonal, multiplied in order (LU of Aᵀ)."""
    if a.ndim > 2:
        return np.array([det(m) for m in _matrices(a)], a.dtype).reshape(a.shape[:-2])
    if not _has_mkl(a.dtype):
        return np.asarray(np.linalg.det(a.astype(np.float64)), a.dtype)
    lu, pivots, _ = _lu_of_transpose(a)
    swaps = int(np.count_nonzero(pivots != np.arange(1, len(pivots) + 1)))
    with np.errstate(all="ignore"):
        product = np.multiply.accumulate(np.diagonal(lu))[-1] if len(pivots) else a.dtype.type(1)
        return np.asarray(a.dtype.type(1 - 2 * (swaps % 2)) * product, a.dtype)


def det_backward(g, y, a):
    """g · ∂det/∂A = g·det·A⁻ᵀ, as PyTorch's linalg_det_backward solves it without create_graph: Aᵀ X =
    (g·det) I with the forward's LU, a zero on U's diagonal replaced by the dtype's epsilon (so a
    singular matrix, det = 0, gets a zero gradient, as in PyTorch)."""
    if a.ndim > 2:
        g, y = np.broadcast_to(g, a.shape[:-2]).reshape(-1), np.reshape(y, -1)
        return _column_major([det_backward(gi, yi, m) for gi, yi, m in zip(g, y, _matrices(a))], a.shape[:-2])
    if a.shape[0] == 1:          # (a 1×1 determinant's cofactor is 1: PyTorch passes g on unchanged)
        return np.full(a.shape, g, a.dtype)
    d = np.zeros(a.shape, a.dtype)
    d[np.diag_indices_from(d)] = g * y                     # (diag_embed: +0 off the diagonal)
    if not _has_mkl(a.dtype):
        return np.asarray(_cofactors(a.astype(np.float64)) * g, a.dtype) if y != 0 else d
    lu, pivots, _ = _lu_of_transpose(a)
    diagonal = np.diagonal(lu).copy()
    lu[np.diag_indices_from(lu)] = np.where(diagonal == 0, np.finfo(a.dtype).eps, diagonal)
    return lu_solve(lu, pivots, d)


def _cofactors(a):
    """The matrix of cofactors (∂det/∂A) of a singular matrix, from its singular value decomposition."""
    u, s, vh = np.linalg.svd(a)
    others = np.array([np.prod(np.delete(s, i)) for i in range(len(s))])
    return np.linalg.det(u) * np.linalg.det(vh) * (u * others) @ vh


def zero_pivot(a):
    """Where the LU factorisation of the square matrix ``a`` first meets a zero pivot (from 1), or 0:
    how PyTorch words a singular matrix's error (``getrf``'s info).  For a batch: (the first
    singular matrix's index, its pivot), or (None, 0)."""
    if a.ndim > 2:
        for i, m in enumerate(_matrices(a)):
            found = zero_pivot(m)
            if found:
                return i, found
        return None, 0
    if _has_mkl(a.dtype):
        return lu_factor(a)[2]
    return 0 if _regular(a) else a.shape[-1]
