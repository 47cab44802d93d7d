"""``gradviz.exp(x)`` for ``x.exp()``: the ``torch.*`` functions that are a method under another
spelling, made from the op table (every entry marked ``function=True``) and from a short list of
methods that are not table entries.

Their names (:data:`NAMES`) are known at ``import gradviz``; each function is made the first time it
is asked for (:func:`function`, which the package face's ``__getattr__`` calls), so the import does
not make some 150 functions a lesson mostly never calls (issue 16).

>>> function("exp") is function("exp"), function("exp").__name__
(True, 'exp')
"""

import functools
import sys
import warnings

import numpy as np

from . import _dtype
from . import _inplace
from ._arg_errors import MISSING, NUMBERS_AS_TENSORS, check, is_scalar, recheck
from ._creation import tensor
from .autograd.grad_mode import is_grad_enabled
from ._matmul_and_joins import matmul, where
from ._keywords import accepting_numpy_names
from .ops import OPS
from .tensor import Tensor


def is_tensor(obj):
    return isinstance(obj, Tensor)


def _method(name):
    """``gradviz.<name>(t, ...)``: ``t.<name>(...)``; with ``out=`` (:func:`_into`) unless the method
    works in place.  (One function, not the method call wrapped again for ``out=``: both cost at
    ``import gradviz`` and on every call.)  What is not a tensor is refused as PyTorch's parser
    refuses it (:func:`_as_input`); a call the method refuses is refused in the function's words."""
    if name.endswith("_"):
        def fn(input=MISSING, *args, **kwargs):
            given = input
            if not isinstance(input, Tensor):
                input = _as_input(name, input, args, kwargs)
            try:
                return getattr(input, name)(*args, **kwargs)
            except Exception:
                recheck(name, (given, *args), kwargs, method=False)
                raise
    else:
        def fn(input=MISSING, *args, out=None, **kwargs):
            if out is not None:
                return _into(name, out, (input, *args, *kwargs.values()), lambda: fn(input, *args, **kwargs))
            given = input
            if not isinstance(input, Tensor):
                input = _as_input(name, input, args, kwargs)
            try:
                return getattr(input, name)(*args, **kwargs)
            except Exception:     # (PyTorch reads its arguments first: its parser's refusal comes first)
                recheck(name, (given, *args), kwargs, method=False)
                raise
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``gradviz.{name}(t, ...)`` is ``t.{name}(...)``."
    return fn


def _as_input(name, input, args, kwargs):
    """``input`` of ``gradviz.<name>(input, ...)`` as a tensor where PyTorch takes it (a number for
    ``add``, ``mul``...: its ``should_allow_numbers_as_tensors``; ``pow(2, t)`` by an overload taking
    a number first); else PyTorch's TypeError (``exp(): argument 'input' (position 1) must be
    Tensor, not int``)."""
    if not (name in NUMBERS_AS_TENSORS and is_scalar(input)):
        check(name, (input, *args), kwargs, method=False)
    if input is MISSING:        # (a function whose signatures gradviz does not know: Python's words)
        raise TypeError(f"{name}() missing 1 required positional argument: 'input'")
    return tensor(input)


def _with_out(name, fn):
    """``fn`` (a function written out, not a method) that also takes ``out=t`` (:func:`_into`)."""
    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            try:
                return fn(*args, **kwargs)
            except Exception:     # (PyTorch reads its arguments first: its parser's refusal comes first)
                recheck(name, args, kwargs, method=False)
                raise
        return _into(name, out, (*args, *kwargs.values()), lambda: fn(*args, **kwargs))
    return with_out


def _into(name, out, given, compute):
    """``out=t``, as PyTorch's functions take it: the result of ``compute()`` is written into ``t``
    (resized, with PyTorch's warning, when ``t`` has elements and another shape) and ``t`` returned.
    Nothing is recorded, so no argument (``given``) may require grad while grad mode is on."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    # (not any(): this module's globals hold gradviz.any)
    needs_grad = [a for a in (out, *given) if isinstance(a, Tensor) and a.requires_grad]
    if is_grad_enabled() and needs_grad:
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    result = compute()
    if result.dtype.kind > out.dtype.kind:
        raise RuntimeError(f"result type {_dtype.TYPE_NAMES[result._data.dtype.name]} can't be cast to the "
                           f"desired output type {_dtype.TYPE_NAMES[out._data.dtype.name]}")
    if out.shape != result.shape:
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(out.shape)}, which does not match the required output shape "
                          f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
                          "release outputs will not be resized unless they have zero elements. You can "
                          "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                          "with t.resize_(0).", UserWarning, stacklevel=_outside_gradviz())
        out._data = np.empty(result.shape, out._data.dtype)
    return _inplace.copy(out, result)


def _outside_gradviz():
    """The ``stacklevel`` of the first frame outside gradviz: a warning points at the user's line."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "gradviz":
        level, frame = level + 1, frame.f_back
    return level


def _function_names():
    """``gradviz.exp(x)`` for ``x.exp()``: every op the table marks as a function, and the methods
    below, which are not table entries (composites, comparisons, and what records no gradient)."""
    names = [n for op in OPS.values() if op.function is True for n in (op.method, *op.aliases)]
    return names + ("true_divide floor_divide remainder fmod amax amin argmax argmin argsort chunk flatten unflatten "
                    "tile broadcast_to diff ravel movedim moveaxis swapdims fliplr flipud take_along_dim argwhere "
                    "count_nonzero square isnan isinf isfinite nonzero any all detach numel allclose equal isclose "
                    "eq ne lt le gt ge is_floating_point logical_not logical_and logical_or fill_ zero_").split()


_WRITTEN_OUT = {"matmul": matmul, "where": where}     # matmul dispatches, where takes a condition
NAMES = frozenset(_function_names()) | frozenset(_WRITTEN_OUT)
FUNCTIONS = {}      # name -> gradviz.<name>, once made by function()


def function(name):
    """``gradviz.<name>`` (one of :data:`NAMES`), made the first time it is asked for, the same after."""
    fn = FUNCTIONS.get(name)
    if fn is None:
        made = _with_out(name, _WRITTEN_OUT[name]) if name in _WRITTEN_OUT else _method(name)
        fn = FUNCTIONS[name] = accepting_numpy_names(made)
    return fn


def __getattr__(name):
    if name in NAMES:
        return function(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["NAMES", "FUNCTIONS", "function", "is_tensor"]
