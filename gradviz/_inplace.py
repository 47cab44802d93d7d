"""In-place operations: ``x.add_(y)``, ``x[0] = 1``, ``x.t_()`` -- the out-of-place op written back.

Writing into a tensor must keep autograd honest: a leaf that requires grad refuses (its gradient
would be wrong), the tensor takes over the new node's history, and its version counter goes up
so that a value saved earlier for backward is caught if it changed.
"""

import weakref

import numpy as np

from . import _dtype
from . import _strided
from .autograd.engine import apply, current_grad_fn, record_copy_slices
from .autograd.views import requires_grad, view_error
from .autograd.grad_mode import _GradMode
from ._arg_errors import MISSING, check, recheck
from ._operands import _broadcast_error, _is_operand
from ._types import TensorBase
from .ops import OPS

__all__ = []


def _check_leaf(t, recording=None):
    """PyTorch's check before a write into ``t`` that records a gradient (``recording``; by default
    when ``t`` requires grad): a leaf, a view of a leaf, and a view made in no_grad() mode or by
    split/unbind refuse, since the gradient through them would be wrong."""
    if recording is None:
        recording = _GradMode.enabled and requires_grad(t)
    if not recording:
        return
    if t._view is not None:
        if t._view[0] != "default":
            raise RuntimeError(view_error(t))
        if requires_grad(t) and t._base._grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
    if requires_grad(t) and current_grad_fn(t) is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _check_overlap(t, inputs=()):
    """An expanded tensor has elements that share memory: writing into it is refused, as in PyTorch."""
    a = t._data
    if 0 in a.strides and a.size and any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    for x in inputs:            # an input laid over part of the output: its values would change mid-write
        if isinstance(x, TensorBase) and _partial_overlap(a, x._data):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               "refer to a single memory location. Please clone() the tensor before performing the "
                               "operation.")


def _partial_overlap(a, b):
    """PyTorch's test: both dense without overlap (any order of dims), their bytes overlap, and
    they are not the very same tensor layout (x.mul_(x.t()) overlaps; x.mul_(x) does not)."""
    if not np.may_share_memory(a, b) or not (_dense(a) and _dense(b)) or a.size == 0 or b.size == 0:
        return False    # (may_share_memory: whether their bytes' bounds meet, the quick answer first)
    pa, pb = a.__array_interface__["data"][0], b.__array_interface__["data"][0]
    if pa == pb and a.nbytes == b.nbytes:
        return a.strides != b.strides
    return pa < pb + b.nbytes and pb < pa + a.nbytes


def _dense(a):
    """PyTorch's is_non_overlapping_and_dense: the elements fill a block, in some order of the dims."""
    step = a.itemsize
    for stride, n in sorted((st, n) for st, n in zip(a.strides, a.shape) if n != 1):
        if stride != step:
            return False
        step *= n
    return True


def _writable(a):
    """``a``, or for a read-only view of writable memory (numpy's expanded arrays) the same view, writable:
    PyTorch fills an expanded tensor (every element of a broadcast dim is one memory location)."""
    if a.flags.writeable:
        return a
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(a.shape, a.dtype, buffer=root, offset=offset, strides=a.strides)


def _inplace(self, fn, *args, overlap=True, internal=True):
    """``self.op_(...)``: compute ``fn(self, ...)``, then write it into self's storage.

    When the result has a grad_fn, self takes it over (PyTorch "rebases" the history); a view
    hands it to its base instead, wrapped in CopySlices, and is described anew on top of it.
    The version counter goes up, so saved copies of the old value are caught at backward.
    """
    record = _GradMode.enabled and (requires_grad(self) or any(
        isinstance(a, TensorBase) and requires_grad(a) for a in args))
    _check_leaf(self, record)
    if internal:         # (fill_ and zero_ do not check: they write one value everywhere)
        _check_overlap(self, args if overlap else ())
    src = self
    if record:  # the op may save its input: give it the old value, not the storage we overwrite
        src = self._wrap(self._data.copy())
        src._grad_fn, src._requires_grad, src._acc = current_grad_fn(self), requires_grad(self), self._acc
        src._seq = self._seq
    result = fn(src, *args)
    if result._data.dtype != self._data.dtype and result.dtype.kind > self.dtype.kind:
        raise RuntimeError(f"result type {_dtype.TYPE_NAMES[result.dtype.name]} can't be cast to the "
                           f"desired output type {_dtype.TYPE_NAMES[self.dtype.name]}")
    if result._data.shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    node = result._grad_fn
    old = self._base._data.copy() if node is not None and self._view is not None and node._saved[0] is not None \
        else None
    _writable(self._data)[...] = result._data
    self._vbox[0] += 1
    if node is not None and self._view is not None:    # rebase the base's history, then the view's
        record_copy_slices(node, self._base, old, _strided.geometry(self._data, self._base._data))
        current_grad_fn(self)
    elif node is not None:
        self._grad_fn, self._requires_grad = node, True
        node._out = weakref.ref(self)
        if node._saved and node._saved[-1] is not None:  # it saved its output: that is self now
            node._saved[-1] = (self._data, self._vbox, self._vbox[0], None)
    return self


