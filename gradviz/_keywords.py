"""numpy's keyword names that PyTorch also accepts: ``x.sum(axis=0)``, ``keepdims=True``, ``torch.cat(ts, axis=1)``.

PyTorch's argument parser reads ``axis`` as ``dim``, ``keepdims`` as ``keepdim``, ``x``, ``a`` or
``x1`` as ``input`` and ``x2`` as ``other`` (``numpy_compatibility_arg_names`` in
python_arg_parser.cpp), for every function and method it parses.

>>> import gradviz as torch
>>> torch.tensor([[1., 5.], [7., 2.]]).argmax(axis=1, keepdims=True)
tensor([[1],
        [0]])
"""

import functools
import inspect
import types

from ._arg_errors import recheck

__all__ = ["ALIASES", "accepting_numpy_names", "install_numpy_names", "parameter_names"]

ALIASES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}


def parameter_names(fn):
    """The names in ``inspect.signature(fn)``, read from the code object where there is one: this
    runs for every method and function at ``import gradviz``, where ``inspect.signature`` cost
    most of the package's own import time."""
    own = getattr(fn, "__dict__", None)
    if type(fn) is types.FunctionType and "__wrapped__" not in own and "__signature__" not in own:
        plain = fn          # (a plain function, most of them: read without a failed attribute lookup)
    else:
        plain = fn
        while hasattr(plain, "__wrapped__") and not hasattr(plain, "__signature__"):
            plain = plain.__wrapped__          # what inspect.signature follows (functools.wraps)
        if getattr(plain, "__code__", None) is None or hasattr(plain, "__signature__") or not inspect.isfunction(plain):
            try:
                return inspect.signature(fn).parameters
            except (TypeError, ValueError):
                return ()
    code = plain.__code__
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return code.co_varnames[:count]


_TORCH_NAMES = frozenset(ALIASES.values())


def _aliases_for(fn):
    params = parameter_names(fn)
    if _TORCH_NAMES.isdisjoint(params):
        return {}
    return {alias: name for alias, name in ALIASES.items() if name in params and alias not in params}


def accepting_numpy_names(fn, aliases=None, method=False):
    """``fn``, also called with numpy's names for its arguments (those of ``aliases``, or the
    ones its signature has); ``fn`` itself when it has none of PyTorch's parameter names.

    The wrapper sees the arguments as they were given, so a call that fails is said again in
    PyTorch's words where PyTorch's parser refuses it (``x.sum('a')``, ``x.mul(1, 2, 3)``: a tensor's
    method when ``method``, its first argument self)."""
    aliases = _aliases_for(fn) if aliases is None else aliases
    if not aliases:
        return fn
    name = fn.__name__

    def wrapper(*args, **kwargs):
        given = kwargs
        try:
            if not kwargs:      # (the usual x.sum(), x.mean(1): nothing to rename, and a call without keywords)
                return fn(*args)
            if not aliases.keys().isdisjoint(kwargs):
                given = dict(kwargs)
                for alias, torch_name in aliases.items():
                    if alias in kwargs:
                        if torch_name in kwargs:
                            raise TypeError(f"{name}() got an unexpected keyword argument '{alias}'")
                        kwargs[torch_name] = kwargs.pop(alias)
            return fn(*args, **kwargs)
        except Exception:      # (PyTorch reads its arguments first: its parser's refusal comes first)
            recheck(name, args[1:] if method else args, given, method=method)
            raise
    _wraps(wrapper, fn)
    wrapper._numpy_names = aliases
    return wrapper


def _wraps(wrapper, fn):
    """``functools.wraps(fn)(wrapper)``, written out for a plain function (a third of its cost: this
    runs for some 230 methods and functions at ``import gradviz``)."""
    if type(fn) is not types.FunctionType:
        return functools.update_wrapper(wrapper, fn)
    wrapper.__module__, wrapper.__name__, wrapper.__qualname__ = fn.__module__, fn.__name__, fn.__qualname__
    wrapper.__doc__, wrapper.__annotations__ = fn.__doc__, fn.__annotations__
    wrapper.__dict__.update(fn.__dict__)
    wrapper.__wrapped__ = fn
    return wrapper


# Methods PyTorch writes in Python (torch/_tensor.py), which its argument parser never sees
_PYTHON_METHODS = {"norm", "split"}


def install_numpy_names(cls):
    """Every public method of ``cls`` with a ``dim``, ``keepdim``, ``input`` or ``other`` parameter
    also takes numpy's name for it (the in-place twins pass their keywords on to these)."""
    for name, fn in list(vars(cls).items()):
        if not name.startswith("_") and name not in _PYTHON_METHODS and inspect.isfunction(fn):
            wrapped = accepting_numpy_names(fn, method=True)
            if wrapped is not fn:
                setattr(cls, name, wrapped)
