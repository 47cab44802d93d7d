"""Tensor: a numpy array plus what autograd needs (requires_grad, grad, grad_fn).

Every differentiable operation goes through :func:`apply`, which runs the op's forward from
the table in :mod:`gradviz.ops` and, when a gradient will be needed, records a ``grad_fn``
node.  Composite operations are one-liners over the primitives.
"""

import builtins
import functools
import inspect
import math
import warnings
import weakref

import numpy as np

from . import _dtype as D
from . import _engine, _random
from ._engine import _GradMode, apply
from ._format import tensor_repr
from ._types import Size, TensorBase, device, layout, return_types, strided
from .ops import OPS, _median_index, _sorted

__all__ = ["Tensor", "Size", "apply", "tensor", "as_array", "return_types"]

_seq = _engine._seq


def as_array(value, dtype=None):
    """A numpy array from a tensor, number, nested list (of numbers or tensors) or array."""
    if isinstance(value, Tensor):
        a = value._data
    elif isinstance(value, np.ndarray):
        a = value
    else:
        a = _from_data(value, D.as_dtype(dtype))
    if dtype is not None:
        a = a.astype(D.as_dtype(dtype).np, copy=False)
    elif a.dtype not in D._BY_NP:
        D.from_numpy_dtype(a.dtype)
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
    dt = dtypes[0] if dtypes else D.get_default_dtype()
    for other in dtypes[1:]:
        dt = D._promote(dt, other)
    if misplaced:  # a list where a number belongs: [[1, 2], [3, [4]]]
        name = type(misplaced[0]).__name__
        raise TypeError(f"must be real number, not {name}" if dt.is_floating_point
                        else f"'{name}' object cannot be interpreted as an integer")
    if dt is D.int64 and any(type(v) is builtins.int and not -2 ** 63 <= v < 2 ** 63 for v in _flat([value])):
        raise ValueError("Overflow when unpacking long long")
    return np.array(_untensor(value), dtype=(dtype or dt).np)  # Python floats straight to dtype


_SEQUENCES = (list, tuple, range)


def _empty_data_dtype(v):
    """The dtype PyTorch infers for data holding no element: promoted over every number found, an
    empty sequence counting as the default dtype."""
    if isinstance(v, np.ndarray):
        return D.from_numpy_dtype(v.dtype)
    if not isinstance(v, _SEQUENCES):
        return _scalar_dtype(v)
    if len(v) == 0:
        return D.get_default_dtype()
    dt = _empty_data_dtype(v[0])
    for x in v[1:]:
        dt = D._promote(dt, _empty_data_dtype(x))
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
        dtypes.append(D.from_numpy_dtype(v.dtype))
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


_PY_NUMBERS = {builtins.bool: lambda: D.bool, builtins.int: lambda: D.int64, builtins.float: D.get_default_dtype}


def _scalar_dtype(v):
    if isinstance(v, Tensor):
        if v._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return v.dtype
    if isinstance(v, (builtins.bool, np.bool_)):
        return D.bool
    if isinstance(v, np.generic):
        return D.from_numpy_dtype(v.dtype)
    if isinstance(v, builtins.int):
        return D.int64
    if isinstance(v, builtins.float):
        return D.get_default_dtype()
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
    if isinstance(v, Tensor):  # one-element tensors inside a list are numbers
        return v.item()
    if isinstance(v, _SEQUENCES):
        return [_untensor(x) for x in v]
    return v


def _literal(value, dt):
    """A Python number used in an op, as a 0-d constant tensor (PyTorch's 'wrapped number')."""
    t = Tensor._wrap(np.asarray(value).astype(dt.np))   # wraps around as PyTorch does: int8 * 200
    t._literal = True
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
    return isinstance(v, (Tensor, builtins.int, builtins.float, np.ndarray, np.number, np.bool_))


_BOOL_SUB = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
             "invert a mask, use the `~` or `logical_not()` operator instead.")


def _check_sub(a, b):
    """PyTorch refuses ``-`` on booleans (a mask is inverted with ``~``)."""
    is_bool = [isinstance(v, (builtins.bool, np.bool_)) or isinstance(v, Tensor) and v.dtype is D.bool
               for v in (a, b)]
    if all(is_bool) and isinstance(a, Tensor) and isinstance(b, Tensor):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if any(is_bool):
        raise RuntimeError(_BOOL_SUB)


def _binary(key, a, b, float_result=False, **params):
    """``a <op> b`` with PyTorch's type promotion; Python numbers become constant inputs."""
    if not _is_operand(b):
        return NotImplemented
    if type(b) is Tensor and a._data.dtype == b._data.dtype and (a._data.dtype.kind == "f" or not float_result):
        try:  # the common case, two tensors of one dtype: nothing to promote
            return apply(OPS[key], (a, b), [a._data, b._data], **params)
        except ValueError:
            raise _broadcast_error(a.shape, b.shape) from None
    if not isinstance(b, Tensor):
        if isinstance(b, np.ndarray):
            b = Tensor._wrap(as_array(b))
        else:
            dt = D.with_scalar(a.dtype, b) if isinstance(a, Tensor) else D.result_type(a, b)
            if float_result and not dt.is_floating_point:
                dt = D.get_default_dtype()
            b = _literal(b, dt)
    if not isinstance(a, Tensor):
        a = _literal(a, D.result_type(a, b))
    dt = a.dtype if a._data.dtype == b._data.dtype else D.result_type(a, b)
    if float_result and not dt.is_floating_point:
        dt = D.get_default_dtype()
    arrays = [a._data if a._data.dtype == dt.np else a._data.astype(dt.np),
              b._data if b._data.dtype == dt.np else b._data.astype(dt.np)]
    try:
        return apply(OPS[key], (a, b), arrays, **params)
    except ValueError:
        raise _broadcast_error(a.shape, b.shape) from None


def _floating(t):
    """Unary maths on an integer tensor happens in the default float dtype, as in PyTorch."""
    if t.dtype.is_floating_point:
        return None
    return [t._data.astype(D.get_default_dtype().np)]


def _check_alpha(t, alpha):
    if isinstance(alpha, builtins.float) and not t.dtype.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _rounded_division(t, other, kind, reverse=False):
    """``//``, ``%``, fmod and ``div(rounding_mode=...)``: PyTorch's promotion, and its node
    (NotImplemented for ``//``, whose derivative PyTorch does not define)."""
    if not _is_operand(other):
        return NotImplemented
    number = not isinstance(other, (Tensor, np.ndarray))
    o = other if isinstance(other, Tensor) else Tensor._wrap(as_array(other)) if isinstance(other, np.ndarray) \
        else _literal(other, D.result_type(t, other))
    dt = D.result_type(t, o)
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
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {d})")
        out.append(d % max(ndim, 1))
    return tuple(out)


class _EveryDim:
    """The default of sum/mean: no ``dim`` given at all, which PyTorch records as another node
    (SumBackward0) than an explicit ``dim=None`` or ``dim=()`` (SumBackward1)."""

    def __repr__(self):
        return "None"


_EVERY_DIM = _EveryDim()


def _reduced_dims(dim, ndim):
    if dim is None or isinstance(dim, (tuple, list)) and not dim:
        return tuple(range(ndim))
    dims = _dims(dim, ndim)
    return dims if ndim else ()


