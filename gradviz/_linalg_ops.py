"""Op-table entries of ``torch.linalg``'s linear systems, one node each in PyTorch: LinalgSolveExBackward0,
LinalgInvExBackward0, LinalgDetBackward0.  Declared with :func:`gradviz._op.op` into the one table,
:data:`gradviz.ops.OPS`; the contract of an entry is written in :mod:`gradviz.ops`.  The arithmetic
is MKL's LAPACK as PyTorch calls it (:mod:`gradviz.kernels._lapack`), the rules PyTorch's
(``linalg_solve_backward``, ``linalg_det_backward``, the inverse's ``-A⁻ᵀ g A⁻ᵀ``).
"""

import numpy as np

from . import kernels
from ._op import call, op

__all__ = ["zero_pivot"]


def zero_pivot(a):
    """Where A's LU first has a zero pivot (PyTorch's error for a singular matrix names it)."""
    return kernels.zero_pivot(a)     # (read when called: LAPACK's kernels load on first use, not at import gradviz)


def _is_vector(a, b):
    """Is B a vector (or a batch of vectors) rather than matrices? (PyTorch's linalg_solve_is_vector_rhs)"""
    return len(b.shape) == 1 or (len(b.shape) == len(a.shape) - 1 and tuple(b.shape) == tuple(a.shape[:-1]))


def _matmul(x, y):
    """x @ y for matrices or batches of them (mm, or bmm on the batch flattened: PyTorch's matmul)."""
    if x.ndim == 2:
        return call("mm", x, y)
    batch = x.shape[:-2]
    flat = call("bmm", np.reshape(x, (-1,) + tuple(x.shape[-2:])), np.reshape(y, (-1,) + tuple(y.shape[-2:])))
    return np.reshape(flat, tuple(batch) + tuple(flat.shape[-2:]))


def _solve(a, b, left=True):
    """X = A⁻¹B, the solution of A X = B (B a matrix, a vector, or batches of them); X = BA⁻¹ (X A = B)
    with ``left=False``, solved as Aᵀ Xᵀ = Bᵀ"""
    if not left:
        rows = np.swapaxes(b, -1, -2)
        batch = np.broadcast_shapes(a.shape[:-2], rows.shape[:-2])
        x = kernels.solve(np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(rows, batch + rows.shape[-2:]),
                          transpose=True)
        return np.swapaxes(x, -1, -2)
    vector = _is_vector(a, b)
    columns = b[..., None] if vector else b
    batch = np.broadcast_shapes(a.shape[:-2], columns.shape[:-2])
    x = kernels.solve(np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(columns, batch + columns.shape[-2:]))
    if not vector:
        return x
    if x.ndim == 2:
        return x[:, 0]
    # a batch of vectors: PyTorch's result is column-major in its last two dims, as a batch of matrices
    return np.swapaxes(np.array(np.swapaxes(x[..., 0], -1, -2), order="C", copy=True), -1, -2)


def _solve_vjp_b(g, y, a, b, left=True):
    """g_B = A⁻ᵀ g (g A⁻ᵀ with left=False), from the forward's LU; solved again, and recorded, under
    create_graph=True"""
    vector = left and _is_vector(a, b)
    columns = g[..., None] if vector else g
    if type(g) is not np.ndarray:
        out = call("linalg_solve", np.swapaxes(a, -1, -2), columns, left=left)
    elif left:
        out = kernels.solve(np.broadcast_to(a, columns.shape[:-2] + a.shape[-2:]), columns, transpose=True)
    else:
        rows = np.swapaxes(columns, -1, -2)
        out = np.swapaxes(kernels.solve(np.broadcast_to(a, rows.shape[:-2] + a.shape[-2:]), rows), -1, -2)
    return out[..., 0] if vector else out


def _solve_vjp_a(g, y, a, b, left=True):
    """g_A = −g_B Xᵀ (−Xᵀ g_B with left=False)"""
    g_b = _solve_vjp_b(g, y, a, b, left)
    if not left:
        return -_matmul(np.swapaxes(y, -1, -2), g_b)
    if _is_vector(a, b):
        g_b, y = np.expand_dims(g_b, -1), np.expand_dims(y, -1)
    return -_matmul(g_b, np.swapaxes(y, -1, -2))


op("linalg_solve", grad_fn="LinalgSolveExBackward0", symbol="solve", forward=_solve,
   vjps=[_solve_vjp_a, _solve_vjp_b], uses=["0o", "0"],
   latex=r"@0^{-1} @1", dlatex=[r"-@0^{-T} \bar{g} X^{T}", r"@0^{-T}"],
   function="linalg.solve", inputs="linalg_solve", elementwise=False, column_major=True,
   saved={"A": 0, "result": "o", "left": "@left"})


def _inv(a):
    """A⁻¹: the solve of A X = I (each matrix of a batch)"""
    return kernels.inv(a)       # (read when called: LAPACK's kernels load on first use, not at import gradviz)


op("linalg_inv", grad_fn="LinalgInvExBackward0", symbol="inv", forward=_inv,
   vjps=[lambda g, y, a: -_matmul(np.swapaxes(y, -1, -2), _matmul(g, np.swapaxes(y, -1, -2)))], uses=["o"],
   latex=r"@0^{-1}", dlatex=[r"-@0^{-T} \bar{g}\, @0^{-T}"],
   method="inverse", function=True, inputs="linalg_square", elementwise=False, column_major=True,
   saved={"inverse": "o"})


def _det_vjp(g, y, a):
    """∂det A/∂A = det A · A⁻ᵀ (the cofactors), solved as PyTorch's linalg_det_backward"""
    if type(g) is np.ndarray:
        return kernels.det_backward(g, y, a)
    return call("linalg_solve", np.swapaxes(a, -1, -2),
                np.eye(a.shape[-1], dtype=a.dtype) * np.expand_dims(np.expand_dims(g * y, -1), -1))


def _det(a):
    """det A: the sign of the pivots times U's diagonal, multiplied in order (LU of Aᵀ)"""
    return kernels.det(a)


op("linalg_det", grad_fn="LinalgDetBackward0", symbol="det", forward=_det,
   vjps=[_det_vjp], uses=["0o"],
   latex=r"\det @0", dlatex=[r"\det(@0)\, @0^{-T}"],
   method="det", function=True, inputs="linalg_square", elementwise=False, saved={"A": 0, "result": "o"})
