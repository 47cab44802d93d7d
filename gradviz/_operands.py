"""An op's arguments as PyTorch reads them: numbers as constant tensors, type promotion, dims and
shapes, and PyTorch's own words when it refuses one.

Tensors are recognised as :class:`gradviz._types.TensorBase` and new ones (a constant for
``x * 2``) made through the class of a tensor at hand, so this module sits below ``Tensor``.
"""

import builtins
import math

import numpy as np

from . import _dtype
from ._arg_errors import check_sizes
from ._arrays import as_array
from .autograd.engine import apply
from ._types import Size, TensorBase, check_device, wrapped, WorkedOut
from .ops import OPS

__all__ = []


def _literal(value, dt, like, kept=True):
    """A Python number used in an op, as a 0-d constant tensor of ``like``'s class (PyTorch's 'wrapped number').

    The number itself is kept: a node that saved it shows it as PyTorch does, in its own type
    (``(x * 2).grad_fn._saved_other`` is ``tensor(2)``, an int64).  ``kept=False``: a stand-in
    PyTorch has no tensor for (a bound of ``clamp`` not given), saved as None."""
    # (an integer dtype wraps around as PyTorch does: int8 * 200)
    t = like._wrap(np.array(value, dt.np) if dt.kind == 2 else np.asarray(value).astype(dt.np))
    t._literal = True
    t.__dict__["_number"] = value if kept else None
    return t


def _broadcast_error(a, b):
    sa, sb = list(a), list(b)
    for i in range(1, max(len(sa), len(sb)) + 1):
        x = sa[-i] if i <= len(sa) else 1
        y = sb[-i] if i <= len(sb) else 1
        if x != y and x != 1 and y != 1:
            dim = max(len(sa), len(sb)) - i
            return RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                                f"at non-singleton dimension {dim}")
    return RuntimeError("shapes cannot be broadcast")


def _is_operand(v):
    """Tensors, numbers and arrays take part in arithmetic; ``x + "a"`` or ``x + [1]`` is a TypeError."""
    return isinstance(v, (TensorBase, builtins.int, builtins.float, np.ndarray, np.number, np.bool_))


_BOOL_SUB = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
             "invert a mask, use the `~` or `logical_not()` operator instead.")


def _check_sub(a, b):
    """PyTorch refuses ``-`` on booleans (a mask is inverted with ``~``)."""
    a_bool, b_bool = _is_bool(a), _is_bool(b)
    if a_bool and b_bool and isinstance(a, TensorBase) and isinstance(b, TensorBase):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError(_BOOL_SUB)


def _is_bool(v):
    """A bool, or a tensor of bools (dtype kind "b": comparing with np.bool_ costs a dtype conversion)."""
    if isinstance(v, TensorBase):
        return v._data.dtype.kind == "b"
    return isinstance(v, (builtins.bool, np.bool_))


def _binary(key, a, b, float_result=False, **params):
    """``a <op> b`` with PyTorch's type promotion; Python numbers become constant inputs."""
    if isinstance(b, TensorBase):
        dtype = a._data.dtype
        if dtype == b._data.dtype and (dtype.kind == "f" or not float_result):
            try:  # the common case, two tensors of one dtype: nothing to promote
                return apply(OPS[key], (a, b), **params)
            except ValueError:
                raise _broadcast_error(a.shape, b.shape) from None
    elif (type(b) is builtins.float or type(b) is builtins.int) and a._data.dtype.kind == "f":
        # a float tensor and a Python number (0.1 * p.grad): the tensor's dtype, nothing to promote
        return apply(OPS[key], (a, _literal(b, a.dtype, a)), **params)
    elif not _is_operand(b):
        return NotImplemented
    if not isinstance(b, TensorBase):
        if isinstance(b, np.ndarray):
            b = a._wrap(as_array(b))
        else:
            dt = _dtype.with_scalar(a.dtype, b) if isinstance(a, TensorBase) else _dtype.result_type(a, b)
            if float_result and not dt.is_floating_point:
                dt = _dtype.get_default_dtype()
            b = _literal(b, dt, a)
    if not isinstance(a, TensorBase):
        a = _literal(a, _dtype.result_type(a, b), b)
    dt = a.dtype if a._data.dtype == b._data.dtype else _dtype.result_type(a, b)
    if float_result and not dt.is_floating_point:
        dt = _dtype.get_default_dtype()
    arrays = [a._data if a._data.dtype == dt.np else a._data.astype(dt.np),
              b._data if b._data.dtype == dt.np else b._data.astype(dt.np)]
    try:
        return apply(OPS[key], (a, b), arrays, **params)
    except ValueError:
        raise _broadcast_error(a.shape, b.shape) from None