def _shape_args(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


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
    return isinstance(a, (builtins.int, np.integer)) or isinstance(a, Tensor) and not a.is_floating_point()


# --- Tensor -------------------------------------------------------------------------------------

class Tensor(TensorBase):
    """An n-dimensional array that can record the operations applied to it.

    >>> import gradviz
    >>> x = gradviz.ones(2, requires_grad=True)
    >>> y = (3 * x).sum(); y.backward(); x.grad
    tensor([3., 3.])
    """

    __module__ = "gradviz"      # type(t) prints <class 'gradviz.Tensor'>, as torch.Tensor does
    __slots__ = ("_data", "_requires_grad", "_grad_fn", "_grad", "_vbox", "_acc", "_retains_grad",
                 "_hooks", "_seq", "_literal", "_base", "__dict__", "__weakref__")
    __array_priority__ = 1000   # numpy defers to Tensor's reflected operators

    def __new__(cls, *args, **kwargs):
        return _legacy_new(D.get_default_dtype(), *args, **kwargs)

    @classmethod
    def _wrap(cls, array):
        """A new leaf around ``array`` (no copy)."""
        t = object.__new__(Tensor)
        t._data, t._requires_grad, t._grad_fn, t._grad = array, False, None, None
        t._vbox, t._acc, t._retains_grad, t._hooks = [0], None, False, {}
        t._seq, t._literal, t._base = next(_seq), False, None
        return t

    # -- what a student inspects -----------------------------------------------------------------

    def __repr__(self):
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        # PyTorch formats a 0-d tensor as its number: f"{loss}" shows 2.4377..., not tensor(...)
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    @property
    def data(self):
        """The same storage, detached from the graph (and from version tracking)."""
        return Tensor._wrap(self._data)

    @data.setter
    def data(self, value):
        self._data = value._data if isinstance(value, Tensor) else as_array(value)

    @property
    def grad(self):
        """The accumulated gradient: ``None`` until a backward pass reaches this leaf."""
        if self._grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
                "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
                "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
                "instead. See github.com/pytorch/pytorch/pull/30531 for more information.",
                UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{D.CPP_NAMES[value.dtype.name]}' to a tensor "
                    f"with grad_dtype '{D.TYPE_NAMES[self.dtype.name]}'. The gradient must match the tensor's "
                    "grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype "
                    "attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with "
                    "caution. Diverging the dtypes of a tensor and its gradient may break downstream "
                    "systems that assume they match.")
            if value.shape != self.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                                   f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                                   "tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def grad_fn(self):
        """The node that made this tensor (``None`` for a leaf)."""
        return self._grad_fn

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        if self._grad_fn is not None:
            if flag:
                return
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if flag and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self._requires_grad = builtins.bool(flag)

    def requires_grad_(self, requires_grad=True):
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def volatile(self):
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        """Keep ``.grad`` on this non-leaf tensor after backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is not None:
            self._retains_grad = True

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new grad."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        key = len(self._hooks) and max(self._hooks) + 1
        self._hooks[key] = hook
        return _RemovableHandle(self._hooks, key)

    @property
    def _version(self):
        return self._vbox[0]

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        return Size(self._data.shape) if dim is None else self._data.shape[_dims(dim, self.ndim)[0]]

    @property
    def dtype(self):
        return D._BY_NP[self._data.dtype]

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return self._data.size

    nelement = numel

    @property
    def device(self):
        return device("cpu")

    is_cuda = False

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def stride(self, dim=None):
        """How many elements to step in storage to move one place along each dimension."""
        strides = tuple(st // self._data.itemsize for st in self._data.strides)
        return strides if dim is None else strides[_dims(dim, self.ndim)[0]]

    def storage_offset(self):
        """Where this tensor's first element lies in the storage it shares (a view's offset)."""
        root = self._data
        while isinstance(root.base, np.ndarray):
            root = root.base
        return (self.data_ptr() - root.__array_interface__["data"][0]) // self._data.itemsize

    layout = property(lambda self: strided)

    def element_size(self):
        return self._data.itemsize

    def type(self, dtype=None):
        """``'gradviz.FloatTensor'``, or a converted tensor: ``type(gradviz.DoubleTensor)``."""
        if dtype is None:
            return "gradviz." + self.dtype.legacy
        if isinstance(dtype, str):  # 'torch.DoubleTensor' as well as 'gradviz.DoubleTensor'
            legacy = {d.legacy: d for d in D._ALL}
            name = dtype.rsplit(".", 1)[-1]
            if name not in legacy:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = legacy[name]
        return self.to(getattr(dtype, "dtype", dtype))

    def data_ptr(self):
        return self._data.__array_interface__["data"][0]

    def diag(self, diagonal=0):
        """The diagonal of a matrix, or a diagonal matrix from a vector."""
        if self.ndim == 2:
            return apply(OPS["diagonal"], (self,), offset=diagonal)
        if self.ndim == 1:
            return apply(OPS["diag_embed"], (self,), offset=diagonal)
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{self.ndim}D")

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return builtins.bool(self._data.reshape(()).item())

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def _scalar(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __index__(self):
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__

    # -- leaving the graph -----------------------------------------------------------------------

    def detach(self):
        """The same values and storage, cut off from the graph (no grad_fn, no grad)."""
        t = Tensor._wrap(self._data)
        t._vbox = self._vbox
        if self._requires_grad:   # remembered weakly, for drawings: the graph was cut here
            t._cut = ("detach()", (weakref.ref(self),))
        return t

    def detach_(self):
        if self._grad_fn is not None:
            self._grad_fn = None
        self._requires_grad = False
        return self

    def clone(self, memory_format=None):
        """A copy (keeping the element order unless ``memory_format=gradviz.contiguous_format``)."""
        if memory_format == "contiguous_format":
            return apply(OPS["clone"], (self,), contiguous=True)
        return apply(OPS["clone"], (self,))

    def contiguous(self):
        """Self if its elements lie in row-major order, else a copy that does (CloneBackward0)."""
        return self if self._data.flags.c_contiguous else self.clone("contiguous_format")

    def is_contiguous(self):
        return self._data.flags.c_contiguous

    def to(self, *args, **kwargs):
        dtype = kwargs.get("dtype")
        _check_device(kwargs.get("device"))
        for a in args:
            if isinstance(a, D.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, (str, device)):
                _check_device(a)
        if dtype is None or dtype is self.dtype:
            return self
        return apply(OPS["to"], (self,), dtype=dtype.np)

    def float(self):
        return self.to(D.float32)

    def double(self):
        return self.to(D.float64)

    def half(self):
        return self.to(D.float16)

    def long(self):
        return self.to(D.int64)

    def int(self):
        return self.to(D.int32)

    def bool(self):
        return self.to(D.bool)

    def cpu(self):
        return self

    def cuda(self, device=None):
        _check_device("cuda")

    # -- backward --------------------------------------------------------------------------------

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute d(self)/d(leaf) for every leaf in the graph and add it into ``leaf.grad``.

        ``gradient`` is dL/d(self); it may be omitted only when self has one element.
        Saved values are freed afterwards unless ``retain_graph=True``.
        """
        _engine.backward(self, gradient, retain_graph, create_graph, inputs)

    # -- arithmetic ------------------------------------------------------------------------------

    def __add__(self, other):
        return _binary("add", self, other)

    # An array on the left (array + tensor): PyTorch takes part only in / and ==; for + - * @
    # Python then says the operation is unsupported, and so does gradviz.
    def __radd__(self, other):
        return NotImplemented if type(other) is np.ndarray else _binary("add", self, other)

    def __sub__(self, other):
        _check_sub(self, other)
        return _binary("sub", self, other)

    def __rsub__(self, other):
        if isinstance(other, Tensor):
            return _binary("sub", other, self)
        if not _is_operand(other) or type(other) is np.ndarray:
            return NotImplemented
        _check_sub(other, self)
        dt = D.result_type(self, other)
        arrays = None if self.dtype is dt else [self._data.astype(dt.np)]
        return apply(OPS["rsub"], (self,), arrays, c=other)

    def __mul__(self, other):
        return _binary("mul", self, other)

    def __rmul__(self, other):
        return NotImplemented if type(other) is np.ndarray else _binary("mul", self, other)

    def __truediv__(self, other):
        return _binary("div", self, other, float_result=True)

    def __rtruediv__(self, other):
        if isinstance(other, Tensor):
            return _binary("div", other, self, float_result=True)
        return self.reciprocal() * other

    def __floordiv__(self, other):
        return _rounded_division(self, other, "floor_divide")

    def __rfloordiv__(self, other):
        return _rounded_division(self, other, "floor_divide", reverse=True)

    def __mod__(self, other):
        return _rounded_division(self, other, "remainder")

    def __rmod__(self, other):
        return _rounded_division(self, other, "remainder", reverse=True)

    remainder = __mod__

    def fmod(self, other):
        """The remainder with the sign of self (C's fmod), where ``%`` takes the divisor's sign."""
        return _rounded_division(self, other, "fmod")

    def __pow__(self, exponent):
        if isinstance(exponent, Tensor):
            return _binary("pow_tt", self, exponent)
        if not _is_operand(exponent):
            return NotImplemented
        dt = D.with_scalar(self.dtype, exponent)   # int ** 0.5 is float32, bool ** 2 is int64
        if not dt.is_floating_point and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return apply(OPS["pow"], (self,), None if dt is self.dtype else [self._data.astype(dt.np)], n=exponent)

    def __rpow__(self, base):
        if isinstance(base, (builtins.int, np.integer)) and not isinstance(base, builtins.bool) \
                and not self.dtype.is_floating_point:
            return apply(OPS["rpow"], (self,), c=base)   # 2 ** int tensor stays an integer tensor
        return apply(OPS["rpow"], (self,), _floating(self), c=base)

    def __neg__(self):
        if self.dtype is D.bool:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                               "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
        return apply(OPS["neg"], (self,))

    def __pos__(self):
        return self

    def __abs__(self):
        return self.abs()

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return NotImplemented   # defined so that numpy defers: [1, 2] @ t and array @ t are TypeErrors

    def add(self, other, alpha=1):
        """self + alpha * other, one AddBackward0 node as in PyTorch."""
        _check_alpha(self, alpha)
        return _binary("add", self, other) if alpha == 1 else _binary("add", self, other, alpha=alpha)

    def sub(self, other, alpha=1):
        _check_sub(self, other)
        _check_alpha(self, alpha)
        return _binary("sub", self, other) if alpha == 1 else _binary("sub", self, other, alpha=alpha)

    def mul(self, other):
        return self * other

    def div(self, other, rounding_mode=None):
        if rounding_mode is not None:
            return _rounded_division(self, other, rounding_mode)
        return self / other

    floor_divide = __floordiv__


    def pow(self, exponent):
        return self ** exponent

    def neg(self):
        return -self

    def square(self):
        return self ** 2

    def clamp(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        return apply(OPS["clamp"], (self,), lo=_number(min), hi=_number(max))

    def clamp_min(self, min):
        return self.clamp(min=min)

    def clamp_max(self, max):
        return self.clamp(max=max)

    def norm(self, p="fro", dim=None, keepdim=False):
        """The vector p-norm (2 unless told): one LinalgVectorNormBackward0 node, as in PyTorch."""
        p = 2 if p == "fro" else float(p)
        params = {} if p == 2 else {"p": p}
        if dim is not None:
            params.update(dim=_dims(dim, self.ndim), keepdim=keepdim)
        return _unary("norm", self, **params)

    # -- comparisons: boolean tensors, never differentiable --------------------------------------

    def _compare(self, other, fn):
        if not _is_operand(other):
            return NotImplemented   # so x == None is False, as in PyTorch
        o = other._data if isinstance(other, Tensor) else other
        try:
            return Tensor._wrap(np.asarray(fn(self._data, o)))
        except ValueError:
            raise _broadcast_error(self.shape, np.shape(o)) from None

    def __eq__(self, other):
        return self._compare(other, np.equal)

    def __ne__(self, other):
        return self._compare(other, np.not_equal)

    def __lt__(self, other):
        return self._compare(other, np.less)

    def __le__(self, other):
        return self._compare(other, np.less_equal)

    def __gt__(self, other):
        return self._compare(other, np.greater)

    def __ge__(self, other):
        return self._compare(other, np.greater_equal)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def __and__(self, other):
        return self._compare(other, np.logical_and if self.dtype is D.bool else np.bitwise_and)

    def __or__(self, other):
        return self._compare(other, np.logical_or if self.dtype is D.bool else np.bitwise_or)

    def __xor__(self, other):
        return self._compare(other, np.logical_xor if self.dtype is D.bool else np.bitwise_xor)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __invert__(self):
        return Tensor._wrap(np.asarray(~self._data))

    def equal(self, other):
        return self.shape == other.shape and builtins.bool(np.array_equal(self._data, other._data))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return builtins.bool(np.allclose(self._data, as_array(other), rtol, atol, equal_nan))

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return Tensor._wrap(np.isclose(self._data, as_array(other), rtol, atol, equal_nan))

    def any(self, dim=None, keepdim=False):
        """Whether any element is nonzero (along ``dim``, if given)."""
        axis = None if dim is None else tuple(_dims(dim, self.ndim))
        return Tensor._wrap(np.asarray(self._data.any(axis=axis, keepdims=keepdim)))

    def all(self, dim=None, keepdim=False):
        """Whether every element is nonzero (along ``dim``, if given)."""
        axis = None if dim is None else tuple(_dims(dim, self.ndim))
        return Tensor._wrap(np.asarray(self._data.all(axis=axis, keepdims=keepdim)))

    def argmax(self, dim=None, keepdim=False):
        return Tensor._wrap(np.asarray(np.argmax(self._data, axis=dim, keepdims=keepdim), np.int64))

    def argmin(self, dim=None, keepdim=False):
        return Tensor._wrap(np.asarray(np.argmin(self._data, axis=dim, keepdims=keepdim), np.int64))

    # -- reductions ------------------------------------------------------------------------------

    def sum(self, dim=_EVERY_DIM, keepdim=False, dtype=None):
        """The sum of all elements (SumBackward0), or along ``dim`` (SumBackward1; ``dim=None`` is every dim)."""
        t = self.to(dtype) if dtype is not None else self
        if not t.dtype.is_floating_point and t.dtype is not D.int64:
            t = t.to(D.int64)
        if dim is _EVERY_DIM:
            return apply(OPS["sum"], (t,))
        return apply(OPS["sum_dim"], (t,), dim=_reduced_dims(dim, t.ndim), keepdim=keepdim)

    def mean(self, dim=_EVERY_DIM, keepdim=False, dtype=None):
        t = self.to(dtype) if dtype is not None else self
        if not t.dtype.is_floating_point:
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                               f"floating point or complex dtype. Got: {D.TYPE_NAMES[t.dtype.name]}")
        if dim is _EVERY_DIM:
            return apply(OPS["mean"], (t,))
        return apply(OPS["mean_dim"], (t,), dim=_reduced_dims(dim, t.ndim), keepdim=keepdim)

    def logsumexp(self, dim, keepdim=False):
        return apply(OPS["logsumexp"], (self,), _floating(self), dim=_dims(dim, self.ndim)[0], keepdim=keepdim)

    def cumsum(self, dim, dtype=None):
        t = self.to(dtype) if dtype is not None else self
        if not t.dtype.is_floating_point and t.dtype is not D.int64:
            t = t.to(D.int64)
        return apply(OPS["cumsum"], (t,), dim=_dims(dim, t.ndim)[0])

    def masked_fill(self, mask, value):
        """A copy with ``value`` wherever ``mask`` is True."""
        return apply(OPS["masked_fill"], (self,), mask=np.asarray(as_array(mask), bool), value=_number(value))

    def where(self, condition, other):
        """``x.where(c, y)``: x where c is true, y elsewhere (``gradviz.where(c, x, y)``)."""
        return where(condition, self, other)

    def masked_fill_(self, mask, value):
        return _inplace(self, Tensor.masked_fill, mask, value)

    def flip(self, *dims):
        return apply(OPS["flip"], (self,), dims=_dims(_shape_args(dims), self.ndim))

    def tril(self, diagonal=0):
        return apply(OPS["tril"], (self,), diagonal=diagonal)

    def triu(self, diagonal=0):
        return apply(OPS["triu"], (self,), diagonal=diagonal)

    def gather(self, dim, index):
        return apply(OPS["gather"], (self,), dim=_dims(dim, self.ndim)[0], index=as_array(index))

    def index_select(self, dim, index):
        return apply(OPS["index_select"], (self,), dim=_dims(dim, self.ndim)[0], index=as_array(index))

    def sort(self, dim=-1, descending=False):
        """Values (differentiable) and the indices they came from."""
        d = _dims(dim, self.ndim)[0] if self.ndim else 0
        values = apply(OPS["sort"], (self,), dim=d, descending=descending)
        _, idx = _sorted(self._data, d, descending)
        return return_types.sort(values, Tensor._wrap(idx.astype(np.int64)))

    def argsort(self, dim=-1, descending=False):
        return self.sort(dim, descending).indices

    def select(self, dim, index):
        """The slice at ``index`` along ``dim``, that dimension removed (what ``x[i]`` does for dim 0)."""
        d = _dims(dim, self.ndim)[0]
        n = self.shape[d]
        if not -n <= index < n:
            raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} "
                             f"at dimension {d}")
        return apply(OPS["select"], (self,), dim=d, index=index % n)

    def split(self, split_size_or_sections, dim=0):
        """Pieces along ``dim``: of ``split_size`` each (the last may be shorter), or of the sizes listed."""
        d = _dims(dim, self.ndim)[0]
        n = self.shape[d]
        if isinstance(split_size_or_sections, (list, tuple)):
            sizes, op = list(split_size_or_sections), OPS["split_sizes"]
            if sum(sizes) != n or any(k < 0 for k in sizes):
                raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                                   f"size at dimension {d}), but got split_sizes={sizes}")
        else:
            step, op = int(split_size_or_sections), OPS["split"]
            if step < 0 or (step == 0 and n != 0):
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
            sizes = [min(step, n - start) for start in range(0, n, step)] if step else [0]
        pieces, start = [], 0
        for k in sizes:
            pieces.append(apply(op, (self,), dim=d, s=slice(start, start + k, 1)))
            start += k
        return tuple(pieces)

    def chunk(self, chunks, dim=0):
        """At most ``chunks`` pieces of equal size along ``dim`` (the last may be shorter)."""
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        d = _dims(dim, self.ndim)[0]
        n = self.shape[d]
        if n == 0:
            return self.split([0] * chunks, d)
        return self.split(-(-n // chunks), d)

    def unbind(self, dim=0):
        """Every slice along ``dim``, that dimension removed: ``x.unbind(0)`` is ``(x[0], x[1], ...)``."""
        d = _dims(dim, self.ndim)[0]
        return tuple(apply(OPS["unbind"], (self,), dim=d, index=i) for i in range(self.shape[d]))

    def narrow(self, dim, start, length):
        d = _dims(dim, self.ndim)[0]
        return apply(OPS["slice"], (self,), dim=d, s=slice(start, start + length, 1))

    def type_as(self, other):
        return self.to(other.dtype)

    def bmm(self, other):
        if self.ndim != 3 or other.ndim != 3:
            raise RuntimeError("batch1 must be a 3D tensor")
        return matmul(self, other)

    def isnan(self):
        return Tensor._wrap(np.isnan(self._data))

    def isinf(self):
        return Tensor._wrap(np.isinf(self._data))

    def isfinite(self):
        return Tensor._wrap(np.isfinite(self._data))

    def logical_not(self):
        return Tensor._wrap(np.logical_not(self._data))

    def logical_and(self, other):
        return self._compare(other, np.logical_and)

    def logical_or(self, other):
        return self._compare(other, np.logical_or)

    def nonzero(self, as_tuple=False):
        idx = np.nonzero(self._data)
        if as_tuple:
            return tuple(Tensor._wrap(i.astype(np.int64)) for i in idx)
        return Tensor._wrap(np.stack(idx, axis=1).astype(np.int64) if idx else np.zeros((0, 0), np.int64))

    def prod(self, dim=None, keepdim=False, dtype=None):
        """The product of the elements (along ``dim``)."""
        t = self.to(dtype) if dtype is not None else self
        if not t.dtype.is_floating_point and t.dtype is not D.int64:
            t = t.to(D.int64)
        if dim is None:
            return apply(OPS["prod"], (t,))
        return apply(OPS["prod_dim"], (t,), dim=_dims(dim, t.ndim)[0], keepdim=keepdim)

    def softmax(self, dim, dtype=None):
        """e^x / Σ e^x along ``dim``: one SoftmaxBackward0 node, as in PyTorch."""
        t = self.to(dtype) if dtype is not None else self
        return apply(OPS["softmax"], (t,), _floating(t), dim=_dims(dim, t.ndim)[0])

    def log_softmax(self, dim, dtype=None):
        t = self.to(dtype) if dtype is not None else self
        return apply(OPS["log_softmax"], (t,), _floating(t), dim=_dims(dim, t.ndim)[0])

    def repeat(self, *sizes):
        """Tile the tensor: ``repeat(2, 1)`` stacks two copies along dim 0."""
        sizes = _shape_args(sizes)
        if len(sizes) < self.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                               "dimensions of tensor")
        return apply(OPS["repeat"], (self,), sizes=sizes)

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """The variance, with Bessel's correction (divide by n - 1) unless ``unbiased=False``."""
        return self._moment("var", dim, unbiased, keepdim, correction)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """The standard deviation, with Bessel's correction unless ``unbiased=False``."""
        return self._moment("std", dim, unbiased, keepdim, correction)

    def _moment(self, key, dim, unbiased, keepdim, correction):
        if isinstance(dim, builtins.bool):  # std(False): the old positional unbiased
            dim, unbiased = None, dim
        if correction is None:
            correction = 0 if unbiased is False else 1
        if not self.dtype.is_floating_point:
            raise RuntimeError("std and var only support floating point and complex dtypes")
        if dim is None:
            return apply(OPS[key], (self,), correction=correction)
        return apply(OPS[key], (self,), dim=_dims(dim, self.ndim), correction=correction, keepdim=keepdim)

    def _extreme(self, which, dim, keepdim):
        if isinstance(dim, Tensor):  # torch.max(a, b): the elementwise maximum
            return _binary(which + "imum", self, dim)
        if dim is None:
            if self._data.size == 0:
                raise RuntimeError(f"{which}(): Expected reduction dim to be specified for input.numel() "
                                   "== 0. Specify the reduction dim with the 'dim' argument.")
            return apply(OPS["a" + which], (self,))
        d = _dims(dim, self.ndim)[0]
        values = apply(OPS[which + "_dim"], (self,), dim=d, keepdim=keepdim)
        arg = np.argmax if which == "max" else np.argmin
        indices = Tensor._wrap(np.asarray(arg(self._data, axis=d, keepdims=keepdim), np.int64))
        return getattr(return_types, which)(values, indices)

    def max(self, dim=None, keepdim=False):
        return self._extreme("max", dim, keepdim)

    def min(self, dim=None, keepdim=False):
        return self._extreme("min", dim, keepdim)

    def median(self, dim=None, keepdim=False):
        """The lower of the two middle values (no averaging): overall, or along ``dim`` with where it is."""
        if dim is None:
            if self._data.size == 0:        # no middle value: nan, as PyTorch says
                return Tensor._wrap(np.asarray(np.nan, self._data.dtype))
            return apply(OPS["median"], (self,))
        d = _dims(dim, self.ndim)[0]
        values = apply(OPS["median_dim"], (self,), dim=d, keepdim=keepdim)
        idx = _median_index(self._data, d)
        return return_types.median(values, Tensor._wrap((idx if keepdim else np.squeeze(idx, d)).astype(np.int64)))

    def amax(self, dim=None, keepdim=False):
        return self.max() if dim is None else self.max(dim, keepdim).values

    def amin(self, dim=None, keepdim=False):
        return self.min() if dim is None else self.min(dim, keepdim).values

    # -- linear algebra --------------------------------------------------------------------------

    def matmul(self, other):
        return matmul(self, other)

    def mm(self, other):
        if self.ndim != 2:
            raise RuntimeError("self must be a matrix")
        if other.ndim != 2:
            raise RuntimeError("mat2 must be a matrix")
        return matmul(self, other)

    def mv(self, vec):
        return matmul(self, vec)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        """``self + mat1 @ mat2`` as one AddmmBackward0 node: what ``nn.Linear`` records."""
        if beta != 1 or alpha != 1:
            raise NotImplementedError("gradviz's addmm takes beta=1 and alpha=1 only")
        for name, m in (("mat1", mat1), ("mat2", mat2)):
            if m.ndim != 2:
                raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
        if mat1.shape[1] != mat2.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} "
                               f"and {mat2.shape[0]}x{mat2.shape[1]})")
        self.detach().expand(mat1.shape[0], mat2.shape[1])   # a bias that does not fit fails in PyTorch's words
        return apply(OPS["addmm"], (self, mat1, mat2))

    def dot(self, other):
        if self.ndim != 1 or other.ndim != 1:
            raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors")
        return matmul(self, other)

    # -- shapes ----------------------------------------------------------------------------------

    def view(self, *shape):
        """The same storage seen with another shape (possible only where the strides allow it)."""
        shape = self._infer(_shape_args(shape))
        if not _viewable(self._data, shape):
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                               "least one dimension spans across two contiguous subspaces). Use "
                               ".reshape(...) instead.")
        return apply(OPS["view"], (self,), shape=shape)

    def reshape(self, *shape):
        """A view when the strides allow it, else a contiguous copy reshaped (as PyTorch records it)."""
        shape = self._infer(_shape_args(shape))
        if self._data.flags.c_contiguous:
            return apply(OPS["view"], (self,), shape=shape)
        if _viewable(self._data, shape):
            return apply(OPS["reshape_alias"], (self,), shape=shape)
        return apply(OPS["reshape_copy"], (self.clone("contiguous_format"),), shape=shape)

    def view_as(self, other):
        return self.view(other.shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        s, e = _dims((start_dim, end_dim), self.ndim)
        shape = self.shape[:s] + (math.prod(self.shape[s:e + 1]),) + self.shape[e + 1:]
        return self if shape == self.shape else self.reshape(shape)

    def _infer(self, shape):
        n, known = self._data.size, math.prod(d for d in shape if d != -1)
        if shape.count(-1) > 1:
            raise RuntimeError("only one dimension can be inferred")
        if -1 in shape and known and n % known == 0:
            shape = tuple(n // known if d == -1 else d for d in shape)
        if math.prod(shape) != n or any(d < 0 for d in shape):
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {n}")
        return shape

    def expand(self, *shape):
        shape = _shape_args(shape)
        if len(shape) < self.ndim:
            raise RuntimeError(f"expand(gradviz.{self.dtype.legacy}{{{list(self.shape)}}}, size={list(shape)}): the "
                               f"number of sizes provided ({len(shape)}) must be greater or equal to the "
                               f"number of dimensions in the tensor ({self.ndim})")
        old = (None,) * (len(shape) - self.ndim) + tuple(self.shape)
        asked, shape = shape, tuple(s if d == -1 else d for d, s in zip(shape, old))
        for i in reversed(range(len(shape))):          # PyTorch checks from the last dimension
            d, s = shape[i], old[i]
            if s is not None and s != 1 and d != s:
                raise RuntimeError(f"The expanded size of the tensor ({d}) must match the existing size ({s}) "
                                   f"at non-singleton dimension {i}.  Target sizes: {list(asked)}.  "
                                   f"Tensor sizes: {list(self.shape)}")
        return apply(OPS["expand"], (self,), shape=shape)

    def expand_as(self, other):
        return self.expand(other.shape)

    def permute(self, *dims):
        dims = _shape_args(dims)
        if len(dims) != self.ndim:
            raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the "
                               "length of the desired ordering of dimensions i.e. input.dim() = "
                               f"{self.ndim} is not equal to len(dims) = {len(dims)}")
        dims = _dims(dims, self.ndim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        return apply(OPS["permute"], (self,), dims=dims)

    def transpose(self, dim0, dim1):
        d0, d1 = _dims((dim0, dim1), self.ndim)
        return apply(OPS["transpose"], (self,), d0=d0, d1=d1)

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return apply(OPS["t"], (self,), d0=0, d1=self.ndim - 1 if self.ndim else 0)

    @property
    def T(self):
        return self.permute(*range(self.ndim - 1, -1, -1))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def squeeze(self, dim=None):
        if dim is None:
            return apply(OPS["squeeze"], (self,))
        d = _dims(dim, self.ndim)[0] if self.ndim else None
        if d is None or self.shape[d] != 1:
            return apply(OPS["squeeze_dim"], (self,), dim=())
        return apply(OPS["squeeze_dim"], (self,), dim=d)

    def unsqueeze(self, dim):
        return apply(OPS["unsqueeze"], (self,), dim=_dims(dim, self.ndim + 1)[0])

    # the in-place forms change the shape, not the numbers: self becomes the view
    def t_(self):
        if self.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return _restride(self, "t_", d0=0, d1=self.ndim - 1 if self.ndim else 0)

    def transpose_(self, dim0, dim1):
        d0, d1 = _dims((dim0, dim1), self.ndim)
        return _restride(self, "transpose_", d0=d0, d1=d1)

    def unsqueeze_(self, dim):
        return _restride(self, "unsqueeze_", dim=_dims(dim, self.ndim + 1)[0])

    def squeeze_(self, dim=None):
        if dim is None:
            return _restride(self, "squeeze_")
        d = _dims(dim, self.ndim)[0] if self.ndim else None
        # SqueezeBackward4, the node x.squeeze_(dim) makes in PyTorch
        return _restride(self, "squeeze_mm", dim=d if d is not None and self.shape[d] == 1 else ())

    # -- indexing --------------------------------------------------------------------------------

    def __getitem__(self, key):
        if self.ndim == 0 and any(isinstance(k, (builtins.int, np.integer)) and not isinstance(k, builtins.bool)
                                  for k in (key if isinstance(key, tuple) else (key,))):
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        if isinstance(key, slice):  # a lone slice is always recorded, even x[:]
            if self.ndim == 0:
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                 "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
            if key.step is not None and key.step <= 0:
                raise ValueError("step must be greater than zero")
            return apply(OPS["slice"], (self,), dim=0, s=slice(*key.indices(self.shape[0])))
        key = key if isinstance(key, tuple) else (key,)
        if any(_is_advanced(k) for k in key):
            np_key = tuple(k._data if isinstance(k, Tensor) else k for k in key)
            _check_indices(np_key, self.shape)
            try:
                return apply(OPS["index"], (self,), key=np_key if len(np_key) > 1 else np_key[0])
            except IndexError as e:
                raise IndexError(str(e)) from None
        # basic indexing, one dimension at a time, as PyTorch records it
        _check_indices(key, self.shape)
        out, dim = self, 0
        consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
        for k in key:
            if k is Ellipsis:
                dim += out.ndim - dim - (consumed - _consumed_before(key, k))
            elif k is None:
                out = apply(OPS["unsqueeze"], (out,), dim=dim)
                dim += 1
            elif isinstance(k, slice):
                if dim >= out.ndim:
                    raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
                n = out.shape[dim]
                if k.step is not None and k.step <= 0:
                    raise ValueError("step must be greater than zero")
                s = slice(*k.indices(n))
                if s != slice(0, n, 1):
                    out = apply(OPS["slice"], (out,), dim=dim, s=s)
                dim += 1
            else:
                if dim >= out.ndim:
                    raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
                i, n = int(k), out.shape[dim]
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
                out = apply(OPS["select"], (out,), dim=dim, index=i % n)
        if out is self:  # only full slices and ...: still a new view, as in PyTorch
            out = apply(OPS["alias"], (self,))
        return out

    def __setitem__(self, key, value):
        key = _np_key(key)
        _check_leaf(self, view=True)  # PyTorch writes through the view self[key]
        if isinstance(value, Tensor) and value._requires_grad or self._requires_grad:
            value = value if isinstance(value, Tensor) else _literal(value, self.dtype)
            _inplace(self, lambda s, v: apply(OPS["copy_slices"], (s, v), key=key), value)
            return
        self._data[key] = value._data if isinstance(value, Tensor) else value
        self._vbox[0] += 1

    # -- in place --------------------------------------------------------------------------------

    def add_(self, other, alpha=1):
        return _inplace(self, Tensor.add, other, alpha)

    def sub_(self, other, alpha=1):
        return _inplace(self, Tensor.sub, other, alpha)

    def mul_(self, other):
        return _inplace(self, Tensor.mul, other)

    def div_(self, other):
        return _inplace(self, Tensor.div, other)

    def pow_(self, exponent):
        return _inplace(self, Tensor.pow, exponent)

    def clamp_(self, min=None, max=None):
        return _inplace(self, Tensor.clamp, min, max)

    def copy_(self, src):
        return _inplace(self, lambda s, v: v.expand(s.shape) if v.shape != s.shape else v.clone(),
                        src if isinstance(src, Tensor) else tensor(src))

    __iadd__, __isub__, __imul__, __itruediv__ = add_, sub_, mul_, div_

    def zero_(self):
        """Set every element to 0 in place (``x.grad.zero_()`` between training steps)."""
        return self.fill_(0)

    def fill_(self, value):
        _check_leaf(self)
        self._data[...] = value._data if isinstance(value, Tensor) else value
        self._vbox[0] += 1
        return self

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Indices drawn from each row of this tensor (non-negative weights): ``num_samples`` distinct ones, or
        with ``replacement=True`` any; after ``manual_seed`` (or with ``generator=``), PyTorch's draws."""
        if not 1 <= self.ndim <= 2:
            raise RuntimeError("prob_dist must be 1 or 2 dim")
        if not self.dtype.is_floating_point:
            raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                               + self.type().split(".")[-1].removesuffix("Tensor"))
        if num_samples <= 0:
            raise RuntimeError("cannot sample n_sample <= 0 samples")
        if not replacement and num_samples > self.shape[-1]:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        p = self._data
        rows = p.reshape(-1, p.shape[-1])
        if not replacement or num_samples == 1:
            if not ((rows < np.inf) & (rows >= 0)).all():
                raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
            if (rows.sum(axis=-1) == 0).any():
                raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        else:
            for row in rows:
                if (row < 0).any():
                    raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
                if not np.isfinite(row).all():
                    raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
                if not row.sum() > 0:
                    raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        return Tensor._wrap(_random.multinomial(p, int(num_samples), replacement, generator))

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        """Fill with uniform samples in [a, b), the numbers PyTorch's generator gives."""
        _check_leaf(self)
        if not self.dtype.is_floating_point:
            raise NotImplementedError(f'"check_uniform_bounds" not implemented for '
                                      f"'{D.TYPE_NAMES[self.dtype.name]}'")
        return self.fill_(_random.rand(self.shape, self._data.dtype, generator, a, b))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with normal samples, the numbers PyTorch's generator gives."""
        _check_leaf(self)
        if not self.dtype.is_floating_point:
            raise NotImplementedError(f'"normal_kernel_cpu" not implemented for '
                                      f"'{D.TYPE_NAMES[self.dtype.name]}'")
        return self.fill_(_random.randn(self.shape, self._data.dtype, generator, mean, std))

    def random_(self, low=0, high=None, *, generator=None):
        """Fill with integers in [low, high) (``random_(high)`` means [0, high))."""
        if high is None:
            low, high = 0, low
        return self.fill_(_random.randint(low, high, self.shape, generator))

    def new_tensor(self, data, dtype=None, requires_grad=False):
        return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, requires_grad=False):
        return _filled(_shape_args(size), 1, dtype or self.dtype, requires_grad)

    def new_empty(self, *size, dtype=None, requires_grad=False):
        return _filled(_shape_args(size), 0, dtype or self.dtype, requires_grad)

    def new_zeros(self, *size, dtype=None, requires_grad=False):
        return _filled(_shape_args(size), 0, dtype or self.dtype, requires_grad)

    def new_full(self, size, fill_value, dtype=None, requires_grad=False):
        return _filled(_shape_args(size), fill_value, dtype or self.dtype, requires_grad)


