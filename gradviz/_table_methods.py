"""The Tensor methods that only name an op, made from the op table: ``x.exp()``, ``x.arctan()``,
``x.erf_()``; and the comparisons (``x.eq(y)``), made from numpy's.  An op whose method needs more
than that (``x.sum(dim)``) has it written in :mod:`gradviz.tensor`; the aliases and in-place twins
are made for those too.
"""

import numpy as np

from ._arg_errors import MISSING, as_given, check, refuse
from .autograd.engine import apply
from ._inplace import _make_inplace
from ._operands import _binary, _floating
from .ops import OPS

__all__ = ["install_table_methods"]


def _table_method(op):
    """The method of an op that has nothing to parse: ``x.exp()``, ``x.maximum(y)``, ``x.round(decimals=1)``."""
    key, name = op.key, op.method
    if len(op.vjps) == 2:
        def method(self, other=MISSING):
            r = _binary(key, self, other)
            if r is NotImplemented:     # (not an operand: PyTorch's parser refuses it)
                check(name, (other,), method=True)
            return r
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


def _alias(method, alias):
    """``method`` under PyTorch's other name for it (``x.subtract`` for ``x.sub``): the same, but
    a call PyTorch's parser refuses is refused in the alias's own words (``subtract() ...``)."""
    aliased = as_given(method, alias)
    aliased.__name__ = aliased.__qualname__ = alias
    aliased.__doc__ = method.__doc__
    return aliased


def _comparison(name, fn):
    """``x.eq(y)``, ``x.logical_and(y)``: the comparison as a method, refused as PyTorch refuses
    what is not an operand (where ``x == 'a'`` gives NotImplemented, so False)."""
    def method(self, other=MISSING):
        r = self._compare(other, fn)
        return r if r is not NotImplemented else refuse(name, other)
    method.__name__ = method.__qualname__ = name
    return method


_COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
                "ge": np.greater_equal, "logical_and": np.logical_and, "logical_or": np.logical_or}


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
                setattr(cls, alias, _alias(getattr(cls, op.method), alias))
        for name in (op.method, *op.aliases) if op.inplace else ():
            if not hasattr(cls, name + "_"):
                setattr(cls, name + "_", _make_inplace(name))
    for name, fn in _COMPARISONS.items():
        setattr(cls, name, _comparison(name, fn))
    for name in _COMPOSITE_INPLACE:
        setattr(cls, name + "_", _make_inplace(name))


# In-place twins of methods that are not table entries (composites, rounded divisions)
_COMPOSITE_INPLACE = ("square", "clamp_min", "clamp_max", "remainder", "fmod", "floor_divide")