def _floating(t):
    """Unary maths on an integer tensor happens in the default float dtype, as in PyTorch."""
    if t._data.dtype.kind == "f":     # (its dtype's is_floating_point, without making the dtype)
        return None
    return [t._data.astype(_dtype.get_default_dtype().np)]


def _check_alpha(t, alpha):
    if isinstance(alpha, builtins.float) and not t.dtype.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _rounded_division(t, other, kind, reverse=False):
    """``//``, ``%``, fmod and ``div(rounding_mode=...)``: PyTorch's promotion, and its node
    (NotImplemented for ``//``, whose derivative PyTorch does not define)."""
    if not _is_operand(other):
        return NotImplemented
    number = not isinstance(other, (TensorBase, np.ndarray))
    o = other if isinstance(other, TensorBase) else t._wrap(as_array(other)) if isinstance(other, np.ndarray) \
        else _literal(other, _dtype.result_type(t, other), t)
    dt = _dtype.result_type(t, o)
    a, b = t._data.astype(dt.np, copy=False), o._data.astype(dt.np, copy=False)
    if not dt.is_floating_point and (b == 0).any():
        raise RuntimeError("ZeroDivisionError")   # integers have no inf to give
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise _broadcast_error(t.shape, o.shape) from None
    if kind in ("floor", "trunc"):
        return apply(OPS["div_rounding"], (t, o), [a, b], rounding_mode=kind)
    if reverse:
        key = {"floor_divide": "floor_divide_scalar", "remainder": "rremainder"}[kind]
        return apply(OPS[key], (t,), [a], c=b, **({"reverse": True} if key == "floor_divide_scalar" else {}))
    if number:
        return apply(OPS[kind + "_scalar"], (t,), [a], c=b)
    return apply(OPS[kind], (t, o), [a, b])


def _unary(key, t, **params):
    return apply(OPS[key], (t,), _floating(t), **params)


def _dims(dim, ndim):
    """``dim`` (one or several) wrapped into ``range(ndim)``, refused as PyTorch refuses it out of
    range; a negative one remembers how it was written, which its node shows (``_types.Wrapped``)."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {d})")
        out.append(wrapped(d, max(ndim, 1)))
    return tuple(out)


def _squeezed_dims(dim, ndim):
    """``squeeze(dim)``'s dim, or its dims (a tuple, each once), wrapped into range."""
    if isinstance(dim, int):
        return _dims(dim, ndim)[0]
    dims = _dims(dim, ndim)
    for k, d in enumerate(dims):
        if d in dims[:k]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return dims


class _EveryDim:
    """The default of sum/mean: no ``dim`` given at all, which PyTorch records as another node
    (SumBackward0) than an explicit ``dim=None`` or ``dim=()`` (SumBackward1)."""

    def __repr__(self):
        return "None"


_EVERY_DIM = _EveryDim()


def _reduced_dims(dim, ndim):
    """The dims a reduction over ``dim`` runs over: every one for None or ``()``, none of a 0-d
    tensor's; its node shows ``dim`` as written (``_types.WorkedOut``)."""
    if dim is None or isinstance(dim, (tuple, list)) and not dim:
        return WorkedOut(range(ndim), None if dim is None else ())
    dims = _dims(dim, ndim)
    return dims if ndim else WorkedOut((), dims)