class _RemovableHandle:
    def __init__(self, hooks, key):
        self.hooks, self.key = hooks, key

    def remove(self):
        self.hooks.pop(self.key, None)


def _number(v):
    return v.item() if isinstance(v, Tensor) else v


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


def _is_advanced(k):
    return isinstance(k, (Tensor, list, np.ndarray)) or isinstance(k, (builtins.bool, np.bool_))


def _check_indices(key, shape):
    """Refuse what PyTorch refuses, in its words: float indices, integers out of range (counted
    among the index tensors), boolean masks of the wrong shape."""
    dim = advanced = 0
    for k in key:
        if isinstance(k, builtins.float):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             "valid indices (got float)")
        if isinstance(k, np.ndarray) and k.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if isinstance(k, (np.ndarray, list)) and np.asarray(k).dtype.kind in "iu" and dim < len(shape):
            k, n = np.asarray(k), shape[dim]
            bad = k[(k >= n) | (k < -n)]
            if bad.size:
                raise IndexError(f"index {bad.flat[0]} is out of bounds for dimension {advanced} with size {n}")
        if isinstance(k, (np.ndarray, list)):
            advanced += 1
        if isinstance(k, np.ndarray) and k.dtype == np.bool_ and k.ndim:
            for j, n in enumerate(k.shape):
                if dim + j >= len(shape) or n != shape[dim + j]:
                    raise IndexError(f"The shape of the mask {list(k.shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {list(shape)} at index {dim + j}")
            dim += k.ndim
        elif k is not None and k is not Ellipsis:
            dim += 1


