"""``addcmul``, ``addcdiv``, ``lerp`` and ``clamp``: PyTorch's checks (broadcasting, dtypes, bounds
that are numbers or tensors) and then one node of the op table (:mod:`gradviz._blend_ops`, ``gradviz.ops``).

>>> import gradviz as torch
>>> torch.addcmul(torch.zeros(2), torch.tensor([1., 2.]), torch.tensor([3., 4.]), value=0.5)
tensor([1.5000, 4.0000])
>>> torch.tensor([0., 10.], requires_grad=True).lerp(torch.tensor([1., 20.]), 0.25)
tensor([ 0.2500, 12.5000], grad_fn=<LerpBackward0>)
"""

import numpy as np

from . import _dtype
from ._arg_errors import check, is_scalar
from .autograd.engine import apply
from ._operands import _broadcast_error, _literal, _number
from ._types import TensorBase
from .ops import OPS

__all__ = ["addcmul", "addcdiv", "lerp", "clamp", "clamp_min", "clamp_max"]


def _broadcast(*tensors):
    """The shape all of them broadcast to, with PyTorch's error naming the first pair that does not."""
    shape = ()
    for t in tensors:
        try:
            shape = np.broadcast_shapes(shape, t.shape)
        except ValueError:
            raise _broadcast_error(shape, t.shape) from None
    return shape


def _check_tensor(name, arg, v):
    if not isinstance(v, TensorBase):
        raise TypeError(f"{name}(): argument '{arg}' (position {('input', 'tensor1', 'tensor2').index(arg) + 1}) "
                        f"must be Tensor, not {type(v).__name__}")


def _addc(key, input, tensor1, tensor2, value):
    for arg, v in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        _check_tensor(key, arg, v)
    if key == "addcdiv" and not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
            "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
            "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    _broadcast(input, tensor1, tensor2)
    dt = _dtype.result_type(input, tensor1, tensor2).np
    arrays = [t._data.astype(dt, copy=False) for t in (input, tensor1, tensor2)]
    return apply(OPS[key], (input, tensor1, tensor2), arrays, value=value)


def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value · tensor1 · tensor2``, one AddcmulBackward0 node (Adam's second moment)."""
    return _addc("addcmul", input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value · tensor1 / tensor2``, one AddcdivBackward0 node (Adam's step)."""
    return _addc("addcdiv", input, tensor1, tensor2, value)


# how PyTorch's dtype check in lerp names a dtype (C++'s names for the element types)
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int"}


def _same_dtype(input, other, name):
    if other.dtype is not input.dtype:
        want, got = (_CPP_NAMES.get(t._data.dtype.name, t._data.dtype.name) for t in (input, other))
        raise RuntimeError(f"expected dtype {want} for `{name}` but got dtype {got}")


def lerp(input, end, weight):
    """``input + weight · (end − input)``: LerpBackward0 for a number weight, LerpBackward1 for a tensor."""
    _same_dtype(input, end, "end")
    kind = "tensor" if isinstance(weight, TensorBase) else "scalar"
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"lerp_kernel_{kind}" not implemented for \'{_dtype.TYPE_NAMES[input._data.dtype.name]}\'')
    if kind == "scalar":
        _broadcast(input, end)
        return apply(OPS["lerp"], (input, end), weight=float(weight))
    if weight.ndim:          # (a 0-d weight may be of another float dtype: it is computed in input's)
        _same_dtype(input, weight, "weight")
    _broadcast(input, end, weight)
    arrays = [input._data, end._data, weight._data.astype(input._data.dtype, copy=False)]
    return apply(OPS["lerp_tensor"], (input, end, weight), arrays)


def _type_name(v):
    return "Tensor" if isinstance(v, TensorBase) else type(v).__name__


def _mixed_bounds(name, kwargs):
    """PyTorch's TypeError for a tensor bound beside a number bound (no overload takes both)."""
    keys = ", ".join(sorted(kwargs))
    got = "".join(f"{k}={_type_name(kwargs[k])}, " for k in sorted(kwargs))
    why = f"      didn't match because some of the keywords were incorrect: {keys}\n"
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     f" * (Tensor min = None, Tensor max = None)\n{why}"
                     f" * (Number min = None, Number max = None)\n{why}")


def clamp(input, min=None, max=None):
    """``clamp(x, min, max)``: numbers as bounds record ClampBackward1; tensors, one ClampBackward0
    node of min(max(x, t), u)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if not isinstance(min, TensorBase) and not isinstance(max, TensorBase):
        if not (min is None or is_scalar(min)) or not (max is None or is_scalar(max)):
            check("clamp", (min, max), method=True)      # (clamp('a'): PyTorch's parser refuses it)
        return apply(OPS["clamp"], (input,), _bounded(input, min, max), lo=_number(min), hi=_number(max))
    bounds = {k: b for k, b in (("min", min), ("max", max)) if b is not None}
    if not all(isinstance(b, TensorBase) for b in bounds.values()):
        raise _mixed_bounds("clamp", bounds)
    dt = _dtype.result_type(input, *bounds.values())
    _broadcast(input, *bounds.values())
    far = np.inf if dt.is_floating_point else np.iinfo(dt.np).max
    lo = min if min is not None else _literal(-far, dt, input, kept=False)     # a bound not given: no bound
    hi = max if max is not None else _literal(far, dt, input, kept=False)
    arrays = [t._data.astype(dt.np, copy=False) for t in (input, lo, hi)]
    return apply(OPS["clamp_tensor"], (input, lo, hi), arrays)


def clamp_min(input, min):
    """``x.clamp_min(c)``: ClampMinBackward0 for a number, ClampMinBackward1 for a tensor."""
    return _clamp_side(input, min, "min")


def clamp_max(input, max):
    """``x.clamp_max(c)``: ClampMaxBackward0 for a number, ClampMaxBackward1 for a tensor."""
    return _clamp_side(input, max, "max")


def _clamp_side(input, bound, side):
    if not isinstance(bound, TensorBase):
        return apply(OPS[f"clamp_{side}"], (input,), _bounded(input, bound), **{side: _number(bound)})
    dt = _dtype.result_type(input, bound)
    _broadcast(input, bound)
    arrays = [t._data.astype(dt.np, copy=False) for t in (input, bound)]
    return apply(OPS[f"clamp_{side}_tensor"], (input, bound), arrays)


def _bounded(t, *bounds):
    """The input of a clamp by numbers, in the dtype PyTorch computes it in: an integer tensor with a
    float bound is clamped in the default float dtype (None: as it is)."""
    if t.dtype.is_floating_point or not any(isinstance(b, float) for b in bounds):
        return None
    return [t._data.astype(_dtype.get_default_dtype().np)]
