"""Tensor: a numpy array plus what autograd needs (requires_grad, grad, grad_fn).

Every differentiable operation goes through :func:`gradviz.autograd.engine.apply`, which runs the op's
forward from the table in :mod:`gradviz.ops` and, when a gradient will be needed, records a
``grad_fn`` node.  Composite operations are one-liners over the primitives.  The methods that
only name an op (``x.exp()``, ``x.atan_()``) are made from the table at the end of this module;
indexing, in-place writes and the reading of arguments have modules of their own.
"""

import builtins
import math
import numbers
import warnings
import weakref

import numpy as np

from . import _dtype
from . import _blend, _hooks, _linalg_norms, _linalg_systems, _matmul_and_joins, _reduction_methods, _sampling
from ._arg_errors import MISSING, install_refusals, refuse, tensor_arg
from ._arrays import as_array
from ._composites import install_composites
from ._deepcopy import deepcopy_leaf
from .autograd import _backward_grad, engine, views
from .autograd.engine import apply
from .autograd.node import shown
from ._format import tensor_repr
from ._matmul_and_joins import bmm, matmul, where
from ._indexing import getitem, setitem
from ._inplace import _inplace, _restride, arithmetic, copy, fill, zero
from ._keywords import install_numpy_names
from ._operands import (_EVERY_DIM, _binary, _broadcast_error, _check_alpha, _check_sub, _dims, _expanded, _finish,
                        _floating, _inferred, _is_operand, _legacy_new, _number, _permutation,
                        _rounded_division, _repeats, _shape_args, _squeezed_dims, _unflattened, _viewable)
from ._rules import _sorted
from ._table_methods import install_table_methods
from ._types import Size, TensorBase, check_device, device, return_types, strided, wrapped
from .ops import OPS

__all__ = ["Tensor", "Size", "apply", "as_array", "return_types"]

_seq = engine._seq