def _consumed_before(key, stop):
    n = 0
    for k in key:
        if k is stop:
            return n
        if k is not None:
            n += 1
    return n


def _np_key(key):
    if isinstance(key, tuple):
        return tuple(k._data if isinstance(k, Tensor) else k for k in key)
    return key._data if isinstance(key, Tensor) else key


def _check_leaf(t, view=False):
    """In-place changes to a leaf that requires grad (or to a view of one) would corrupt its gradient."""
    if not _GradMode.enabled:
        return
    owner = t if t._base is None else t._base
    if (view or owner is not t) and owner._requires_grad and owner._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    if t._requires_grad and t._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _inplace(self, fn, *args):
    """``self.op_(...)``: compute ``fn(self, ...)``, then write it into self's storage.

    When the result has a grad_fn, self takes it over (PyTorch "rebases" the history), and
    its version counter goes up so saved copies of the old value can be caught at backward.
    """
    record = _GradMode.enabled and (self._requires_grad or any(
        isinstance(a, Tensor) and a._requires_grad for a in args))
    _check_leaf(self)
    src = self
    if record:  # the op may save its input: give it the old value, not the storage we overwrite
        src = Tensor._wrap(self._data.copy())
        src._grad_fn, src._requires_grad, src._acc = self._grad_fn, self._requires_grad, self._acc
        src._seq = self._seq
    result = fn(src, *args)
    if result.dtype.kind > self.dtype.kind:
        raise RuntimeError(f"result type {D.TYPE_NAMES[result.dtype.name]} can't be cast to the "
                           f"desired output type {D.TYPE_NAMES[self.dtype.name]}")
    if result.shape != self.shape:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    self._data[...] = result._data
    self._vbox[0] += 1
    node = result._grad_fn
    if node is not None:
        self._grad_fn, self._requires_grad = node, True
        node._out = weakref.ref(self)
        if node._saved and node._saved[-1] is not None:  # it saved its output: that is self now
            node._saved[-1] = (self._data, self._vbox, self._vbox[0], None)
    return self


