"""``torch.linalg.solve``, ``inv`` and ``det`` with PyTorch's checks and errors (a singular matrix is a
``LinAlgError`` naming the zero pivot, as PyTorch words it); one node each (LinalgSolveExBackward0,
LinalgInvExBackward0, LinalgDetBackward0).  The arithmetic is MKL's LAPACK (:mod:`gradviz.kernels._lapack`).
"""

import numpy as np

from . import _dtype
from ._linalg_ops import zero_pivot
from ._operands import _broadcast_error
from .autograd.engine import apply
from ._types import TensorBase
from .ops import OPS

__all__ = ["LinAlgError", "solve", "inv", "det"]


class LinAlgError(RuntimeError):
    """A linear-algebra function met a matrix it cannot handle (``torch.linalg.LinAlgError``)."""

    __module__ = "torch._C"


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"


def _check_matrix(A, name):
    if not isinstance(A, TensorBase):
        raise TypeError(f"{name.replace('.', '_')}(): argument 'A' (position 1) must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_dtype.TYPE_NAMES[A.dtype.name]}")


def det(A):
    """``torch.linalg.det``: the determinant of a square matrix."""
    _check_matrix(A, "linalg.det")
    return apply(OPS["linalg_det"], (A,))


def inv(A):
    """``torch.linalg.inv``: A⁻¹; a singular matrix is an error naming its first zero pivot."""
    _check_matrix(A, "linalg.inv")
    out = apply(OPS["linalg_inv"], (A,))
    where, zero = _first_zero_pivot(A)
    if zero:
        raise LinAlgError(f"linalg.inv: {where}The diagonal element {zero} is zero, the inversion could not be "
                          "completed because the input matrix is singular.")
    return out


def _first_zero_pivot(A):
    """('(Batch element i): ' or '', the first zero pivot from 1) -- PyTorch's words for a singular matrix."""
    found = zero_pivot(A.detach().numpy())
    if A.ndim == 2:
        return "", found
    return f"(Batch element {found[0]}): ", found[1]


def solve(A, B, *, left=True):
    """``torch.linalg.solve``: X with A X = B, for B a matrix or a vector (X A = B with ``left=False``)."""
    _check_matrix(A, "linalg.solve")
    if not isinstance(B, TensorBase):
        raise TypeError(f"linalg_solve(): argument 'B' (position 2) must be Tensor, not {type(B).__name__}")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_dtype.TYPE_NAMES[A.dtype.name]} and B of type {_dtype.TYPE_NAMES[B.dtype.name]} instead")
    n = A.shape[-1]
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    rows, columns = (B.shape[-1], 1) if vector else B.shape[-2:]
    if (rows if left else columns) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                           f"({n}x{n} and {rows}x{columns})")
    if vector and not left:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    columns = B.shape + (1,) if vector else B.shape
    try:
        np.broadcast_shapes(A.shape[:-2], columns[:-2])
    except ValueError:
        raise _broadcast_error(columns[:-2], A.shape[:-2]) from None
    out = apply(OPS["linalg_solve"], (A, B), left=bool(left))
    where, zero = _first_zero_pivot(A)
    if zero:
        raise LinAlgError(f"torch.linalg.solve: {where}The solver failed because the input matrix is singular.")
    return out
