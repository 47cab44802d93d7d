"""Norms with PyTorch's argument handling: ``torch.linalg.vector_norm``, ``matrix_norm``, ``linalg.norm``
and the older ``torch.norm`` / ``x.norm()``, each checked as PyTorch checks it and recorded as the
nodes PyTorch records (one LinalgVectorNormBackward0; Amax/AminBackward0 above it for a matrix 1- or
∞-norm).  The arithmetic is the op table's ``norm`` entry (:mod:`gradviz.kernels._norms`).
"""

import math
import numbers

from . import _dtype
from .autograd.engine import apply
from ._operands import _dims
from ._types import TensorBase
from .ops import OPS

__all__ = ["vector_norm", "matrix_norm", "norm", "torch_norm"]


def _number_text(v):
    """A number as PyTorch's C++ prints it in messages: 3, 2.5, inf, -inf."""
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _ord(ord, fn):
    """``ord`` as the number PyTorch keeps (an int when it is one, as grad_fn._saved_ord shows it)."""
    if isinstance(ord, TensorBase) and ord.ndim == 0:
        ord = ord.item()
    if isinstance(ord, bool) or not isinstance(ord, numbers.Real):
        raise TypeError(f"{fn}(): argument 'ord' must be Number, not {type(ord).__name__}")
    return int(ord) if isinstance(ord, numbers.Integral) else float(ord)


def _check_input(x, fn):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")


def _check_floating(x, name):
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_dtype.TYPE_NAMES[x.dtype.name]}")


def _check_dtype(dtype, x, name):
    """PyTorch's check_linalg_norm_dtype: a floating dtype the input widens to."""
    if dtype is None:
        return None
    dtype = _dtype.as_dtype(dtype)
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got {_dtype.TYPE_NAMES[dtype.name]}")
    if _dtype._promote(x.dtype, dtype) is not dtype:
        raise RuntimeError(f"{name}: the dtype of the input ({_dtype.TYPE_NAMES[x.dtype.name]}) should be convertible "
                           f"without narrowing to the specified dtype ({_dtype.TYPE_NAMES[dtype.name]})")
    return dtype


def _dim_list(dim, ndim):
    """The dims wrapped into range, PyTorch's errors for one out of range or given twice."""
    dims = _dims(dim, ndim)
    for i, d in enumerate(dims):
        if d in dims[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return dims


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``torch.linalg.vector_norm``: ‖x‖_ord over ``dim`` (every dim unless told), one node."""
    _check_input(x, "linalg_vector_norm")
    ord = _ord(ord, "linalg_vector_norm")
    _check_floating(x, "linalg.vector_norm")
    given = None if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    p = float(ord)
    if x.numel() == 0 and (p < 0 or p == math.inf):
        if not given:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_number_text(ord)} norm on an empty tensor "
                               "because the operation does not have an identity")
        for d in given:
            if x.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_number_text(ord)} norm on the "
                                   f"dimension {d}because this dimension is empty and the operation does not "
                                   "have an identity")
    dtype = _check_dtype(dtype, x, "linalg.vector_norm")
    dims = None if given is None else _dim_list(given, x.ndim) if given else ()
    params = {"ord": ord, "dim": dims, "keepdim": bool(keepdim)}
    if dtype is not None and dtype is not x.dtype:
        params["dtype"] = dtype.np
    return apply(OPS["norm"], (x,), **params)


def _matrix_dims(x, dim, dtype, name):
    """PyTorch's _linalg_matrix_norm_checks: a (batch of) floating matrices, two different dims."""
    if x.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    _check_floating(x, name)
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}")
    dims = [int(d) for d in _dims(dims, x.ndim)]   # (PyTorch's vector norm is given them wrapped)
    if dims[0] == dims[1]:
        raise RuntimeError(f"{name}: dims must be different. Got ({dims[0]}, {dims[1]})")
    _check_dtype(dtype, x, name)
    return dims


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """``torch.linalg.matrix_norm``: the Frobenius norm (``'fro'``), or the largest (``ord=1``,
    ``inf``) or smallest (``-1``, ``-inf``) column or row sum of |a_ij|, over the two dims ``dim``."""
    name = "linalg.matrix_norm"
    _check_input(A, "linalg_matrix_norm")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"{name}: Order {ord} not supported.")
        dims = _matrix_dims(A, dim, dtype, name)
        if ord == "nuc":
            _no_singular_values("nuc")
        return vector_norm(A, 2, dims, keepdim, dtype=dtype)
    ord = _ord(ord, "linalg_matrix_norm")
    if abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"{name}: Order {_number_text(ord)} not supported.")
    dims = _matrix_dims(A, dim, dtype, name)
    if abs(ord) == 2:
        _no_singular_values(_number_text(ord))
    if abs(ord) == math.inf:       # the ∞-norm is the 1-norm of the transpose
        dims.reverse()
    if not keepdim and dims[0] < dims[1]:
        dims[1] -= 1
    sums = vector_norm(A, 1, (dims[0],), keepdim, dtype=dtype)
    if ord > 0 and sums.shape[dims[1]] == 0:    # the max of no sums of |a_ij| ≥ 0: 0, as PyTorch gives it
        shape = [1 if d == dims[1] else n for d, n in enumerate(sums.shape) if keepdim or d != dims[1]]
        return sums.new_zeros(shape)
    return sums.amax(dims[1], keepdim) if ord > 0 else sums.amin(dims[1], keepdim)


def _no_singular_values(ord):
    raise NotImplementedError(f"linalg.matrix_norm: ord={ord!r} needs the singular values (torch.linalg.svdvals), "
                              "which gradviz does not compute; real PyTorch does")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``torch.linalg.norm``: a vector norm, or a matrix norm when ``ord`` is given for a matrix
    (or ``dim`` names two dims); the 2-norm of everything when neither is given."""
    _check_input(A, "linalg_norm")
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dims}")
    elif ord is not None and A.ndim not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.ndim}D.")
    if isinstance(ord, str):
        return matrix_norm(A, ord, (0, 1) if dim is None else dims, keepdim, dtype=dtype)
    if ord is not None and (len(dims) == 2 if dim is not None else A.ndim == 2):
        return matrix_norm(A, ord, (0, 1) if dim is None else dims, keepdim, dtype=dtype)
    return vector_norm(A, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype)


def torch_norm(x, p="fro", dim=None, keepdim=False, dtype=None):
    """``torch.norm`` / ``x.norm()`` (deprecated in PyTorch but everywhere in courses): the 2-norm
    unless told; a string ``p`` is a matrix norm ('fro' over at most two dims is the 2-norm)."""
    one = isinstance(dim, int)
    dims = None if dim is None else [dim] if one else list(dim)
    if isinstance(p, str):
        if p == "fro" and (dim is None or one or len(dims) <= 2):
            return vector_norm(x, 2, dims, keepdim, dtype=dtype)
        return matrix_norm(x, p, list(range(x.ndim)) if dims is None else dims, keepdim, dtype=dtype)
    return vector_norm(x, 2.0 if p is None else p, dims, keepdim, dtype=dtype)