def _shape_args(args, method=None):
    """``(2, 3)`` from ``x.view(2, 3)`` or ``x.view((2, 3))``; what is not a size is refused in
    PyTorch's words for the tensor's ``method`` (``x.view('a')``)."""
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    try:
        return tuple(int(a) for a in sizes)
    except (TypeError, ValueError):
        if method is not None:
            check_sizes(method, args)
        raise


def _new_shape(args, fn):
    """The shape of a new tensor from ``fn(2, 3)`` or ``fn((2, 3))``, refused as PyTorch refuses it."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    elif len(args) == 1 and not _is_int(args[0]):
        raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, not {type(args[0]).__name__}")
    for i, a in enumerate(args, 1):
        if not _is_int(a):
            raise TypeError(f"{fn}(): argument 'size' failed to unpack the object at pos {i} with error "
                            f'"type must be tuple of ints,but got {type(a).__name__}"')
    shape = tuple(int(a) for a in args)
    for d in shape:
        if d < 0 and fn == "zeros":  # zeros has a check of its own
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        if d < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {list(shape)}")
    return shape


def _is_int(a):
    return isinstance(a, (builtins.int, np.integer)) or isinstance(a, TensorBase) and not a.is_floating_point()


def _number(v):
    return v.item() if isinstance(v, TensorBase) else v


def _viewable(a, shape):
    """Can ``a`` be seen with ``shape`` without copying? PyTorch's ``computeStride``, on numpy strides.

    Runs of dimensions that are contiguous with each other may be merged or split; a view cannot
    cross from one such run to the next.
    """
    old, new = a.shape, tuple(shape)
    if not old or a.size == 0:
        return True
    strides = [s // a.itemsize for s in a.strides]
    view_d, base = len(new) - 1, strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and strides[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if d > 0:
                base, tensor_numel, view_numel = strides[d - 1], 1, 1
    return view_d == -1


def _finish(t, requires_grad):
    """``requires_grad=`` of a new tensor: only floating-point tensors can have a gradient."""
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return t


def _filled_in(shape, n):
    """``shape`` with its one ``-1`` worked out for ``n`` elements where the others divide ``n`` (else as it is)."""
    known = math.prod(d for d in shape if d != -1)
    if -1 in shape and known and n % known == 0:
        return tuple(n // known if d == -1 else d for d in shape)
    return shape


def _inferred(shape, n):
    """``shape`` with its ``-1`` worked out for ``n`` elements, refused as PyTorch refuses it."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    shape = _filled_in(shape, n)
    if math.prod(shape) != n or any(d < 0 for d in shape):
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {n}")
    return shape


def _repeats(t, sizes):
    """``t.repeat(*sizes)``'s counts, refused in PyTorch's words (too few, or a negative size made)."""
    if len(sizes) < t.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    shape = (1,) * (len(sizes) - t.ndim) + tuple(t.shape)
    made = [n * s for n, s in zip(sizes, shape)]
    for d in made:
        if d < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {made}")
    return sizes


def _unflattened(t, dim, sizes):
    """The shape ``t.unflatten(dim, sizes)`` views ``t`` with: dim ``dim`` split into ``sizes``
    (one of them may be -1), refused in PyTorch's words."""
    refused = "unflatten(): argument 'sizes' (position 2) must be tuple of ints, "
    if not isinstance(sizes, (tuple, list)):
        raise TypeError(refused + f"not {type(sizes).__name__}")
    for pos, n in enumerate(sizes):
        if not _is_int(n):
            raise TypeError(refused + f"but found element of type {type(n).__name__} at pos {pos}")
    if t.ndim == 0:
        raise RuntimeError(f"unflatten got an unexpected error:\nDimension specified as {dim} but tensor has no dimensions")
    d = _dims(dim, t.ndim)[0]
    sizes = tuple(int(n) for n in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be inferred")
    size = t.shape[d]
    sizes = _filled_in(sizes, size)
    if math.prod(sizes) != size or -1 in sizes:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                           f"({size}) in the input tensor")
    return tuple(t.shape[:d]) + sizes + tuple(t.shape[d + 1:])