def _restride(self, key, **params):
    """``x.t_()``, ``x.transpose_()``, ``x.(un)squeeze_()``: x itself becomes the view (same
    storage, new shape) and, when it has a history, the view's node continues it."""
    _check_leaf(self)
    view = apply(OPS[key], (self,), **params)
    self._data = view._data
    if view._grad_fn is not None:
        self._grad_fn, view._grad_fn._out = view._grad_fn, weakref.ref(self)
    return self


def matmul(a, b):
    """``a @ b`` as PyTorch dispatches it: dot, mv, mm, or a batched product."""
    a, b = (x if isinstance(x, Tensor) else tensor(x) for x in (a, b))
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    if a.dtype is not b.dtype:
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{D.TYPE_NAMES[a.dtype.name]} and {D.TYPE_NAMES[b.dtype.name]}")
        if a.ndim > 2 or b.ndim > 2:
            raise RuntimeError(f"expected scalar type {D.TYPE_NAMES[a.dtype.name]} but found "
                               f"{D.TYPE_NAMES[b.dtype.name]}")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{D.CPP_NAMES[a.dtype.name]} != {D.CPP_NAMES[b.dtype.name]}")
    if a.ndim == 1 and b.ndim == 1:
        if a.shape != b.shape:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                               f"[{b.shape[0]}] to have the same number of elements, but got "
                               f"{a.shape[0]} and {b.shape[0]} elements respectively")
        return apply(OPS["dot"], (a, b))
    if a.ndim == 2 and b.ndim == 1:
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), "
                               f"vec ({b.shape[0]})")
        return apply(OPS["mv"], (a, b))
    if a.ndim == 1 and b.ndim == 2:
        return apply(OPS["squeeze_mm"], (matmul(a.unsqueeze(0), b),), dim=0)
    if a.ndim == 2 and b.ndim == 2:
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} "
                               f"and {b.shape[0]}x{b.shape[1]})")
        return apply(OPS["mm"], (a, b))
    if a.ndim <= 2:   # one vector or matrix times a batch of matrices
        return _small_times_batch(a, b)
    if b.ndim <= 2:   # a batch of rows times one matrix (or vector): folded into one mm (mv), as PyTorch does
        out = matmul(a.reshape(-1, a.shape[-1]), b)
        return apply(OPS["reshape_copy"], (out,), shape=a.shape[:-1] + b.shape[1:])
    try:
        return apply(OPS["bmm"], (a, b))
    except ValueError as e:
        raise RuntimeError(str(e)) from None



