"""Op-table entries of the pointwise ops of three tensors that optimizers and lessons use:
AddcmulBackward0, AddcdivBackward0, LerpBackward0 (a number as weight) and LerpBackward1 (a tensor).
Declared with :func:`gradviz._op.op` into the one table, :data:`gradviz.ops.OPS`; the contract
of an entry is written in :mod:`gradviz.ops`.  Each rule multiplies in the order of PyTorch's
derivatives.yaml (``grad * (tensor2 * value)``), so the gradients agree to the bit.
"""

import numpy as np

from . import kernels
from ._op import op

__all__ = []


def _scaled(t, value):
    """``t * value`` as PyTorch multiplies a tensor by a Scalar (``t`` itself when value is 1)."""
    return t if value == 1 else t * np.asarray(value, t.dtype)


op("addcmul", grad_fn="AddcmulBackward0", forward=kernels.addcmul,
   vjps=[lambda g, y, a, t1, t2, value=1: g,
         lambda g, y, a, t1, t2, value=1: g * _scaled(t2, value),
         lambda g, y, a, t1, t2, value=1: g * _scaled(t1, value)], uses=["", "2", "1"],
   latex=r"@0 + @value \cdot @1 \cdot @2", dlatex=["1", r"@value \cdot @2", r"@value \cdot @1"],
   params={"value": 2.0}, method="addcmul", inplace=True, function=True, inputs="ternary",
   saved={"tensor1": 1, "tensor2": 2, "value": "@value=1"}, category="elementwise")
op("addcdiv", grad_fn="AddcdivBackward0", forward=kernels.addcdiv,
   vjps=[lambda g, y, a, t1, t2, value=1: g,
         lambda g, y, a, t1, t2, value=1: g * (np.asarray(value, t2.dtype) / t2),
         lambda g, y, a, t1, t2, value=1: -g * (_scaled(t1, value) / (t2 * t2))], uses=["", "2", "12"],
   latex=r"@0 + @value \cdot \frac{@1}{@2}", dlatex=["1", r"\frac{@value}{@2}", r"-\frac{@value \cdot @1}{@2^{2}}"],
   params={"value": 2.0}, method="addcdiv", inplace=True, function=True, inputs="ternary",
   saved={"tensor1": 1, "tensor2": 2, "value": "@value=1"}, category="elementwise")
# lerp(a, b, w) = a + w·(b − a); a number w is saved as ``weight``, and 1 − w is taken in double
op("lerp", grad_fn="LerpBackward0", forward=kernels.lerp,
   vjps=[lambda g, y, a, end, weight: g * np.asarray(1 - float(weight), g.dtype),
         lambda g, y, a, end, weight: g * np.asarray(weight, g.dtype)], uses=["", ""],
   latex=r"@0 + @weight \cdot (@1 - @0)", dlatex=[r"1 - @weight", "@weight"],
   params={"weight": 0.3}, method="lerp", inplace=True, function=True, inputs="binary",
   saved={"weight": "@weight"}, category="elementwise")
op("lerp_tensor", grad_fn="LerpBackward1", symbol="lerp", forward=kernels.lerp,
   vjps=[lambda g, y, a, end, w: g * (1 - w), lambda g, y, a, end, w: g * w,
         lambda g, y, a, end, w: g * (end - a)], uses=["2", "2", "01"],
   latex=r"@0 + @2 \cdot (@1 - @0)", dlatex=[r"1 - @2", "@2", "@1 - @0"],
   method="lerp", inplace=True, function=True, inputs="ternary", saved={"self": 0, "end": 1, "weight": 2},
   category="elementwise")


# --- clamp with tensor bounds -----------------------------------------------------------------
# clamp(x, min=t, max=u) = min(max(x, t), u): ClampBackward0 (numbers as bounds are ClampBackward1,
# in ops.py).  A bound not given comes in as ∓inf, not requiring grad (next_functions: None).
# PyTorch's clamp_backward_min_max: where min > max, max wins, and the gradient goes to max only.
op("clamp_tensor", grad_fn="ClampBackward0", symbol="clamp", forward=kernels.clamp,
   vjps=[lambda g, y, a, lo, hi: np.where((a >= lo) & (a <= hi), g, 0),
         lambda g, y, a, lo, hi: np.where((a < lo) & (lo < hi), g, 0),
         lambda g, y, a, lo, hi: np.where((a > hi) | (hi < lo), g, 0)], uses=["012", "012", "012"],
   latex=r"\operatorname{clamp}(@0, @1, @2)",
   dlatex=[r"\mathbb{1}[@1 \le @0 \le @2]", r"\mathbb{1}[@0 < @1 < @2]", r"1 - \mathbb{1}[@0 \le @2] \cdot \mathbb{1}[@1 \le @2]"],
   method="clamp", inplace=True, function=True, inputs="ternary", saved={"self": 0, "min": 1, "max": 2},
   category="elementwise")
# x.clamp_min(t), x.clamp_max(t): one bound, a node of their own (ClampMinBackward1, ClampMaxBackward1)
op("clamp_min_tensor", grad_fn="ClampMinBackward1", symbol="clamp_min", forward=lambda a, lo: kernels.clamp(a, lo, np.array(np.inf, a.dtype)),
   vjps=[lambda g, y, a, lo: np.where(a >= lo, g, 0), lambda g, y, a, lo: np.where(a < lo, g, 0)], uses=["01", "01"],
   latex=r"\max(@0, @1)", dlatex=[r"\mathbb{1}[@0 \ge @1]", r"\mathbb{1}[@0 < @1]"],
   method="clamp_min", inplace=True, function=True, inputs="binary", saved={"self": 0, "min": 1},
   category="elementwise")
op("clamp_max_tensor", grad_fn="ClampMaxBackward1", symbol="clamp_max", forward=lambda a, hi: kernels.clamp(a, np.array(-np.inf, a.dtype), hi),
   vjps=[lambda g, y, a, hi: np.where(a <= hi, g, 0), lambda g, y, a, hi: np.where(a > hi, g, 0)], uses=["01", "01"],
   latex=r"\min(@0, @1)", dlatex=[r"\mathbb{1}[@0 \le @1]", r"\mathbb{1}[@0 > @1]"],
   method="clamp_max", inplace=True, function=True, inputs="binary", saved={"self": 0, "max": 1},
   category="elementwise")