def _expanded(t, shape):
    """The shape ``t.expand(*shape)`` makes (``-1`` keeps a size), refused in PyTorch's words."""
    if len(shape) < t.ndim:
        raise RuntimeError(f"expand(gradviz.{t.dtype.legacy}{{{list(t.shape)}}}, size={list(shape)}): the "
                           f"number of sizes provided ({len(shape)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({t.ndim})")
    old = (None,) * (len(shape) - t.ndim) + tuple(t.shape)
    asked, shape = shape, tuple(s if d == -1 else d for d, s in zip(shape, old))
    for i in reversed(range(len(shape))):          # PyTorch checks from the last dimension
        d, s = shape[i], old[i]
        if s is not None and s != 1 and d != s:
            raise RuntimeError(f"The expanded size of the tensor ({d}) must match the existing size ({s}) "
                               f"at non-singleton dimension {i}.  Target sizes: {list(asked)}.  "
                               f"Tensor sizes: {list(t.shape)}")
    return shape


def _permutation(t, dims):
    """``t.permute(*dims)``'s dims, checked as PyTorch checks them."""
    if len(dims) != t.ndim:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           "length of the desired ordering of dimensions i.e. input.dim() = "
                           f"{t.ndim} is not equal to len(dims) = {len(dims)}")
    dims = _dims(dims, t.ndim)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return dims


def _check_bernoulli(t):
    """``t.bernoulli()``'s probabilities, refused in PyTorch's words."""
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{_dtype.TYPE_NAMES[t.dtype.name]}\'')
    if t._data.size and not ((t._data >= 0) & (t._data <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")


def _check_bernoulli_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return float(p)


def _check_multinomial(t, num_samples, replacement):
    """``t.multinomial(...)``'s weights and count, refused in PyTorch's words."""
    if not 1 <= t.ndim <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not t.dtype.is_floating_point:
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           + t.type().split(".")[-1].removesuffix("Tensor"))
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > t.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = t._data.reshape(-1, t._data.shape[-1])
    if not replacement or num_samples == 1:
        if not ((rows < np.inf) & (rows >= 0)).all():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (rows.sum(axis=-1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        return
    for row in rows:
        if (row < 0).any():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.isfinite(row).all():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        if not row.sum() > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _legacy_new(cls, dtype, *args, **kwargs):
    """``Tensor(2, 3)`` (a new 2x3 tensor) or ``Tensor([[0, 1], [1, 0]])`` (from data), made of ``cls``."""
    if kwargs.get("device") not in (None, "cpu"):
        check_device(kwargs["device"])
    if not args:
        return cls._wrap(np.zeros((0,), dtype.np))
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray, TensorBase)) and not isinstance(args[0], Size):
        data = args[0]
        if isinstance(data, TensorBase):
            if data.dtype is not dtype:
                raise TypeError(f"expected {_options(dtype)} (got {_options(data.dtype)})")
            return data.detach()
        return cls._wrap(np.array(as_array(data), dtype=dtype.np))
    if len(args) == 1 and isinstance(args[0], str):
        raise TypeError("new(): invalid data type 'str'")
    if len(args) == 1 and not _is_int(args[0]):
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    if not _is_int(args[0]):
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)}), but expected one of:")
    return cls._wrap(np.zeros(_new_shape(args, "new"), dtype.np))


def _options(dtype):
    """How PyTorch's C++ prints a legacy constructor's expected type (c10::TensorOptions)."""
    return (f"TensorOptions(dtype={_dtype.CPP_NAMES[dtype.name]}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")
