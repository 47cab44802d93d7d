"""Double backward: the op table's numpy gradient rules, run on tensors so that what they compute is recorded.

A rule is written once, for numpy arrays (``lambda g, y, a, b: g * b``).  Under
``create_graph=True`` the engine hands it :class:`Recorded` values instead of arrays: they answer
what a rule reads of an array (``shape``, ``dtype``, ``.T``, ``+ - * / **``, ``np.where``,
``np.exp``, ``np.broadcast_to``...), and each of those is an op of the same table run through the
engine's ``apply`` -- so the gradient comes out with a ``grad_fn`` and can be differentiated again,
by the same rules.  The values are the plain pass's where a rule calls the table's own functions
(``_exp``, ``call("mm", ...)``); a bare numpy function becomes the table's op of that name (its
forward is PyTorch's kernel, which numpy's float32 ``np.exp`` is not -- so rules use ``_exp``).

What the mapping does not know (numpy writing into an array, ``np.add.at``, a value read as a
number) raises :class:`NotRecordable`; the engine reports it as an op gradviz cannot
differentiate twice yet -- never a silent number without a graph.
"""

import numpy as np

from ._op import OPS

__all__ = ["Recorded", "NotRecordable"]


class NotRecordable(Exception):
    """A rule did something with a recorded value that gradviz cannot record as an op."""


# ... and those that only read values (masks): their results carry no gradient
_MASKS = {np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal, np.isnan, np.isinf,
          np.isfinite, np.logical_and, np.logical_or, np.logical_not, np.logical_xor, np.signbit}


def _entry_computing(ufunc):
    """The op-table entry whose ``numpy`` function ``ufunc`` is (np.exp: "exp"), or None."""
    global _BY_NUMPY
    if _BY_NUMPY is None:      # (built at first use: the table is complete by then)
        _BY_NUMPY = {op.numpy: key for key, op in OPS.items() if op.numpy is not None}
    return _BY_NUMPY.get(ufunc)


_BY_NUMPY = None


def _is_number(c):
    """A constant PyTorch's formulas would pass as a C++ Scalar: a Python number or a 0-d array."""
    return isinstance(c, (int, float, np.generic)) or (isinstance(c, np.ndarray) and c.ndim == 0)