def _small_times_batch(a, b):
    """``a @ b`` for a vector or matrix ``a`` and a batch ``b``, recorded as PyTorch records it: when ``a``
    requires grad, folded into one mv or mm of b's transposed matrices stacked (the gradient of ``a``
    is then one product, not a batch of them summed); otherwise ``a`` expanded to the batch and one bmm."""
    batch, (m2, p) = b.shape[:-2], b.shape[-2:]
    n, m1 = (1, a.shape[0]) if a.ndim == 1 else a.shape
    if a.requires_grad:
        folded = b.transpose(-1, -2).reshape(-1, m2)
        if a.ndim == 1:
            return apply(OPS["reshape_copy"], (folded.mv(a),), shape=batch + (p,))
        out = apply(OPS["reshape_copy"], (folded.mm(a.t()),), shape=batch + (p, n))
        return out.transpose(-1, -2).contiguous()
    count = math.prod(batch)
    a3 = a.expand(*batch, n, m1).reshape(count, n, m1)
    b3 = b.expand(*batch, m2, p).reshape(count, m2, p)
    if m1 != m2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{count}, {m1}] but "
                           f"got: [{count}, {m2}].")
    return apply(OPS["reshape_copy"], (apply(OPS["bmm"], (a3, b3)),), shape=batch + ((n,) if a.ndim == 2 else ()) + (p,))


