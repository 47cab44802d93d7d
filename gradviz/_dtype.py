"""Dtypes and PyTorch's type-promotion rules."""

import builtins as _builtins

import numpy as np

__all__ = ["dtype", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
           "get_default_dtype", "set_default_dtype", "result_type", "as_dtype", "finfo", "iinfo"]


class dtype:
    """A tensor element type, printed as PyTorch prints it (``float32``, ``int64``...)."""

    __module__ = "gradviz"
    __slots__ = ("name", "np", "is_floating_point", "kind", "legacy")

    def __init__(self, name, np_type, kind, legacy):
        self.name, self.np, self.kind, self.legacy = name, np.dtype(np_type), kind, legacy
        self.is_floating_point = kind == 2

    @property
    def is_signed(self):
        return self.name not in ("bool", "uint8")

    @property
    def itemsize(self):
        return self.np.itemsize

    def __repr__(self):
        return "gradviz." + self.name

    def __reduce__(self):
        return self.name


# kind: 0 bool, 1 integer, 2 floating point -- promotion moves up this ladder.
float16 = dtype("float16", np.float16, 2, "HalfTensor")
float32 = dtype("float32", np.float32, 2, "FloatTensor")
float64 = dtype("float64", np.float64, 2, "DoubleTensor")
uint8 = dtype("uint8", np.uint8, 1, "ByteTensor")
int8 = dtype("int8", np.int8, 1, "CharTensor")
int16 = dtype("int16", np.int16, 1, "ShortTensor")
int32 = dtype("int32", np.int32, 1, "IntTensor")
int64 = dtype("int64", np.int64, 1, "LongTensor")
bool = dtype("bool", np.bool_, 0, "BoolTensor")  # noqa: A001 -- torch.bool

# How PyTorch names element types in messages: its C++ names (caffe2::TypeMeta), and its
# scalar-type names ("Float", "Long"...)
CPP_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double", "uint8": "unsigned char",
             "int8": "signed char", "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool"}
TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "uint8": "Byte",
              "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}

_ALL = (float16, float32, float64, uint8, int8, int16, int32, int64, bool)
_BY_NP = {d.np: d for d in _ALL}
_default = [float32]


def get_default_dtype():
    """The dtype of new floating-point tensors (``float32`` unless changed)."""
    return _default[0]


def set_default_dtype(d):
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def as_dtype(d):
    """A gradviz dtype from a gradviz dtype, numpy dtype or Python type."""
    if d is None or isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is __builtins__["bool"] if isinstance(__builtins__, dict) else d is getattr(__builtins__, "bool"):
        return bool
    try:
        return _BY_NP[np.dtype(d)]
    except (KeyError, TypeError):
        raise TypeError(f"cannot interpret {d!r} as a data type") from None


def from_numpy_dtype(npd):
    try:
        return _BY_NP[np.dtype(npd)]
    except KeyError:
        raise TypeError(f"can't convert np.ndarray of type {_np_type_name(npd)}. The only supported "
                        "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
                        "uint64, uint32, uint16, uint8, and bool.") from None


def _np_type_name(npd):
    t = np.dtype(npd).type   # numpy.str_, numpy.object_... as PyTorch names them
    return f"{t.__module__}.{t.__name__}"


def _promote(a, b):
    if a is b:
        return a
    if a.kind != b.kind:
        return a if a.kind > b.kind else b
    return _BY_NP[np.promote_types(a.np, b.np)]


def _scalar_kind(v):
    if isinstance(v, (_builtins.bool, np.bool_)):
        return 0
    if isinstance(v, (int, np.integer)):
        return 1
    return 2


def with_scalar(d, v):
    """The dtype of ``tensor <op> v`` for a Python number ``v`` (the common case of :func:`result_type`)."""
    kind = _scalar_kind(v)
    return d if kind <= d.kind else (bool, int64, get_default_dtype())[kind]


def result_type(*operands):
    """PyTorch's promotion: dimensioned tensors outrank 0-d tensors, which outrank Python numbers,
    except that a higher category (bool < int < float) always wins."""
    groups = ([], [], [])  # dimensioned tensors, 0-d tensors, Python scalars (as kinds)
    for o in operands:
        if isinstance(getattr(o, "dtype", None), dtype):   # a tensor (numpy values have numpy dtypes)
            groups[0 if o.ndim else 1].append(o.dtype)
        else:
            groups[2].append(_scalar_kind(o))
    kinds = [d.kind for d in groups[0]], [d.kind for d in groups[1]], groups[2]
    top = max(k for g in kinds for k in g)
    for g in groups[:2]:
        best = None
        for d in g:
            if d.kind == top:
                best = d if best is None else _promote(best, d)
        if best is not None:
            return best
    return (bool, int64, get_default_dtype())[top]


class finfo:
    """``torch.finfo``: the limits of a floating-point dtype (the default dtype if none is named)."""

    __module__ = "gradviz"

    def __init__(self, type=None):
        type = type or get_default_dtype()
        if not type.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'")
        info = np.finfo(type.np)
        self.bits, self.dtype = info.bits, type.name
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = float(info.resolution)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """``torch.iinfo``: the limits of an integer dtype."""

    __module__ = "gradviz"

    def __init__(self, type):
        if type.is_floating_point or type.name == "bool":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits, self.dtype, self.min, self.max = info.bits, type.name, int(info.min), int(info.max)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