class Recorded:
    """A tensor seen by a gradient rule as the numpy array it expects; what the rule does with it is recorded."""

    __slots__ = ("tensor", "_apply")

    def __init__(self, tensor, apply):
        # the engine hands over its ``apply`` (this module sits below the engine and never imports it)
        self.tensor, self._apply = tensor, apply

    # -- what a rule reads of an array ------------------------------------------------------------

    shape = property(lambda self: self.tensor._data.shape)
    dtype = property(lambda self: self.tensor._data.dtype)
    ndim = property(lambda self: self.tensor._data.ndim)
    size = property(lambda self: self.tensor._data.size)
    strides = property(lambda self: self.tensor._data.strides)   # mm's rule asks for the layout

    def __len__(self):
        return len(self.tensor._data)

    def __array__(self, *args, **kwargs):
        raise NotRecordable("the rule reads the values as a numpy array")

    def __bool__(self):
        raise NotRecordable("the rule branches on the values")

    # -- making ops -------------------------------------------------------------------------------

    def _lift(self, tensor):
        return Recorded(tensor, self._apply)

    def _constant(self, value, dtype):
        """A value the rule computed without the graph (a number, a mask, zeros): a tensor that needs no grad."""
        return self.tensor._wrap(np.asarray(value, dtype))

    def _tensors(self, args, dtype):
        """The tensors for ``args`` in ``dtype``: recorded values (converted, recorded, if need be) and constants."""
        out = []
        for a in args:
            if isinstance(a, Recorded):
                out.append(a.tensor if a.dtype == dtype else self._apply(OPS["to"], (a.tensor,), dtype=np.dtype(dtype)))
            else:
                out.append(self._constant(a, dtype))
        return out

    def op(self, key, *args, **params):
        """Op ``key`` of the table on ``args`` (recorded values or constants, one dtype as numpy would
        promote them): its forward, recorded by the engine."""
        dtype = np.result_type(*[a.dtype if isinstance(a, Recorded) else a for a in args])
        return self._lift(self._apply(OPS[key], self._tensors(args, dtype), **params))

    def record_op(self, key, args, params):
        """:func:`gradviz._op.call` on recorded values: the op, recorded."""
        return self.op(key, *args, **params)

    # -- numpy's functions ------------------------------------------------------------------------

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            raise NotRecordable(f"numpy's {ufunc.__name__}.{method}")
        if ufunc in _MASKS:
            return ufunc(*[a.tensor._data if isinstance(a, Recorded) else a for a in inputs])
        key = _entry_computing(ufunc)
        if key is not None:
            return self.op(key, *inputs)
        a, b = inputs if len(inputs) == 2 else (None, None)
        if ufunc is np.multiply:   # times a number: PyTorch's formulas multiply by a Scalar (MulBackward1)
            if _is_number(a) or _is_number(b):
                x, c = (b, a) if _is_number(a) else (a, b)
                return self._scaled("mul_scalar", x, c)
            return self.op("mul", a, b)
        if ufunc is np.true_divide:
            return self._scaled("div_scalar", a, b) if _is_number(b) else self.op("div", a, b)
        if ufunc is np.add:        # plus a number: add.Scalar (AddBackward1)
            if _is_number(a) or _is_number(b):
                x, c = (b, a) if _is_number(a) else (a, b)
                return self._scaled("add_scalar", x, c)
            return self.op("add", a, b)
        if ufunc is np.subtract:   # a number minus a tensor: rsub, as ``1 - t`` records in PyTorch
            if _is_number(a):
                return self._scaled("rsub", b, a)
            return self._scaled("sub_scalar", a, b) if _is_number(b) else self.op("sub", a, b)
        if ufunc is np.power:
            if _is_number(b):
                return self._scaled("pow", a, b, name="n")
            return self._scaled("rpow", b, a) if _is_number(a) else self.op("pow_tt", a, b)
        if ufunc in (np.maximum, np.minimum):
            return self.op(ufunc.__name__, a, b)
        if ufunc is np.floor_divide:   # a rounded quotient: its gradient is 0
            return self.op("div_rounding", a, b, rounding_mode="floor")
        raise NotRecordable(f"numpy's {ufunc.__name__}")

    def _scaled(self, key, x, c, name="c"):
        """An op of one tensor and a number (the number a parameter, in the dtype numpy gives the pair)."""
        dtype = np.result_type(x.dtype, c)
        t, = self._tensors([x], dtype)
        c = c.item() if isinstance(c, (np.ndarray, np.generic)) else c
        return self._lift(self._apply(OPS[key], (t,), **{name: c}))

    def __array_function__(self, func, types, args, kwargs):
        handler = _FUNCTIONS.get(func)
        if handler is None:
            raise NotRecordable(f"numpy's {func.__name__}")
        return handler(*args, **kwargs)

    # -- the array methods and operators rules use --------------------------------------------

    def astype(self, dtype, copy=True):
        return self if np.dtype(dtype) == self.dtype else self._lift(
            self._apply(OPS["to"], (self.tensor,), dtype=np.dtype(dtype)))

    def copy(self):
        return self          # a recorded value is never written into: no copy needed

    def reshape(self, *shape):
        return _reshape(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)

    def sum(self, axis=None, dtype=None, keepdims=False):
        return _sum(self, axis, dtype=dtype, keepdims=keepdims)

    @property
    def T(self):
        return self._lift(self._apply(OPS["t"], (self.tensor,), d0=0, d1=1)) if self.ndim == 2 else self

    __add__ = __radd__ = lambda self, other: np.add(self, other)
    __sub__ = lambda self, other: np.subtract(self, other)
    __rsub__ = lambda self, other: np.subtract(other, self)
    __mul__ = __rmul__ = lambda self, other: np.multiply(self, other)
    __truediv__ = lambda self, other: np.true_divide(self, other)
    __rtruediv__ = lambda self, other: np.true_divide(other, self)
    __pow__ = lambda self, other: np.power(self, other)
    __rpow__ = lambda self, other: np.power(other, self)
    __neg__ = lambda self: np.negative(self)
    __gt__ = lambda self, other: np.greater(self, other)
    __ge__ = lambda self, other: np.greater_equal(self, other)
    __lt__ = lambda self, other: np.less(self, other)
    __le__ = lambda self, other: np.less_equal(self, other)
    __eq__ = lambda self, other: np.equal(self, other)
    __ne__ = lambda self, other: np.not_equal(self, other)
    __hash__ = object.__hash__

    def __getitem__(self, key):
        raise NotRecordable("indexing")

    def __repr__(self):
        return f"Recorded({self.tensor!r})"


# --- numpy functions as ops ---------------------------------------------------------------------

def _recorded(*values):
    return next(v for v in values if isinstance(v, Recorded))


