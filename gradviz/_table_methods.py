"""The Tensor methods that only name an op, made from the op table: ``x.exp()``, ``x.arctan()``,
``x.erf_()``.  An op whose method needs more than that (``x.sum(dim)``) has it written in
:mod:`gradviz.tensor`; the aliases and in-place twins are made for those too.
"""

from .autograd.engine import apply
from ._inplace import _make_inplace
from ._operands import _binary, _floating
from .ops import OPS

__all__ = ["install_table_methods"]


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


def install_table_methods(cls):
    """Every way the op table says an op is reached, set on the tensor class ``cls``: the method
    (unless written by hand in the class), its aliases, and the in-place twins (the method
    written back into self)."""
    for op in OPS.values():
        if op.method is None:
            continue
        if not hasattr(cls, op.method):
            setattr(cls, op.method, _table_method(op))
        for alias in op.aliases:
            if not hasattr(cls, alias):
                setattr(cls, alias, getattr(cls, op.method))
        for name in (op.method, *op.aliases) if op.inplace else ():
            if not hasattr(cls, name + "_"):
                setattr(cls, name + "_", _make_inplace(name))
    for name in _COMPOSITE_INPLACE:
        setattr(cls, name + "_", _make_inplace(name))


# In-place twins of methods that are not table entries (composites, rounded divisions)
_COMPOSITE_INPLACE = ("square", "clamp_min", "clamp_max", "remainder", "fmod", "floor_divide")