def arithmetic(key, method, operator=False):
    """The in-place twin of binary op ``key`` (``t.add_(u, alpha=2)``, ``t -= u``, ``t.mul_(0.9)``):
    ``method`` (``Tensor.add``) written into t by :func:`_inplace`, or, where nothing is recorded and
    the op's forward ``writes_out`` (an SGD step under no_grad), that forward writing into t's
    storage itself: the same kernel, so the same bits, without a result to allocate and copy back."""
    op = OPS[key]
    assert op.writes_out, key

    if "alpha" in op.saved:
        def inplace(self, other=MISSING, alpha=1):
            done = _written(self, op, other, alpha)
            if done is None and not _is_operand(other):
                return _refused(key, other, {} if alpha == 1 else {"alpha": alpha}, operator)
            return _inplace(self, method, other, alpha) if done is None else done
    else:
        def inplace(self, other=MISSING):
            done = _written(self, op, other, 1)
            if done is None and not _is_operand(other):
                return _refused(key, other, {}, operator)
            return _inplace(self, method, other) if done is None else done
    inplace.__name__ = inplace.__qualname__ = f"__i{key if key != 'div' else 'truediv'}__" if operator else key + "_"
    inplace.__doc__ = f"``t.{key}_(...)``: ``t.{key}(...)`` written into t's own storage."
    return inplace


def _refused(key, other, params, operator):
    """``t += 'a'``: NotImplemented, so that Python says the operation is unsupported (PyTorch's
    ``__iadd__`` answers so); ``t.add_('a')``: PyTorch's parser's TypeError."""
    if operator:
        return NotImplemented
    check(key + "_", (other,), params, method=True)
    return NotImplemented


def _written(self, op, other, alpha):
    """``op`` of self and ``other`` (a tensor of self's floating dtype and shape, or 0-d; or a Python
    number) computed by its forward straight into self's storage, the version counter up: self;
    None where :func:`_inplace`'s general path must decide (a gradient recorded, promotion,
    broadcasting into another shape, shared memory, an expanded or read-only tensor)."""
    a = self._data
    if a.dtype.kind != "f" or not a.flags.writeable or 0 in a.strides and a.size > 1:
        return None
    if isinstance(other, TensorBase):
        b = other._data
        if b.dtype != a.dtype or b.shape != a.shape and b.ndim or _GradMode.enabled and (
                requires_grad(self) or requires_grad(other)):
            return None
        if b is not a and (a.base is not None or b.base is not None) and np.may_share_memory(a, b):
            return None     # (memory shared with another layout: _inplace's checks decide)
    elif type(other) is float or type(other) is int:
        if _GradMode.enabled and requires_grad(self):
            return None
        b = np.asarray(other).astype(a.dtype)    # PyTorch's wrapped number, in self's dtype (_literal's)
    else:
        return None
    if type(alpha) is not int and type(alpha) is not float:
        return None
    if alpha == 1:
        op.forward(a, b, out=a)
    else:
        op.forward(a, b, alpha=alpha, out=a)
    self._vbox[0] += 1
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


def _make_inplace(name):
    def method(self, *args, **kwargs):
        try:
            return _inplace(self, lambda t, *a: getattr(t, name)(*a, **kwargs), *args)
        except Exception:      # (PyTorch reads its arguments first: its parser's refusal, in the twin's name)
            recheck(name + "_", args, kwargs, method=True)
            raise
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"``t.{name}_(...)``: ``t.{name}(...)`` written into t's own storage."
    return method


def _recording(t, value=None):
    return _GradMode.enabled and (requires_grad(t) or isinstance(value, TensorBase) and requires_grad(value))


def fill(t, value):
    """``t.fill_(value)``: every element set; recorded (FillBackward2, or FillBackward3 for a 0-d
    tensor value, which then gets the gradient's sum) when a gradient flows through ``t``."""
    if isinstance(value, TensorBase) and value.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.")
    if _recording(t, value):
        if isinstance(value, TensorBase):
            return _inplace(t, lambda s, v: apply(OPS["fill_tensor"], (s, v), [s._data, v._data.astype(s._data.dtype)]),
                            value, internal=False)
        return _inplace(t, lambda s: apply(OPS["fill"], (s,), value=value), internal=False)
    return _filled(t, value._data if isinstance(value, TensorBase) else value)


def zero(t):
    """``t.zero_()``: recorded as ZeroBackward0 when a gradient flows through ``t``."""
    if _recording(t):
        return _inplace(t, lambda s: apply(OPS["zero"], (s,)), internal=False)
    return _filled(t, 0)


def _filled(t, value):
    """``t`` with every element set to ``value`` where nothing is recorded (then no leaf check can
    refuse it either), its version counter up: fill_'s and zero_'s write (``p.grad.zero_()``)."""
    _writable(t._data)[...] = value
    t._vbox[0] += 1
    return t


def copy(t, src):
    """``t.copy_(src)``: src broadcast into t's shape and dtype, one CopyBackwards node."""
    try:
        np.broadcast_to(src._data, t.shape)
    except ValueError:
        raise _broadcast_error(t.shape, src.shape) from None
    return _inplace(t, lambda s, v: apply(OPS["copy"], (s, v)), src)
