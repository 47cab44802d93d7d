"""The legacy constructors: ``FloatTensor``, ``LongTensor``... -- ``FloatTensor(2, 3)``,
``isinstance(x, LongTensor)`` and ``x.type(DoubleTensor)``, as old tutorials use them.
"""

from . import _dtype
from ._operands import _legacy_new
from .tensor import Tensor

__all__ = ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor",
           "ByteTensor", "BoolTensor"]


class _LegacyMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __call__(cls, *args, **kwargs):
        return _legacy_new(Tensor, cls.dtype, *args, **kwargs)

    def __repr__(cls):
        return f"<class 'gradviz.{cls.__name__}'>"


def _legacy_class(name, dtype):
    return _LegacyMeta(name, (), {"dtype": dtype})


FloatTensor = _legacy_class("FloatTensor", _dtype.float32)
DoubleTensor = _legacy_class("DoubleTensor", _dtype.float64)
LongTensor = _legacy_class("LongTensor", _dtype.int64)
IntTensor = _legacy_class("IntTensor", _dtype.int32)
ShortTensor = _legacy_class("ShortTensor", _dtype.int16)
CharTensor = _legacy_class("CharTensor", _dtype.int8)
ByteTensor = _legacy_class("ByteTensor", _dtype.uint8)
BoolTensor = _legacy_class("BoolTensor", _dtype.bool)
