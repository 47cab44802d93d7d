"""Options checked where they come in: one clear message naming the option and what it takes.

``draw()``, ``animate()``, ``save_html()`` and the widget's traits all check their options here,
so a typo or a wrong type is said at the call, in the student's words, instead of surfacing as
numpy's or traitlets' error nine frames deeper (or being silently ignored).

>>> positive_number("animate", "speed", float("nan"))
Traceback (most recent call last):
...
ValueError: animate(): speed= must be a positive, finite number, not nan
>>> keywords("animate", {"langauge": "ko"}, ["lang", "names", "view"])
Traceback (most recent call last):
...
TypeError: animate() got an unexpected keyword argument 'langauge'. Did you mean 'lang'?
"""

import difflib
import math
import numbers
import os
import types
from collections.abc import Mapping

import numpy as np

from .naming import tensor_library
from .tensor import Tensor

__all__ = ["describe", "keywords", "root", "one_engine", "path", "frame", "namespace", "recording", "one_of", "boolean", "positive_number", "whole_number", "text", "names",
           "steps", "expected"]


def _show(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe(value):
    """What a value is, in words: ``a list``, ``the str 'x'``, ``a torch.Tensor``."""
    cls = type(value)
    name = cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__.split('.')[0]}.{cls.__name__}"
    if isinstance(value, (str, numbers.Number)) and not isinstance(value, bool):
        return f"the {name} {_show(value)}"
    if value is None or isinstance(value, bool):
        return repr(value)
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _subject(func, option):
    """``animate(): speed=`` for an argument, ``AutogradWidget.frame`` for a trait (``func`` None)."""
    return option if func is None else f"{func}(): {option}="


def keywords(func, given, accepted):
    """Refuse keyword arguments ``func`` does not take, suggesting the nearest one it does."""
    accepted = list(accepted)
    for key in given:
        if key not in accepted:
            near = difflib.get_close_matches(key, accepted, n=1, cutoff=0.6)
            hint = f". Did you mean {near[0]!r}?" if near else ""
            raise TypeError(f"{func}() got an unexpected keyword argument {key!r}{hint}")


def root(func, value):
    """A tensor to draw (gradviz's or a real torch.Tensor); anything else (an array, a number) is refused."""
    if isinstance(value, Tensor) or tensor_library(value):     # gradviz's, or a real torch.Tensor
        return value
    raise TypeError(f"{func}() takes a tensor (the output whose graph to show, e.g. {func}(o)), "
                    f"not {describe(value)}")


def one_engine(func, roots):
    """Roots of one engine: gradviz's tensors and real torch.Tensors cannot share one picture."""
    engines = {"torch" if tensor_library(r) == "torch" else "gradviz" for r in roots}
    if len(engines) > 1:
        raise TypeError(f"{func}() draws one engine's graph at a time, and these tensors mix gradviz's and "
                        f"torch's: call {func}() for each engine's tensors on its own")
    return roots


def path(func, option, value):
    """A file name: a string or an ``os.PathLike`` (``pathlib.Path``)."""
    if isinstance(value, (str, os.PathLike)):
        return value
    raise TypeError(f"{_subject(func, option)} must be a file name (a str or a pathlib.Path), not {describe(value)}")


def frame(func, value):
    """A Python frame (``sys._getframe()``) whose variables name the tensors, or None."""
    if value is None or isinstance(value, types.FrameType):
        return value
    raise TypeError(f"{_subject(func, 'frame')} must be a Python frame (sys._getframe()) or None, "
                    f"not {describe(value)}; to name tensors, pass names={{'x': x}}")


def namespace(func, value):
    """A mapping of variable names to values (``globals()``), or None."""
    if value is None or isinstance(value, Mapping):
        return value
    raise TypeError(f"{_subject(func, 'namespace')} must be a dict of variables (e.g. globals()), "
                    f"not {describe(value)}")


def recording(func, value):
    """A ``gradviz.trace.record()`` recording (or its list of events), or None."""
    if value is None or hasattr(value, "events") or isinstance(value, list):
        return value
    raise TypeError(f"{func}(): recording= must be what `with gradviz.trace.record() as rec:` gives, "
                    f"not {describe(value)}")


def one_of(func, option, value, choices):
    if isinstance(value, str) and value in choices:
        return value
    listed = ", ".join(repr(c) for c in choices)
    raise ValueError(f"{_subject(func, option)} must be one of {listed}, not {_show(value)}")


def boolean(func, option, value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{_subject(func, option)} must be True or False, not {describe(value)}")


def _real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def positive_number(func, option, value):
    """A finite number > 0 (a speed, a timeout)."""
    if not _real(value):
        raise TypeError(f"{_subject(func, option)} must be a positive number, not {describe(value)}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{_subject(func, option)} must be a positive, finite number, not {_show(float(value))}")
    return float(value)


def whole_number(func, option, value, low=0, high=None, what=None):
    """An int in ``[low, high]``; ``what`` says what the bounds are (``the widget has 13 frames``)."""
    if not isinstance(value, (numbers.Integral, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{_subject(func, option)} must be a whole number, not {describe(value)}")
    value = int(value)
    if value < low or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{_subject(func, option)} must be {span}{f' ({what})' if what else ''}, not {value}")
    return value


def text(func, option, value):
    """A string or None."""
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{_subject(func, option)} must be a string, not {describe(value)}")


def _dict(func, option, value, of, example):
    if not isinstance(value, Mapping):
        raise TypeError(f"{func}(): {option}= must be a dict from {of}, e.g. {option}={example}, "
                        f"not {describe(value)}")


def names(func, value):
    """``names={"x": x, "model": model}``: each name a string, each value a tensor or a module."""
    if value is None:
        return None
    _dict(func, "names", value, "name to tensor", "{'x': x, 'y': y}")
    for key, v in value.items():
        if tensor_library(key) and isinstance(v, str):      # {x: "x"} reads as well
            key, v = v, key
        if not isinstance(key, str):
            raise TypeError(f"{func}(): names= maps names (strings) to tensors; the key {_show(key)} is "
                            f"{describe(key)}")
        if not (tensor_library(v) or callable(getattr(type(v), "named_parameters", None))):
            raise TypeError(f"{func}(): names= maps each name to a tensor (or an nn.Module); "
                            f"names[{key!r}] is {describe(v)}")
    return value


def steps(func, value):
    """``derivation=``: LaTeX lines; one string is one line (not one line per character)."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{func}(): derivation= must be a list of LaTeX strings, e.g. "
                        f"derivation=[r'y = 5(x+1)^2'], not {describe(value)}")
    for k, s in enumerate(value):
        if not isinstance(s, str):
            raise TypeError(f"{func}(): derivation= must be a list of LaTeX strings; item {k} is {describe(s)}")
    return list(value)


def expected(func, value):
    """``expected={"x": lambda x: 5 * (x + 1)}``: leaf name -> closed form (array, callable or (latex, that))."""
    if value is None:
        return None
    _dict(func, "expected", value, "leaf name to its gradient", "{'x': lambda x: 5 * (x + 1)}")
    for key, spec in value.items():
        if not isinstance(key, str):
            raise TypeError(f"{func}(): expected= is keyed by leaf names (strings); the key {_show(key)} is "
                            f"{describe(key)}")
        if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
            spec = spec[1]
        if spec is None or isinstance(spec, (str, Mapping)):
            raise TypeError(f"{func}(): expected[{key!r}] must be a function of the leaves, an array or "
                            f"(latex, function), not {describe(spec)}")
    return value