def where(condition, input=None, other=None):
    """``where(c, a, b)``: a where c is true, b elsewhere (gradients follow the same choice)."""
    if input is None:
        return tuple(Tensor._wrap(i.astype(np.int64)) for i in np.nonzero(condition._data))
    a = input if isinstance(input, Tensor) else None
    b = other if isinstance(other, Tensor) else None
    ref = a if a is not None else b
    if a is None:
        a = _literal(input, D.result_type(ref, input))
    if b is None:
        b = _literal(other, D.result_type(ref, other))
    dt = D.result_type(a, b)
    return apply(OPS["where"], (a, b), [a._data.astype(dt.np, copy=False), b._data.astype(dt.np, copy=False)],
                 cond=np.asarray(condition._data if isinstance(condition, Tensor) else condition, np.bool_))


# --- making tensors -----------------------------------------------------------------------------

def _finish(t, requires_grad, factory=True):
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return t


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data`` (numbers, nested lists, arrays or tensors).

    >>> tensor([1, 2]), tensor([1., 2.]), tensor(True)
    (tensor([1, 2]), tensor([1., 2.]), tensor(True))
    """
    _check_device(device)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).", UserWarning, 2)
    return _finish(Tensor._wrap(np.array(as_array(data, dtype), copy=True)), requires_grad)


def _check_device(device):
    if device is not None and str(device).split(":")[0] not in ("cpu",):
        raise AssertionError("Torch not compiled with CUDA enabled")


def _filled(shape, value, dtype, requires_grad):
    if dtype is None:
        dtype = D.bool if isinstance(value, (builtins.bool, np.bool_)) else \
            D.int64 if isinstance(value, (builtins.int, np.integer)) else D.get_default_dtype()
    dtype = D.as_dtype(dtype)
    return _finish(Tensor._wrap(np.full(shape, value, dtype=dtype.np)), requires_grad)


_LEGACY = {}


def _legacy_new(dtype, *args, **kwargs):
    """``Tensor(2, 3)`` (a new 2x3 tensor) or ``Tensor([[0, 1], [1, 0]])`` (from data)."""
    if kwargs.get("device") not in (None, "cpu"):
        _check_device(kwargs["device"])
    if not args:
        return Tensor._wrap(np.zeros((0,), dtype.np))
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray, Tensor)) and not isinstance(args[0], Size):
        data = args[0]
        if isinstance(data, Tensor):
            if data.dtype is not dtype:
                raise TypeError(f"expected {_options(dtype)} (got {_options(data.dtype)})")
            return data.detach()
        return Tensor._wrap(np.array(as_array(data), dtype=dtype.np))
    if len(args) == 1 and isinstance(args[0], str):
        raise TypeError("new(): invalid data type 'str'")
    if len(args) == 1 and not _is_int(args[0]):
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    if not _is_int(args[0]):
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)}), but expected one of:")
    return Tensor._wrap(np.zeros(_new_shape(args, "new"), dtype.np))


def _options(dtype):
    """How PyTorch's C++ prints a legacy constructor's expected type (c10::TensorOptions)."""
    return (f"TensorOptions(dtype={D.CPP_NAMES[dtype.name]}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


class _LegacyMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __call__(cls, *args, **kwargs):
        return _legacy_new(cls.dtype, *args, **kwargs)

    def __repr__(cls):
        return f"<class 'gradviz.{cls.__name__}'>"


def _legacy_class(name, dtype):
    return _LegacyMeta(name, (), {"dtype": dtype})


FloatTensor = _legacy_class("FloatTensor", D.float32)
DoubleTensor = _legacy_class("DoubleTensor", D.float64)
LongTensor = _legacy_class("LongTensor", D.int64)
IntTensor = _legacy_class("IntTensor", D.int32)
BoolTensor = _legacy_class("BoolTensor", D.bool)
def _make_inplace(name):
    def method(self, *args, **kwargs):
        return _inplace(self, lambda t, *a: getattr(t, name)(*a, **kwargs), *args)
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"``t.{name}_(...)``: ``t.{name}(...)`` written into t's own storage."
    return method


def _table_method(op):
    """The method of an op that has nothing to parse: ``x.exp()``, ``x.maximum(y)``, ``x.round(decimals=1)``."""
    key = op.key
    if len(op.vjps) == 2:
        def method(self, other):
            return _binary(key, self, other)
    elif op.integers == "float":     # integer tensors are computed in the default float dtype
        def method(self):
            return apply(OPS[key], (self,), _floating(self))
    elif op.integers == "same":
        def method(self):
            return apply(OPS[key], (self,))
    else:                            # "copy": integers are already whole, and come back as a copy
        def method(self, **params):
            return apply(OPS[key], (self,), **params) if self.dtype.is_floating_point else self.clone()
    method.__name__ = method.__qualname__ = op.method
    method.__doc__ = op.doc
    return method


def _install_table_methods():
    """Every way the op table says an op is reached: the method (unless written by hand in the
    class above), its aliases, and the in-place twins (the method written back into self)."""
    for op in OPS.values():
        if op.method is None:
            continue
        if not hasattr(Tensor, op.method):
            setattr(Tensor, op.method, _table_method(op))
        for alias in op.aliases:
            if not hasattr(Tensor, alias):
                setattr(Tensor, alias, getattr(Tensor, op.method))
        for name in (op.method, *op.aliases) if op.inplace else ():
            if not hasattr(Tensor, name + "_"):
                setattr(Tensor, name + "_", _make_inplace(name))
    for name in _COMPOSITE_INPLACE:
        setattr(Tensor, name + "_", _make_inplace(name))


# In-place twins of methods that are not table entries (composites, rounded divisions)
_COMPOSITE_INPLACE = ("square", "clamp_min", "clamp_max", "remainder", "fmod", "floor_divide")
_install_table_methods()


def _with_keepdims(method):
    @functools.wraps(method)
    def accepting_keepdims(*args, **kwargs):
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return method(*args, **kwargs)
    return accepting_keepdims


def _accept_keepdims():
    """PyTorch's argument parser takes numpy's spelling ``keepdims=`` for ``keepdim=`` wherever a
    function has one (``x.sum(1, keepdims=True)``), but not in ``norm``, which is written in Python."""
    for name, method in list(vars(Tensor).items()):
        if name != "norm" and inspect.isfunction(method) and "keepdim" in inspect.signature(method).parameters:
            setattr(Tensor, name, _with_keepdims(method))


_accept_keepdims()

ByteTensor = _legacy_class("ByteTensor", D.uint8)
CharTensor = _legacy_class("CharTensor", D.int8)
ShortTensor = _legacy_class("ShortTensor", D.int16)