class Tensor(TensorBase):
    """An n-dimensional array that can record the operations applied to it.

    >>> import gradviz
    >>> x = gradviz.ones(2, requires_grad=True)
    >>> y = (3 * x).sum(); y.backward(); x.grad
    tensor([3., 3.])
    """

    __module__ = "gradviz"      # type(t) prints <class 'gradviz.Tensor'>, as torch.Tensor does
    __slots__ = ("_data", "_requires_grad", "_grad_fn", "_grad", "_vbox", "_acc", "_retains_grad",
                 "_hooks", "_seq", "_literal", "_base", "_view", "__dict__", "__weakref__")
    __array_priority__ = 1000   # numpy defers to Tensor's reflected operators

    def __new__(cls, *args, **kwargs):
        return _legacy_new(Tensor, _dtype.get_default_dtype(), *args, **kwargs)

    @classmethod
    def _wrap(cls, array):
        """A new leaf around ``array`` (no copy)."""
        t = object.__new__(Tensor)   # (three stores a line: CPython packs a tuple for four or more)
        t._data, t._requires_grad, t._grad_fn = array, False, None
        t._grad, t._vbox, t._acc = None, [0], None
        t._retains_grad, t._hooks, t._seq = False, None, next(_seq)    # (hooks: a dict once one is added)
        t._literal, t._base, t._view = False, None, None
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
                    f"attempting to assign a gradient with dtype '{_dtype.CPP_NAMES[value.dtype.name]}' to a tensor "
                    f"with grad_dtype '{_dtype.TYPE_NAMES[self.dtype.name]}'. The gradient must match the tensor's "
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
        fn = engine.current_grad_fn(self)
        return fn if fn is None else shown(fn)

    @property
    def requires_grad(self):
        return views.requires_grad(self)

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
        return engine.current_grad_fn(self) is None

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
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new grad.

        As in PyTorch, a non-leaf's hook belongs to its grad_fn of the moment: after an in-place
        op (``t.cos_()``) the hooks registered before see the gradient of t's old value."""
        if not views.requires_grad(self):
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = engine.current_grad_fn(self)
        if fn is None:
            if self._hooks is None:
                self._hooks = {}
            return _hooks.add_hook(self._hooks, hook)
        return _hooks.add_hook(fn._hooks_made().for_output(self.__dict__.get("_output_nr", 0)), hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` after backward has added into this leaf's ``.grad`` (an optimizer
        can step there, one parameter at a time)."""
        if not views.requires_grad(self):
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if engine.current_grad_fn(self) is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        return _hooks.add_hook(self.__dict__.setdefault("_post_accumulate_hooks", {}), hook)

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
        return _dtype._BY_NP[self._data.dtype]

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

    itemsize = property(element_size)                                  # bytes per element, and in all
    nbytes = property(lambda self: self._data.size * self._data.itemsize)

    def type(self, dtype=None):
        """``'gradviz.FloatTensor'``, or a converted tensor: ``type(gradviz.DoubleTensor)``."""
        if dtype is None:
            return "gradviz." + self.dtype.legacy
        if isinstance(dtype, str):  # 'torch.DoubleTensor' as well as 'gradviz.DoubleTensor'
            legacy = {d.legacy: d for d in _dtype._ALL}
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

    __deepcopy__ = deepcopy_leaf

    def contiguous(self):
        """Self if its elements lie in row-major order, else a copy that does (CloneBackward0)."""
        return self if self._data.flags.c_contiguous else self.clone("contiguous_format")

    def is_contiguous(self):
        return self._data.flags.c_contiguous

    def to(self, *args, **kwargs):
        dtype = kwargs.get("dtype")
        check_device(kwargs.get("device"))
        for a in args:
            if isinstance(a, _dtype.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, (str, device)):
                check_device(a)
        if dtype is None or dtype is self.dtype:
            return self
        return apply(OPS["to"], (self,), dtype=dtype.np)

    # x.float(), x.long()...: each .to(dtype), set by install_composites (gradviz/_composites.py)

    def cpu(self):
        return self

    def cuda(self, device=None):
        check_device("cuda")

    # -- backward --------------------------------------------------------------------------------

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute d(self)/d(leaf) for every leaf in the graph and add it into ``leaf.grad``.

        ``gradient`` is dL/d(self); it may be omitted only when self has one element.
        Saved values are freed afterwards unless ``retain_graph=True`` (or ``create_graph=True``,
        which also records the gradients themselves: ``x.grad`` gets a grad_fn).
        """
        _backward_grad.backward(self, gradient, retain_graph, create_graph, inputs)

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
        dt = _dtype.result_type(self, other)
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
        return Tensor.__mul__(self.reciprocal(), other)   # (NotImplemented for 'a' / x, as in PyTorch)

    def __floordiv__(self, other):
        return _rounded_division(self, other, "floor_divide")

    def __rfloordiv__(self, other):
        return _rounded_division(self, other, "floor_divide", reverse=True)

    def __mod__(self, other):
        return _rounded_division(self, other, "remainder")

    def __rmod__(self, other):
        return _rounded_division(self, other, "remainder", reverse=True)

    def remainder(self, other=MISSING):
        r = _rounded_division(self, other, "remainder")
        return r if r is not NotImplemented else refuse("remainder", other)

    def fmod(self, other=MISSING):
        """The remainder with the sign of self (C's fmod), where ``%`` takes the divisor's sign."""
        r = _rounded_division(self, other, "fmod")
        return r if r is not NotImplemented else refuse("fmod", other)

    def __pow__(self, exponent):
        if (type(exponent) is builtins.int or type(exponent) is builtins.float) and self._data.dtype.kind == "f":
            return apply(OPS["pow"], (self,), n=exponent)   # (the usual x ** 2: the tensor's own dtype)
        if isinstance(exponent, Tensor):
            return _binary("pow_tt", self, exponent)
        if not _is_operand(exponent):
            return NotImplemented
        dt = _dtype.with_scalar(self.dtype, exponent)   # int ** 0.5 is float32, bool ** 2 is int64
        if not dt.is_floating_point and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return apply(OPS["pow"], (self,), None if dt is self.dtype else [self._data.astype(dt.np)], n=exponent)

    def __rpow__(self, base):
        if isinstance(base, (builtins.int, np.integer)) and not isinstance(base, builtins.bool) \
                and not self.dtype.is_floating_point:
            return apply(OPS["rpow"], (self,), c=base)   # 2 ** int tensor stays an integer tensor
        return apply(OPS["rpow"], (self,), _floating(self), c=base)

    def __neg__(self):
        if self.dtype is _dtype.bool:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                               "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
        return apply(OPS["neg"], (self,))

    def __pos__(self):
        return self

    def __abs__(self):
        return self.abs()

    def __matmul__(self, other):     # (a @ b is matmul(a, b): PyTorch's dispatch to dot, mv, mm or bmm)
        return matmul(self, other) if isinstance(other, Tensor) else NotImplemented

    def __rmatmul__(self, other):
        return NotImplemented   # defined so that numpy defers: [1, 2] @ t and array @ t are TypeErrors

    def add(self, other=MISSING, alpha=1):
        """self + alpha * other, one AddBackward0 node as in PyTorch."""
        _check_alpha(self, alpha)
        r = _binary("add", self, other) if alpha == 1 else _binary("add", self, other, alpha=alpha)
        return r if r is not NotImplemented else refuse("add", other, **({} if alpha == 1 else {"alpha": alpha}))

    def sub(self, other=MISSING, alpha=1):
        _check_sub(self, other)
        _check_alpha(self, alpha)
        r = _binary("sub", self, other) if alpha == 1 else _binary("sub", self, other, alpha=alpha)
        return r if r is not NotImplemented else refuse("sub", other, **({} if alpha == 1 else {"alpha": alpha}))

    def mul(self, other=MISSING):
        r = _binary("mul", self, other)
        return r if r is not NotImplemented else refuse("mul", other)

    def div(self, other=MISSING, rounding_mode=None):
        if rounding_mode is None:
            r = _binary("div", self, other, float_result=True)
        else:
            r = _rounded_division(self, other, rounding_mode)
        if r is NotImplemented:
            refuse("div", other, **({} if rounding_mode is None else {"rounding_mode": rounding_mode}))
        return r

    def floor_divide(self, other=MISSING):
        r = _rounded_division(self, other, "floor_divide")
        return r if r is not NotImplemented else refuse("floor_divide", other)

    def pow(self, exponent=MISSING):
        r = self.__pow__(exponent)
        return r if r is not NotImplemented else refuse("pow", exponent)

    def neg(self):
        return -self

    def square(self):
        return self ** 2

    clamp, clamp_min, clamp_max = _blend.clamp, _blend.clamp_min, _blend.clamp_max

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """The vector p-norm (2 unless told): one LinalgVectorNormBackward0 node, as ``torch.norm``."""
        return _linalg_norms.torch_norm(self, p, dim, keepdim, dtype)

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

    def __and__(self, other):
        return self._compare(other, np.logical_and if self.dtype is _dtype.bool else np.bitwise_and)

    def __or__(self, other):
        return self._compare(other, np.logical_or if self.dtype is _dtype.bool else np.bitwise_or)

    def __xor__(self, other):
        return self._compare(other, np.logical_xor if self.dtype is _dtype.bool else np.bitwise_xor)

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
        return _reduction_methods.position(self, "max", dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return _reduction_methods.position(self, "min", dim, keepdim)

    # -- reductions ------------------------------------------------------------------------------

    def sum(self, dim=_EVERY_DIM, keepdim=False, dtype=None):
        """The sum of all elements (SumBackward0), or along ``dim`` (SumBackward1; ``dim=None`` is every dim)."""
        return _reduction_methods.sum_(self, dim, keepdim, dtype)

    def mean(self, dim=_EVERY_DIM, keepdim=False, dtype=None):
        return _reduction_methods.mean(self, dim, keepdim, dtype)

    def logsumexp(self, dim, keepdim=False):
        return apply(OPS["logsumexp"], (self,), _floating(self), dim=_dims(dim, self.ndim), keepdim=keepdim)

    def cumsum(self, dim, dtype=None):
        t = _reduction_methods._accumulated(self, dtype)
        return apply(OPS["cumsum"], (t,), dim=_dims(dim, t.ndim)[0])

    def cumprod(self, dim, dtype=None):
        t = _reduction_methods._accumulated(self, dtype)
        return apply(OPS["cumprod"], (t,), dim=_dims(dim, t.ndim)[0])

    def masked_fill(self, mask=MISSING, value=MISSING):
        """A copy with ``value`` wherever ``mask`` is True."""
        if not isinstance(mask, Tensor) or not isinstance(value, (Tensor, numbers.Number)):
            refuse("masked_fill", mask, value)
        return apply(OPS["masked_fill"], (self,), mask=np.asarray(as_array(mask), bool), value=_number(value))

    def masked_select(self, mask):
        """The elements where ``mask`` (broadcast with self) is True, as one row."""
        return apply(OPS["masked_select"], (self,), mask=np.asarray(as_array(mask), bool))

    def where(self, condition=MISSING, other=MISSING):
        """``x.where(c, y)``: x where c is true, y elsewhere (``gradviz.where(c, x, y)``)."""
        if not isinstance(condition, Tensor) or not isinstance(other, (Tensor, numbers.Number)):
            refuse("where", condition, other)
        return where(condition, self, other)

    def masked_fill_(self, mask=MISSING, value=MISSING):
        if not isinstance(mask, Tensor) or not isinstance(value, (Tensor, numbers.Number)):
            refuse("masked_fill_", mask, value)
        return _inplace(self, Tensor.masked_fill, mask, value)

    def flip(self, *dims, **kwargs):
        """The elements in reverse order along ``dims`` (``x.flip(0)``, ``x.flip(dims=[0, 1])``)."""
        if kwargs:
            if list(kwargs) != ["dims"] or dims:
                raise TypeError(f"flip() got an unexpected keyword argument '{next(k for k in kwargs if k != 'dims')}'"
                                if set(kwargs) - {"dims"} else "flip() got multiple values for argument 'dims'")
            dims = (kwargs["dims"],)
        return apply(OPS["flip"], (self,), dims=_dims(_shape_args(dims, "flip"), self.ndim))

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
        d = _dims(dim, self.ndim)[0]
        values = apply(OPS["sort"], (self,), dim=d, descending=descending)
        _, idx = _sorted(self._data, d, descending) if self.ndim else (None, np.asarray(0))
        return return_types.sort(values, Tensor._wrap(idx.astype(np.int64)))

    topk = _reduction_methods.topk

    def argsort(self, dim=-1, descending=False):
        return self.sort(dim, descending).indices

    def select(self, dim, index):
        """The slice at ``index`` along ``dim``, that dimension removed (what ``x[i]`` does for dim 0)."""
        if self.ndim == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        d = _dims(dim, self.ndim)[0]
        n = self.shape[d]
        if not -n <= index < n:
            raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} "
                             f"at dimension {d}")
        return apply(OPS["select"], (self,), dim=d, index=wrapped(index, n))

    def split(self, split_size_or_sections, dim=0):
        """Pieces along ``dim``: of ``split_size`` each (the last may be shorter), or of the sizes listed."""
        return _matmul_and_joins.split(self, split_size_or_sections, dim)

    def chunk(self, chunks, dim=0):
        """At most ``chunks`` pieces of equal size along ``dim`` (the last may be shorter)."""
        return _matmul_and_joins.chunk(self, chunks, dim)

    def unbind(self, dim=0):
        """Every slice along ``dim``, that dimension removed: ``x.unbind(0)`` is ``(x[0], x[1], ...)``."""
        return _matmul_and_joins.unbind(self, dim)

    as_strided = _matmul_and_joins.as_strided

    def as_strided_(self, size, stride, storage_offset=None):
        return _restride(self, "as_strided_", **_matmul_and_joins.strided_params(self, size, stride, storage_offset))

    def narrow(self, dim, start, length):
        if self.ndim == 0:
            raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
        d = _dims(dim, self.ndim)[0]
        start = start + self.shape[d] if start < 0 else start
        if start + length > self.shape[d]:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({self.shape[d]}).")
        return apply(OPS["slice"], (self,), dim=d, s=slice(start, start + length, 1))

    def type_as(self, other=MISSING):
        return self.to(tensor_arg("type_as", other).dtype)

    def bmm(self, other=MISSING):
        isinstance(other, Tensor) or refuse("bmm", other)
        return bmm(self, other)

    def isnan(self):
        return Tensor._wrap(np.isnan(self._data))

    def isinf(self):
        return Tensor._wrap(np.isinf(self._data))

    def isfinite(self):
        return Tensor._wrap(np.isfinite(self._data))

    def logical_not(self):
        return Tensor._wrap(np.logical_not(self._data))


    def nonzero(self, as_tuple=False):
        idx = np.nonzero(self._data)
        if as_tuple:
            return tuple(Tensor._wrap(i.astype(np.int64)) for i in idx)
        return Tensor._wrap(np.stack(idx, axis=1).astype(np.int64) if idx else np.zeros((0, 0), np.int64))

    def prod(self, dim=None, keepdim=False, dtype=None):
        """The product of the elements (along ``dim``)."""
        return _reduction_methods.prod(self, dim, keepdim, dtype)

    def softmax(self, dim, dtype=None):
        """e^x / Σ e^x along ``dim``: one SoftmaxBackward0 node, as in PyTorch."""
        t = self.to(dtype) if dtype is not None else self
        return apply(OPS["softmax"], (t,), _floating(t), dim=_dims(dim, t.ndim)[0])

    def log_softmax(self, dim, dtype=None):
        t = self.to(dtype) if dtype is not None else self
        return apply(OPS["log_softmax"], (t,), _floating(t), dim=_dims(dim, t.ndim)[0])

    def repeat(self, *sizes):
        """Tile the tensor: ``repeat(2, 1)`` stacks two copies along dim 0."""
        return apply(OPS["repeat"], (self,), sizes=_repeats(self, _shape_args(sizes, "repeat")))

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """The variance, with Bessel's correction (divide by n - 1) unless ``unbiased=False``."""
        return _reduction_methods.moment(self, "var", dim, unbiased, keepdim, correction)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """The standard deviation, with Bessel's correction unless ``unbiased=False``."""
        return _reduction_methods.moment(self, "std", dim, unbiased, keepdim, correction)

    def max(self, dim=None, keepdim=False):
        return _reduction_methods.extreme(self, "max", dim, keepdim)

    def min(self, dim=None, keepdim=False):
        return _reduction_methods.extreme(self, "min", dim, keepdim)

    def median(self, dim=None, keepdim=False):
        """The lower of the two middle values (no averaging): overall, or along ``dim`` with where it is."""
        return _reduction_methods.median(self, dim, keepdim)

    def amax(self, dim=(), keepdim=False):
        return _reduction_methods.amax(self, "max", dim, keepdim)

    def amin(self, dim=(), keepdim=False):
        return _reduction_methods.amax(self, "min", dim, keepdim)

    # -- linear algebra --------------------------------------------------------------------------

    def matmul(self, other=MISSING):
        isinstance(other, Tensor) or refuse("matmul", other)
        return matmul(self, other)

    def mm(self, other=MISSING):
        isinstance(other, Tensor) or refuse("mm", other)
        if self.ndim != 2:
            raise RuntimeError("self must be a matrix")
        if other.ndim != 2:
            raise RuntimeError("mat2 must be a matrix")
        return matmul(self, other)

    def mv(self, vec=MISSING):
        isinstance(vec, Tensor) or refuse("mv", vec)
        return matmul(self, vec)

    def det(self):
        """The determinant (``torch.linalg.det``)."""
        return _linalg_systems.det(self)

    def inverse(self):
        """The inverse matrix (``torch.linalg.inv``)."""
        return _linalg_systems.inv(self)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        """``self + mat1 @ mat2`` as one AddmmBackward0 node: what ``nn.Linear`` records."""
        return _matmul_and_joins.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addcmul(self, tensor1, tensor2, *, value=1):
        return _blend.addcmul(self, tensor1, tensor2, value=value)

    def addcdiv(self, tensor1, tensor2, *, value=1):
        return _blend.addcdiv(self, tensor1, tensor2, value=value)

    def lerp(self, end=MISSING, weight=MISSING):
        if not isinstance(end, Tensor) or not isinstance(weight, (Tensor, numbers.Number)):
            refuse("lerp", end, weight)
        return _blend.lerp(self, end, weight)

    def dot(self, other=MISSING):
        isinstance(other, Tensor) or refuse("dot", other)
        if self.ndim != 1 or other.ndim != 1:
            raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors")
        return matmul(self, other)

    # -- shapes ----------------------------------------------------------------------------------

    def view(self, *shape):
        """The same storage seen with another shape (possible only where the strides allow it)."""
        if not shape:
            raise TypeError("view() received an invalid combination of arguments - got (), but expected one of:\n"
                            " * (gradviz.dtype dtype)\n * (tuple of ints size)\n")
        shape = _inferred(_shape_args(shape, "view"), self._data.size)
        if not _viewable(self._data, shape):
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                               "least one dimension spans across two contiguous subspaces). Use "
                               ".reshape(...) instead.")
        return apply(OPS["view"], (self,), shape=shape)

    def reshape(self, *shape):
        """A view when the strides allow it, else a contiguous copy reshaped (as PyTorch records it)."""
        if not shape:
            raise TypeError('reshape() missing 1 required positional arguments: "shape"')
        shape = _inferred(_shape_args(shape, "reshape"), self._data.size)
        if self._data.flags.c_contiguous:
            return apply(OPS["view"], (self,), shape=shape)
        if _viewable(self._data, shape):
            return apply(OPS["reshape_alias"], (self,), shape=shape)
        return apply(OPS["reshape_copy"], (self.clone("contiguous_format"),), shape=shape)

    def view_as(self, other=MISSING):
        return self.view(tensor_arg("view_as", other).shape)

    def reshape_as(self, other=MISSING):
        return self.reshape(tensor_arg("reshape_as", other).shape)

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        s, e = _dims((start_dim, end_dim), self.ndim)
        shape = self.shape[:s] + (math.prod(self.shape[s:e + 1]),) + self.shape[e + 1:]
        return self if shape == self.shape else self.reshape(shape)

    def unflatten(self, dim, sizes):
        """Dim ``dim`` split into ``sizes`` (``flatten``'s inverse): always a view (ViewBackward0)."""
        return apply(OPS["view"], (self,), shape=_unflattened(self, dim, sizes))

    def expand(self, *shape):
        return apply(OPS["expand"], (self,), shape=_expanded(self, _shape_args(shape, "expand")))

    def expand_as(self, other=MISSING):
        return self.expand(tensor_arg("expand_as", other).shape)

    def permute(self, *dims):
        if not dims:
            raise TypeError('permute() missing 1 required positional arguments: "dims"')
        return apply(OPS["permute"], (self,), dims=_permutation(self, _shape_args(dims, "permute")))

    def transpose(self, dim0, dim1):
        d0, d1 = _dims((dim0, dim1), self.ndim)
        return apply(OPS["transpose"], (self,), d0=d0, d1=d1)

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return apply(OPS["t"], (self,), d0=0, d1=self.ndim - 1 if self.ndim else 0)

    @property
    def T(self):
        return apply(OPS["permute"], (self,), dims=tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        if self.ndim == 0:       # PyTorch: the identity (deprecated) on a 0-d tensor
            return self
        if self.ndim == 1:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return self.transpose(-2, -1)

    def squeeze(self, dim=None):
        """Dims of size 1 removed: all of them, or those of ``dim`` (one, or a tuple; a dim listed of
        another size stays, as in PyTorch)."""
        if dim is None:
            return apply(OPS["squeeze"], (self,))
        return apply(OPS["squeeze_dim" if isinstance(dim, int) else "squeeze_dims"], (self,),
                     dim=_squeezed_dims(dim, self.ndim))

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
        # SqueezeBackward4 (a dim) or 5 (a tuple of them), the nodes x.squeeze_(dim) makes in PyTorch
        return _restride(self, "squeeze_mm" if isinstance(dim, int) else "squeeze_dims_", dim=_squeezed_dims(dim, self.ndim))

    # -- indexing --------------------------------------------------------------------------------

    def __getitem__(self, key):
        return getitem(self, key)

    def __setitem__(self, key, value):
        setitem(self, key, value)

    # -- in place --------------------------------------------------------------------------------

    add_, sub_, mul_, div_ = (arithmetic(key, method) for key, method in
                              (("add", add), ("sub", sub), ("mul", mul), ("div", div)))

    def pow_(self, exponent=MISSING):
        if not _is_operand(exponent):
            refuse("pow_", exponent)
        return _inplace(self, Tensor.pow, exponent)

    def clamp_(self, min=None, max=None):
        return _inplace(self, Tensor.clamp, min, max)

    def copy_(self, src):
        return copy(self, src if isinstance(src, Tensor) else Tensor._wrap(np.array(as_array(src))))

    __iadd__, __isub__, __imul__, __itruediv__ = (arithmetic(key, method, operator=True) for key, method in
                                                  (("add", add), ("sub", sub), ("mul", mul), ("div", div)))

    def zero_(self):
        """Set every element to 0 in place (``x.grad.zero_()`` between training steps)."""
        return zero(self)

    def fill_(self, value):
        return fill(self, value)

    # random fills and draws, PyTorch's numbers after manual_seed (gradviz/_sampling.py)
    multinomial, bernoulli, bernoulli_ = _sampling.multinomial, _sampling.bernoulli, _sampling.bernoulli_
    uniform_, normal_, random_ = _sampling.uniform_, _sampling.normal_, _sampling.random_

    def new_tensor(self, data, dtype=None, requires_grad=False):
        return _finish(Tensor._wrap(np.array(as_array(data, dtype or self.dtype), copy=True)), requires_grad)

    def new_full(self, size, fill_value, dtype=None, requires_grad=False):
        """A new tensor of ``size`` filled with ``fill_value``, of self's dtype unless told."""
        a = np.full(_shape_args(size), fill_value, _dtype.as_dtype(dtype or self.dtype).np)
        return _finish(Tensor._wrap(a), requires_grad)

    def new_ones(self, *size, dtype=None, requires_grad=False):
        return self.new_full(size, 1, dtype, requires_grad)

    def new_zeros(self, *size, dtype=None, requires_grad=False):
        return self.new_full(size, 0, dtype, requires_grad)

    new_empty = new_zeros

install_table_methods(Tensor)
install_composites(Tensor)
install_numpy_names(Tensor)
install_refusals(Tensor)