def _where(cond, x, y):
    if isinstance(cond, Recorded):
        raise NotRecordable("np.where on a recorded condition")
    return _recorded(x, y).op("where", x, y, cond=np.asarray(cond))


def _broadcast_to(x, shape, subok=False):
    return x if tuple(shape) == x.shape else x._lift(x._apply(OPS["expand"], (x.tensor,), shape=tuple(shape)))


def _reshape(x, shape=None, order="C", **kwargs):
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if shape == x.shape:
        return x
    return x._lift(x._apply(OPS["view"], (x.tensor,), shape=shape))


def _expand_dims(x, axis):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = x.ndim + len(axes)
    for d in sorted(a % ndim for a in axes):
        x = x._lift(x._apply(OPS["unsqueeze"], (x.tensor,), dim=d))
    return x


def _squeeze(x, axis=None):
    if axis is None or isinstance(axis, (tuple, list)):
        return _reshape(x, tuple(n for d, n in enumerate(x.shape) if n != 1 or (axis is not None and d not in axis)))
    return x._lift(x._apply(OPS["squeeze_dim"], (x.tensor,), dim=axis % x.ndim))


def _swapaxes(x, axis1, axis2):
    return x._lift(x._apply(OPS["transpose"], (x.tensor,), d0=axis1, d1=axis2))


def _transpose(x, axes=None):
    axes = tuple(range(x.ndim))[::-1] if axes is None else tuple(int(a) for a in axes)
    return x._lift(x._apply(OPS["permute"], (x.tensor,), dims=axes))


def _sum(x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    if dtype is not None and np.dtype(dtype) != x.dtype or out is not None:
        raise NotRecordable("np.sum into another dtype")
    if axis is None and not keepdims:
        return x._lift(x._apply(OPS["sum"], (x.tensor,)))
    dims = tuple(range(x.ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
    return x._lift(x._apply(OPS["sum_dim"], (x.tensor,), dim=tuple(d % max(x.ndim, 1) for d in dims),
                            keepdim=keepdims))


def _filled(fill):
    def like(x, dtype=None, **kwargs):   # a constant: zeros_like needs no gradient, as in PyTorch
        return x._lift(x._constant(fill(x.shape, dtype or x.dtype), dtype or x.dtype))
    return like


def _joined(key):
    def join(xs, axis=0, **kwargs):
        xs = list(xs)
        first = _recorded(*xs)
        dtype = np.result_type(*[v.dtype for v in xs])
        return first._lift(first._apply(OPS[key], first._tensors(xs, dtype), dim=axis))
    return join


def _take(x, indices, axis=None, **kwargs):
    if axis is None:
        raise NotRecordable("np.take without an axis")
    if isinstance(indices, (int, np.integer)):
        return x._lift(x._apply(OPS["select"], (x.tensor,), dim=axis % x.ndim, index=int(indices)))
    return x._lift(x._apply(OPS["index_select"], (x.tensor,), dim=axis % x.ndim, index=np.asarray(indices)))


def _outer(a, b, out=None):
    """PyTorch's ``outer``: the first vector as a column (a view), times the second."""
    if not isinstance(a, Recorded):
        return np.multiply(np.reshape(np.asarray(a), (-1, 1)), b)
    return np.multiply(_reshape(a, (a.size, 1)), b)


_FUNCTIONS = {
    np.where: _where, np.broadcast_to: _broadcast_to, np.reshape: _reshape, np.expand_dims: _expand_dims,
    np.swapaxes: _swapaxes, np.transpose: _transpose, np.sum: _sum, np.squeeze: _squeeze,
    np.zeros_like: _filled(np.zeros), np.ones_like: _filled(np.ones),
    np.concatenate: _joined("cat"), np.stack: _joined("stack"), np.take: _take, np.outer: _outer,
    np.flip: lambda x, axis=None: x._lift(x._apply(OPS["flip"], (x.tensor,),
                                                   dims=(axis,) if isinstance(axis, int) else tuple(axis))),
    np.tril: lambda x, k=0: x._lift(x._apply(OPS["tril"], (x.tensor,), diagonal=k)),
    np.triu: lambda x, k=0: x._lift(x._apply(OPS["triu"], (x.tensor,), diagonal=k)),
    np.diagonal: lambda x, offset=0, **kw: x._lift(x._apply(OPS["diagonal"], (x.tensor,), offset=offset)),
    np.ndim: lambda x: x.ndim, np.shape: lambda x: x.shape,
}
