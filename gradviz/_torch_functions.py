"""``gradviz.exp(x)`` for ``x.exp()``: the ``torch.*`` functions that are a method under another
spelling, made from the op table (every entry marked ``function=True``) and from a short list of
methods that are not table entries.
"""

from ._creation import tensor
from ._functions import matmul, where
from .ops import OPS
from .tensor import Tensor


def is_tensor(obj):
    return isinstance(obj, Tensor)


def _method(name):
    def fn(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            input = tensor(input)
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``gradviz.{name}(t, ...)`` is ``t.{name}(...)``."
    return fn


def _functions():
    """``gradviz.exp(x)`` for ``x.exp()``: every op the table marks as a function, and the methods
    below, which are not table entries (composites, comparisons, and what records no gradient)."""
    names = [n for op in OPS.values() if op.function is True for n in (op.method, *op.aliases)]
    return names + ("true_divide floor_divide remainder fmod amax amin argmax argmin argsort chunk flatten "
                    "square isnan isinf isfinite nonzero any all detach numel allclose equal isclose "
                    "eq ne lt le gt ge is_floating_point logical_not logical_and logical_or fill_ zero_").split()


FUNCTIONS = {name: _method(name) for name in _functions()}
FUNCTIONS.update(matmul=matmul, where=where)    # written out: matmul dispatches, where takes a condition
globals().update(FUNCTIONS)
__all__ = sorted(FUNCTIONS) + ["is_tensor"]
