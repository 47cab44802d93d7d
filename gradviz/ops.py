r"""The op table: every primitive once -- forward, vector-Jacobian products, PyTorch name, symbol, LaTeX.

The contract, written once (as in HIPS/autograd): for an op ``y = f(x_0, x_1, ...)`` and the
gradient ``g = ∂L/∂y`` arriving from above, ``vjps[i](g, y, x_0, x_1, ..., **params)`` returns
``g · ∂y/∂x_i`` -- the gradient sent down to input ``i``, before broadcasting is undone
(the engine calls :func:`gradviz._broadcast.unbroadcast`, never the op).

A rule is written for numpy arrays, and the same rule gives second derivatives: under
``create_graph=True`` the engine calls it with :class:`gradviz._recorded.Recorded` tensors in
place of ``g``, ``y`` and the inputs, which turn what the rule does (``g * b``, ``-g``,
``np.where``, ``np.exp``, ``np.broadcast_to``, ``.T``...) into recorded ops of this same table, so
the gradient has a grad_fn and is differentiated by these rules again.  A rule that PyTorch
computes with an op of its own calls that entry with :func:`call` (``call("tanh_backward", g, y)``,
``call("mm", g, b.T)``): a plain forward on arrays, a recorded node (``TanhBackwardBackward0``)
on tensors; such entries say ``in_rules=True``.  Numpy the wrapper cannot record (``np.add.at``,
writing into an array) makes ``create_graph=True`` fail with a clear error naming the node.

``uses[i]`` says which values the rule for input ``i`` reads: ``"0"``, ``"1"``, ``"2"`` for inputs,
``"o"`` for the output.  The engine saves exactly those (only for inputs that need a grad),
so freeing them after ``backward()`` behaves like PyTorch's saved tensors.  A value that is
not saved reaches the rule as a :class:`Meta` carrying only its ``shape`` and ``dtype``.

In ``latex``, ``dlatex`` and ``symbol``, ``@0``/``@1`` stand for the inputs, ``@*`` for all of them
in order (a variadic op's ``[a, b, c]``), ``@y`` for the output and ``@name`` for a parameter; the graph
and the hand derivation fill them in.

An entry is the one place an op is described.  Besides the maths it says how a student reaches
the op (``method="atan", aliases=("arctan",), inplace=True, function=True``: ``x.atan()``,
``x.arctan()``, ``x.atan_()``, ``gradviz.atan(x)``, all made from the entry), what inputs the
table-driven tests draw (``inputs=``, ``domain=``, ``params=``), how the graph writes it
(``operand=``, ``coefficient_first=``, ``precedence=``, ``elementwise=``), and what its node shows as
``grad_fn._saved_self``, ``_saved_result``... (``saved=``, PyTorch's names for the values the rule
saves).  Adding an op is one ``op(...)`` call here; ``tests/test_op_coverage.py`` checks it is reachable wherever PyTorch has it.
"""

import math

import numpy as np

from . import _activation_ops, _blend_ops, _linalg_ops, _nn_ops, _strided, kernels  # noqa: F401 -- they declare the activations', addcmul and lerp, linalg, losses' and layers' entries
from ._op import OPS, Meta, Op, call, op
from ._rules import (_copy_slices, _by_count, _count, _diag_scatter, _evenly, _expand_reduced, _median_dim,
                     _median_index, _nonempty, _quiet, _scatter, _scatter_along, _sorted, _spread_evenly, _to_index,
                     _squeezed, _unrepeat, _winner, _zero_at)

__all__ = ["Op", "Meta", "OPS", "op", "call"]


# --- arithmetic -------------------------------------------------------------------------------

def _sub(a, b, alpha=1, out=None):
    """a − αb"""
    return np.subtract(a, b, out=out) if alpha == 1 else kernels.add(a, b, -alpha, out=out)


op("add", grad_fn="AddBackward0", symbol="+", forward=kernels.add,
   vjps=[lambda g, y, a, b, alpha=1: g, lambda g, y, a, b, alpha=1: g if alpha == 1 else g * alpha], uses=["", ""],
   latex="@0 + @1", dlatex=["1", "1"],
   method="add", inplace=True, writes_out=True, function=True, inputs="binary", precedence=1,
   saved={"alpha": "@alpha=1"}, category="elementwise")
op("sub", grad_fn="SubBackward0", symbol="−", forward=_sub,
   vjps=[lambda g, y, a, b, alpha=1: g, lambda g, y, a, b, alpha=1: -g if alpha == 1 else -g * alpha], uses=["", ""],
   latex="@0 - @1", dlatex=["1", "-1"],
   method="sub", aliases=("subtract",), inplace=True, writes_out=True, function=True, inputs="binary", precedence=1,
   saved={"alpha": "@alpha=1"}, category="elementwise")
op("rsub", grad_fn="RsubBackward1", symbol="−", forward=lambda a, c: np.subtract(c, a, dtype=a.dtype),
   vjps=[lambda g, y, a, c: -g], uses=[""],
   latex="@c - @0", dlatex=["-1"],
   params={"c": 2.0}, method="__rsub__", operand=("c", 0, "−"), precedence=1, saved={"alpha": "@alpha=1"},
   category="elementwise")
# a tensor plus or minus a number inside PyTorch's own formulas (``exponent - 1`` in pow's rule,
# ``-2y + 1`` in sigmoid's): add.Scalar and sub.Scalar, recorded under create_graph=True
op("add_scalar", grad_fn="AddBackward1", symbol="+", forward=lambda a, c: np.add(a, a.dtype.type(c)),
   vjps=[lambda g, y, a, c: g], uses=[""], latex="@0 + @c", dlatex=["1"],
   params={"c": 2.0}, in_rules=True, operand=("c", 1, "+"), precedence=1)
op("sub_scalar", grad_fn="SubBackward1", symbol="−", forward=lambda a, c: np.subtract(a, a.dtype.type(c)),
   vjps=[lambda g, y, a, c: g], uses=[""], latex="@0 - @c", dlatex=["1"],
   params={"c": 2.0}, in_rules=True, operand=("c", 1, "−"), precedence=1)
op("mul", grad_fn="MulBackward0", symbol="×", forward=np.multiply,
   vjps=[lambda g, y, a, b: g * b, lambda g, y, a, b: g * a], uses=["1", "0"],
   latex=r"@0 \cdot @1", dlatex=["@1", "@0"],
   method="mul", aliases=("multiply",), inplace=True, writes_out=True, function=True, inputs="binary", precedence=2,
   coefficient_first=True, saved={"self": 0, "other": 1}, category="elementwise")
op("div", grad_fn="DivBackward0", symbol="÷", forward=_quiet(np.divide),
   vjps=[lambda g, y, a, b: g / b, lambda g, y, a, b: -g * (a / b / b)], uses=["1", "01"],
   latex=r"\frac{@0}{@1}", dlatex=[r"\frac{1}{@1}", r"-\frac{@0}{@1^{2}}"],
   domain=(0.5, 3.0), method="div", aliases=("divide", "true_divide"), inplace=True, writes_out=True, function=True,
   inputs="binary", precedence=5, saved={"self": 0, "other": 1}, category="elementwise")
# --- rounded divisions ------------------------------------------------------------------------------
# ``//`` has no derivative in PyTorch: its node is a NotImplemented that fails when backward reaches
# it. ``%``, fmod and div(rounding_mode=...) have one (1 for the dividend, −⌊a/b⌋ or −trunc(a/b) for
# the divisor, 0 for a rounded quotient). The callers promote both operands first.

def _remainder(a, b):
    """a mod b with the sign of b, as PyTorch computes it (fmod, then shift by b)"""
    m = np.fmod(a, b)
    return np.where((m != 0) & ((m < 0) != (b < 0)), m + b, m).astype(a.dtype)


def _trunc_divide(a, b):
    """a / b rounded toward 0"""
    if a.dtype.kind == "f":
        return np.trunc(a / b)
    return (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(a.dtype)


def _not_implemented(aten):
    def rule(g, y, *arrays, **params):
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")
    return rule


_ROUNDED = {"floor": np.floor_divide, "trunc": _trunc_divide}


def _masked_scatter(g, a, mask):
    """The selected gradients back where they were taken, 0 elsewhere (the broadcast shape)."""
    shape = np.broadcast_shapes(a.shape, mask.shape)
    out = np.zeros(shape, g.dtype)
    out[np.broadcast_to(mask, shape)] = g
    return out

op("floor_divide", grad_fn="NotImplemented", symbol="//", forward=_quiet(lambda a, b: np.floor_divide(a, b)),
   vjps=[_not_implemented("floor_divide")] * 2, uses=["", ""],
   latex=r"\left\lfloor \frac{@0}{@1} \right\rfloor", dlatex=["?", "?"], inputs="rounded",
   method="floor_divide", function=True)
op("floor_divide_scalar", grad_fn="NotImplemented", symbol="//",
   forward=_quiet(lambda a, c, reverse=False: np.floor_divide(c, a) if reverse else np.floor_divide(a, c)),
   vjps=[_not_implemented("floor_divide")], uses=[""],
   latex=r"\left\lfloor \frac{@0}{@c} \right\rfloor", dlatex=["?"], params={"c": 2.0}, domain=(0.5, 3.0),
   function="floor_divide")
op("remainder", grad_fn="RemainderBackward1", symbol="mod", forward=_quiet(_remainder),
   vjps=[lambda g, y, a, b: g, lambda g, y, a, b: -g * np.floor_divide(a, b)], uses=["", "01"],
   latex=r"@0 \bmod @1", dlatex=["1", r"-\left\lfloor \frac{@0}{@1} \right\rfloor"], inputs="rounded",
   method="remainder", function=True)
op("remainder_scalar", grad_fn="RemainderBackward0", symbol="mod", forward=_quiet(lambda a, c: _remainder(a, c)),
   vjps=[lambda g, y, a, c: g], uses=[""],
   latex=r"@0 \bmod @c", dlatex=["1"], params={"c": 2.0}, domain=(0.1, 1.9), function="remainder")
op("rremainder", grad_fn="NotImplemented", symbol="mod", forward=_quiet(lambda a, c: _remainder(np.asarray(c, a.dtype), a)),
   vjps=[_not_implemented("remainder")], uses=[""],
   latex=r"@c \bmod @0", dlatex=["?"], params={"c": 2.0}, domain=(0.5, 3.0), function="remainder")
op("fmod", grad_fn="FmodBackward1", forward=_quiet(lambda a, b: np.fmod(a, b)),
   vjps=[lambda g, y, a, b: g, lambda g, y, a, b: -g * _trunc_divide(a, b)], uses=["", "01"],
   latex=r"\operatorname{fmod}(@0, @1)", dlatex=["1", r"-\operatorname{trunc}\frac{@0}{@1}"], inputs="rounded",
   method="fmod", function=True)
op("fmod_scalar", grad_fn="FmodBackward0", forward=_quiet(lambda a, c: np.fmod(a, np.asarray(c, a.dtype))),
   vjps=[lambda g, y, a, c: g], uses=[""],
   latex=r"\operatorname{fmod}(@0, @c)", dlatex=["1"], params={"c": 2.0}, domain=(0.1, 1.9), function="fmod")
op("div_rounding", grad_fn="DivBackward2", symbol="÷",
   forward=_quiet(lambda a, b, rounding_mode: np.asarray(_ROUNDED[rounding_mode](a, b), a.dtype)),
   vjps=[lambda g, y, a, b, rounding_mode: np.zeros_like(g)] * 2, uses=["", ""],
   latex=r"\operatorname{round}\left(\frac{@0}{@1}\right)", dlatex=["0", "0"], inputs="rounded",
   params={"rounding_mode": "floor"}, function="div")


# ATen's own composites divide by a C++ number (cross_entropy's mean over the batch): DivBackward1,
# one input, the number rounded to the tensor's dtype first
op("div_scalar", grad_fn="DivBackward1", symbol="÷", forward=_quiet(lambda a, c: a / a.dtype.type(c)),
   vjps=[lambda g, y, a, c: g / g.dtype.type(c)], uses=[""],
   latex=r"\frac{@0}{@c}", dlatex=[r"\frac{1}{@c}"], params={"c": 3},
   function="nn.functional.cross_entropy", precedence=5)
# ... and multiply by one (label smoothing's weights; ``3 * x.pow(2)`` in pow's rule under create_graph=True):
# MulBackward1, the number rounded to the dtype
op("mul_scalar", grad_fn="MulBackward1", symbol="×", forward=lambda a, c: a * a.dtype.type(c),
   vjps=[lambda g, y, a, c: g * g.dtype.type(c)], uses=[""],
   latex=r"@c \cdot @0", dlatex=["@c"], params={"c": 0.25},
   function="nn.functional.cross_entropy", precedence=2, coefficient_first=True, saved={"other": "@c"})
op("neg", grad_fn="NegBackward0", symbol="−", forward=np.negative,
   vjps=[lambda g, y, a: -g], uses=[""],
   latex="-@0", dlatex=["-1"],
   method="neg", aliases=("negative",), inplace=True, function=True, precedence=2,
   category="elementwise", numpy=np.negative)
op("reciprocal", grad_fn="ReciprocalBackward0", symbol="1/x", forward=_quiet(np.reciprocal),
   vjps=[lambda g, y, a: -g * (y * y)], uses=["o"],
   latex=r"\frac{1}{@0}", dlatex=[r"-\frac{1}{@0^{2}}"],
   domain=(0.5, 3.0), method="reciprocal", inplace=True, function=True, precedence=5, saved={"result": "o"},
   category="elementwise", numpy=np.reciprocal)


op("pow", grad_fn="PowBackward0", symbol="^@n", forward=kernels.pow,
   vjps=[lambda g, y, a, n: g * (np.asarray(n, g.dtype) * call("pow", a, n=n - 1)) if n != 0 else 0 * g], uses=["0"],
   latex="@0^{@n}", dlatex=["@n @0^{@n - 1}"],
   domain=(0.5, 3.0), params={"n": 2}, method="pow", inplace=True, function=True, operand=("n", 1, "^"),
   precedence=3, saved={"self": 0, "exponent": "@n"}, category="elementwise")
op("pow_tt", grad_fn="PowBackward1", symbol="^", forward=kernels.pow_tensor,
   vjps=[lambda g, y, a, b: np.where(b == 0, 0, g * (b * call("pow_tt", a, b - 1))),
    lambda g, y, a, b: g * np.where((a == 0) & (b >= 0), 0, y * kernels.log(a))], uses=["01", "01o"],   # PyTorch's masks
   latex="@0^{@1}", dlatex=["@1 @0^{@1 - 1}", r"@0^{@1} \ln @0"],
   domain=(0.5, 2.0), method="pow", inputs="binary", precedence=3, saved={"self": 0, "exponent": 1, "result": "o"},
   category="elementwise")
op("rpow", grad_fn="PowBackward2", symbol="c^x", forward=lambda a, c: kernels.pow_tensor(np.asarray(c, a.dtype), a),
   # PyTorch's pow_backward_exponent: g · c^x ln c (ln c in double, then rounded), and 0 where c = 0 and
   # x >= 0 (not 0 · -inf); it keeps the exponent too, so writing into it in place is caught at backward
   vjps=[lambda g, y, a, c: g * (np.where(a >= 0, 0, y * -np.inf) if c == 0 else y * y.dtype.type(math.log(c)))],
   uses=["0o"], latex="@c^{@0}", dlatex=[r"@c^{@0} \ln @c"],
   params={"c": 2.0}, method="__rpow__", operand=("c", 0, "^"), precedence=3,
   contiguous=True,     # (torch.pow(c, x) allocates its result row-major, whatever x's layout)
   saved={"self": "@c", "exponent": 0, "result": "o"}, category="elementwise")

# --- elementwise functions --------------------------------------------------------------------

op("exp", grad_fn="ExpBackward0", forward=kernels.exp,
   vjps=[lambda g, y, a: g * y], uses=["o"],
   latex="e^{@0}", dlatex=["e^{@0}"],
   method="exp", inplace=True, function=True, saved={"result": "o"}, category="elementwise", numpy=np.exp)
op("log", grad_fn="LogBackward0", forward=kernels.log,
   vjps=[lambda g, y, a: g / a], uses=["0"],
   latex=r"\ln @0", dlatex=[r"\frac{1}{@0}"],
   domain=(0.2, 3.0), method="log", inplace=True, function=True, saved={"self": 0},
   category="elementwise", latex_fn=r"\ln", numpy=np.log)
op("sqrt", grad_fn="SqrtBackward0", symbol="√", forward=kernels.sqrt,
   vjps=[lambda g, y, a: g / (2 * y)], uses=["o"],
   latex=r"\sqrt{@0}", dlatex=[r"\frac{1}{2\sqrt{@0}}"],
   domain=(0.2, 3.0), method="sqrt", inplace=True, function=True, precedence=5, saved={"result": "o"},
   category="elementwise", numpy=np.sqrt)


def _sign(a):
    """−1, 0 or 1 (0 for nan, as PyTorch's sign and sgn: so abs sends no nan down from a nan input)"""
    return np.where(np.isnan(a), 0, np.sign(a)).astype(a.dtype)


op("abs", grad_fn="AbsBackward0", forward=np.abs,
   vjps=[lambda g, y, a: g * _sign(a)], uses=["0"],
   latex=r"\left|@0\right|", dlatex=[r"\operatorname{sign}(@0)"],
   domain=(0.1, 3.0), method="abs", aliases=("absolute",), inplace=True, function=True, integers="same",
   precedence=5, saved={"self": 0}, category="elementwise", numpy=np.absolute)
op("sin", grad_fn="SinBackward0", forward=kernels.sin,
   vjps=[lambda g, y, a: g * kernels.cos(a)], uses=["0"],
   latex=r"\sin @0", dlatex=[r"\cos @0"],
   method="sin", inplace=True, function=True, saved={"self": 0}, category="elementwise", latex_fn=r"\sin", numpy=np.sin)
op("cos", grad_fn="CosBackward0", forward=kernels.cos,
   vjps=[lambda g, y, a: g * -kernels.sin(a)], uses=["0"],
   latex=r"\cos @0", dlatex=[r"-\sin @0"],
   method="cos", inplace=True, function=True, saved={"self": 0}, category="elementwise", latex_fn=r"\cos", numpy=np.cos)
op("tanh", grad_fn="TanhBackward0", forward=kernels.tanh,
   vjps=[lambda g, y, a: call("tanh_backward", g, y)], uses=["o"],
   latex=r"\tanh @0", dlatex=[r"1 - \tanh^{2} @0"],
   method="tanh", inplace=True, function=True, saved={"result": "o"},
   category="elementwise", latex_fn=r"\tanh", numpy=np.tanh)
def _sigmoid64(a):
    """1 / (1 + e^{−a}), as a derivation computes it (float64, no PyTorch rounding)"""
    return 1 / (1 + np.exp(-a))


op("sigmoid", grad_fn="SigmoidBackward0", symbol="σ", forward=kernels.sigmoid,
   vjps=[lambda g, y, a: call("sigmoid_backward", g, y)], uses=["o"],
   latex=r"\sigma(@0)", dlatex=[r"\sigma(@0)\,(1 - \sigma(@0))"],
   method="sigmoid", inplace=True, function=True, saved={"result": "o"},
   category="elementwise", latex_fn=r"\sigma", numpy=_sigmoid64)


_SAME_WIDTH_INT = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}


def _zero_where(drop, x):
    """``x`` with +0 where ``drop`` (a bool array laid out as x) holds, made on the bits: x's bits
    and-ed with all ones where kept, zeros where dropped.  numpy's ``where`` is several times slower
    with a mask that changes at random (ReLU's gradient: 5.3 -> 1.2 ms at 1M elements)."""
    ints = _SAME_WIDTH_INT[x.dtype]
    mask = drop.astype(ints)       # 1 where dropped
    mask -= 1                      # then 0 where dropped, all ones where kept
    mask &= x.view(ints)
    return mask.view(x.dtype)


_SMALL_RELU = 4096      # elements: below, the select is quicker than maximum and the search for -0s


def _relu(a):
    """PyTorch's clamp_min(a, 0): a where a < 0 is false (so nan and -0 stay), else +0.  numpy's
    maximum is that but for -0, which its vector loop turns into +0: those are put back (rare, and
    found by one integer comparison, where a select on the bits would take three passes more).
    A lesson's few floats take the select itself, one comparison and one np.where: fewer calls."""
    if a.size <= _SMALL_RELU and a.dtype.kind == "f":
        return np.where(a < 0, a.dtype.type(0), a)
    out = np.maximum(a, 0)
    ints = _SAME_WIDTH_INT.get(a.dtype)
    if ints is not None:
        negative_zero = a.view(ints) == np.iinfo(ints).min
        if negative_zero.any():
            out = np.where(negative_zero, a, out)
    return out.astype(a.dtype, copy=False)


def _threshold_backward(g, y):
    """PyTorch's kernel: 0 where y <= 0, else g -- a choice, not a product (inf · 0 would be nan), and
    a nan output (nan <= 0 is false) passes the gradient on."""
    if g.size > _SMALL_RELU and g.dtype in _SAME_WIDTH_INT and g.strides == y.strides and g.shape == y.shape:
        return _zero_where(np.less_equal(y, 0), g)      # (a lesson's few: np.where, two calls, not five)
    return np.where(y <= 0, 0, g).astype(g.dtype, copy=False)


op("relu", grad_fn="ReluBackward0", symbol="ReLU", forward=_relu,
   vjps=[lambda g, y, a: call("threshold_backward", g, y)], uses=["o"],
   latex=r"\max(0, @0)", dlatex=[r"\mathbb{1}[@0 > 0]"],
   domain=(0.1, 3.0), method="relu", inplace=True, function=True, integers="same", saved={"result": "o"},
   category="elementwise")

# PyTorch computes these three gradients with ops of their own (tanh_backward, sigmoid_backward,
# threshold_backward): under create_graph=True a gradient shows them (TanhBackwardBackward0), and
# their own rules (derivatives.yaml's) give the second derivative
op("tanh_backward", grad_fn="TanhBackwardBackward0", symbol="∂tanh",
   forward=kernels.tanh_backward,
   vjps=[lambda gg, o, g, y: call("tanh_backward", gg, y), lambda gg, o, g, y: gg * (-2 * y * g)], uses=["1", "01"],
   latex=r"@0 (1 - @1^{2})", dlatex=[r"1 - @1^{2}", r"-2 @1 @0"], inputs="binary", in_rules=True,
   saved={"grad_output": 0, "output": 1})
op("sigmoid_backward", grad_fn="SigmoidBackwardBackward0", symbol="∂σ", forward=lambda g, y: g * (1 - y) * y,
   vjps=[lambda gg, o, g, y: call("sigmoid_backward", gg, y), lambda gg, o, g, y: gg * g * (-2 * y + 1)],
   uses=["1", "01"], latex=r"@0 (1 - @1) @1", dlatex=[r"(1 - @1) @1", r"@0 (1 - 2 @1)"], inputs="binary",
   in_rules=True, saved={"grad_output": 0, "output": 1})
op("threshold_backward", grad_fn="ThresholdBackwardBackward0", symbol="∂ReLU",
   forward=_threshold_backward,
   vjps=[lambda gg, o, g, y: call("threshold_backward", gg, y), lambda gg, o, g, y: np.zeros_like(gg)],
   uses=["1", ""], latex=r"@0 \mathbb{1}[@1 > 0]", dlatex=[r"\mathbb{1}[@1 > 0]", "0"], inputs="binary",
   domain=(0.1, 3.0), in_rules=True, saved={"self": 1, "threshold": "@threshold=0"})
op("clamp", grad_fn="ClampBackward1", forward=lambda a, lo, hi: np.clip(a, lo, hi).astype(a.dtype),
   vjps=[lambda g, y, a, lo, hi: np.where((lo is None or a >= lo) & (hi is None or a <= hi), g, 0)], uses=["0"],
   latex=r"\operatorname{clamp}(@0, @lo, @hi)", dlatex=[r"\mathbb{1}[@lo \le @0 \le @hi]"],
   params={"lo": -1.0, "hi": 1.0}, method="clamp", aliases=("clip",), inplace=True, function=True,
   saved={"self": 0, "min": "@lo", "max": "@hi"}, category="elementwise")
# x.clamp_min(c), x.clamp_max(c) with a number: a node of their own (clamp(min=c) is ClampBackward1)
op("clamp_min", grad_fn="ClampMinBackward0", forward=lambda a, min: np.clip(a, min, None).astype(a.dtype),
   vjps=[lambda g, y, a, min: np.where(a >= min, g, 0)], uses=["0"],
   latex=r"\max(@0, @min)", dlatex=[r"\mathbb{1}[@0 \ge @min]"], params={"min": -0.5}, method="clamp_min",
   function=True, saved={"self": 0, "min": "@min"}, category="elementwise")
op("clamp_max", grad_fn="ClampMaxBackward0", forward=lambda a, max: np.clip(a, None, max).astype(a.dtype),
   vjps=[lambda g, y, a, max: np.where(a <= max, g, 0)], uses=["0"],
   latex=r"\min(@0, @max)", dlatex=[r"\mathbb{1}[@0 \le @max]"], params={"max": 0.5}, method="clamp_max",
   function=True, saved={"self": 0, "max": "@max"}, category="elementwise")


def _steps(key, f, symbol, doc, integers="copy", **how):
    """A piecewise-constant function: its derivative is 0 wherever it exists."""
    op(key, grad_fn=key.capitalize() + "Backward0", symbol=symbol, forward=f, doc=doc,
       vjps=[lambda g, y, a, **_: np.zeros_like(g)], uses=[""],
       latex=rf"\operatorname{{{key}}}(@0)", dlatex=["0"],
       method=key, inplace=True, function=True, integers=integers, inputs="steps", category="elementwise", **how)


_steps("round", lambda a, decimals=0: np.round(a, decimals), "round", "round half to even")
_steps("floor", np.floor, "⌊x⌋", "the largest integer ≤ x", numpy=np.floor)
_steps("ceil", np.ceil, "⌈x⌉", "the smallest integer ≥ x", numpy=np.ceil)
_steps("trunc", np.trunc, "trunc", "x rounded toward 0", numpy=np.trunc)
_steps("sign", _sign, "sign", "−1, 0 or 1 (0 for nan)", integers="same", latex_fn=r"\operatorname{sign}",
       numpy=np.sign)

_log1p, _expm1, _sinh, _cosh = (kernels.in_double(f) for f in (np.log1p, np.expm1, np.sinh, np.cosh))

op("log1p", grad_fn="Log1PBackward0", forward=_log1p,
   vjps=[lambda g, y, a: g / (a + 1)], uses=["0"],
   latex=r"\ln(1 + @0)", dlatex=[r"\frac{1}{1 + @0}"],
   domain=(0.0, 3.0), method="log1p", inplace=True, function=True, saved={"self": 0},
   category="elementwise", numpy=np.log1p)
op("expm1", grad_fn="Expm1Backward0", forward=_expm1,
   vjps=[lambda g, y, a: g * (y + 1)], uses=["o"],
   latex=r"e^{@0} - 1", dlatex=[r"e^{@0}"],
   method="expm1", inplace=True, function=True, saved={"result": "o"}, category="elementwise", numpy=np.expm1)
op("rsqrt", grad_fn="RsqrtBackward0", symbol="1/√", forward=_quiet(lambda a: 1 / np.sqrt(a)),
   vjps=[lambda g, y, a: -0.5 * g * y * y * y], uses=["o"],
   latex=r"\frac{1}{\sqrt{@0}}", dlatex=[r"-\frac{1}{2 @0^{3/2}}"],
   domain=(0.2, 3.0), method="rsqrt", inplace=True, function=True, saved={"result": "o"}, category="elementwise")
op("tan", grad_fn="TanBackward0", forward=kernels.tan,
   vjps=[lambda g, y, a: g * (1 + y * y)], uses=["o"],
   latex=r"\tan @0", dlatex=[r"1 + \tan^{2} @0"],
   domain=(-1.2, 1.2), method="tan", inplace=True, function=True, saved={"result": "o"},
   category="elementwise", latex_fn=r"\tan", numpy=np.tan)

op("atan", grad_fn="AtanBackward0", forward=kernels.atan,
   vjps=[lambda g, y, a: g / (a * a + 1)], uses=["0"],
   latex=r"\arctan @0", dlatex=[r"\frac{1}{1 + @0^{2}}"],
   method="atan", aliases=("arctan",), inplace=True, function=True, saved={"self": 0},
   category="elementwise", latex_fn=r"\arctan", numpy=np.arctan)
op("asin", grad_fn="AsinBackward0", forward=kernels.asin,
   vjps=[lambda g, y, a: g * kernels.in_double(lambda t: 1 / np.sqrt(1 - t * t))(a)], uses=["0"],
   latex=r"\arcsin @0", dlatex=[r"\frac{1}{\sqrt{1 - @0^{2}}}"],
   domain=(-0.9, 0.9), method="asin", aliases=("arcsin",), inplace=True, function=True, saved={"self": 0},
   category="elementwise", latex_fn=r"\arcsin", numpy=np.arcsin)
op("acos", grad_fn="AcosBackward0", forward=kernels.acos,
   vjps=[lambda g, y, a: g * kernels.in_double(lambda t: -1 / np.sqrt(1 - t * t))(a)], uses=["0"],
   latex=r"\arccos @0", dlatex=[r"-\frac{1}{\sqrt{1 - @0^{2}}}"],
   domain=(-0.9, 0.9), method="acos", aliases=("arccos",), inplace=True, function=True, saved={"self": 0},
   category="elementwise", latex_fn=r"\arccos", numpy=np.arccos)

op("erf", grad_fn="ErfBackward0", forward=kernels.erf,   # 2/√π · e^{−x²} · g, in PyTorch's order
   vjps=[lambda g, y, a: np.asarray(2 / math.sqrt(math.pi), a.dtype) * kernels.exp(-(a * a)) * g], uses=["0"],
   latex=r"\operatorname{erf} @0", dlatex=[r"\frac{2}{\sqrt{\pi}} e^{-@0^{2}}"],
   method="erf", inplace=True, function=True, saved={"self": 0},
   latex_fn=r"\operatorname{erf}", numpy=np.vectorize(math.erf, otypes=[np.float64]))   # (GELU's derivative reads erf)
op("sinh", grad_fn="SinhBackward0", forward=_sinh,
   vjps=[lambda g, y, a: g * _cosh(a)], uses=["0"],
   latex=r"\sinh @0", dlatex=[r"\cosh @0"],
   method="sinh", inplace=True, function=True, saved={"self": 0},
   category="elementwise", latex_fn=r"\sinh", numpy=np.sinh)
op("cosh", grad_fn="CoshBackward0", forward=_cosh,
   vjps=[lambda g, y, a: g * _sinh(a)], uses=["0"],
   latex=r"\cosh @0", dlatex=[r"\sinh @0"],
   method="cosh", inplace=True, function=True, saved={"self": 0},
   category="elementwise", latex_fn=r"\cosh", numpy=np.cosh)
op("log2", grad_fn="Log2Backward0", symbol="log₂", forward=kernels.log2,
   vjps=[lambda g, y, a: g / (a * np.log(np.asarray(2.0, a.dtype)))], uses=["0"],
   latex=r"\log_2 @0", dlatex=[r"\frac{1}{@0 \ln 2}"],
   domain=(0.2, 3.0), method="log2", inplace=True, function=True, saved={"self": 0},
   category="elementwise", latex_fn=r"\log_{2}", numpy=np.log2)
op("log10", grad_fn="Log10Backward0", symbol="log₁₀", forward=kernels.log10,
   vjps=[lambda g, y, a: g / (a * np.log(np.asarray(10.0, a.dtype)))], uses=["0"],
   latex=r"\log_{10} @0", dlatex=[r"\frac{1}{@0 \ln 10}"],
   domain=(0.2, 3.0), method="log10", inplace=True, function=True, saved={"self": 0},
   category="elementwise", latex_fn=r"\log_{10}", numpy=np.log10)


def _xlogy(a, b):
    """x·log(y), 0 where x == 0 (even for y 0 or ∞), nan where y is: PyTorch's scalar loop with the C library's log"""
    dtype = np.result_type(a, b)
    a, b = np.asarray(a, dtype), np.asarray(b, dtype)
    with np.errstate(all="ignore"):
        log = kernels.c_log(b)
        if dtype == np.float64:      # (log of a negative double: torch's nan has no sign bit, measured; glibc's has)
            log = np.where(b < 0, dtype.type(np.nan), log)
        return np.where(np.isnan(b), dtype.type(np.nan), np.where(a == 0, dtype.type(0), a * log))


def _xlogy_vjp(g, a, b):
    """xlogy(g, y), 0 where x == 0 and y <= 0 (PyTorch's choice there: the derivative along x = 0)"""
    return np.where((a == 0) & (b <= 0), np.result_type(g, b).type(0), _xlogy(g, b))


# (its gradient for x is g · log y, for y g · x / y, as PyTorch's derivatives.yaml writes them)
op("xlogy", grad_fn="XlogyBackward0", forward=_xlogy,
   vjps=[lambda g, y, a, b: _xlogy_vjp(g, a, b), lambda g, y, a, b: g * a / b], uses=["01", "01"],
   latex=r"@0 \ln @1", dlatex=[r"\ln @1", r"\frac{@0}{@1}"], domain=(0.5, 3.0),
   method="xlogy", inplace=True, function=True, inputs="binary", saved={"self": 0, "other": 1}, category="elementwise")
op("maximum", grad_fn="MaximumBackward0", symbol="max", forward=np.maximum,
   vjps=[lambda g, y, a, b: _winner(a, b, g, np.greater), lambda g, y, a, b: _winner(b, a, g, np.greater)], uses=["01", "01"],
   latex=r"\max(@0, @1)", dlatex=[r"\mathbb{1}[@0 > @1]", r"\mathbb{1}[@1 > @0]"],
   method="maximum", function=True, inputs="binary", saved={"self": 0, "other": 1}, category="elementwise")
op("minimum", grad_fn="MinimumBackward0", symbol="min", forward=np.minimum,
   vjps=[lambda g, y, a, b: _winner(a, b, g, np.less), lambda g, y, a, b: _winner(b, a, g, np.less)], uses=["01", "01"],
   latex=r"\min(@0, @1)", dlatex=[r"\mathbb{1}[@0 < @1]", r"\mathbb{1}[@1 < @0]"],
   method="minimum", function=True, inputs="binary", saved={"self": 0, "other": 1}, category="elementwise")
op("masked_fill", grad_fn="MaskedFillBackward0", symbol="fill", forward=lambda a, mask, value: np.where(mask, value, a).astype(a.dtype),
   vjps=[lambda g, y, a, mask, value: np.where(mask, 0, g)], uses=[""],
   latex=r"@0 \text{ where not mask}", dlatex=[r"\mathbb{1}[\lnot \text{mask}]"],
   params={"mask": np.array([True, False]), "value": 0.0}, method="masked_fill", inplace=True, function=True,
   contiguous=True,     # (PyTorch's masked_fill clones row-major, then fills)
   inputs="masked_fill")

op("masked_select", grad_fn="MaskedSelectBackward0", symbol="select",
   forward=lambda a, mask: np.broadcast_to(a, np.broadcast_shapes(a.shape, mask.shape))[
       np.broadcast_to(mask, np.broadcast_shapes(a.shape, mask.shape))],
   vjps=[lambda g, y, a, mask: _masked_scatter(g, a, mask)], uses=[""],
   latex=r"@0[\text{mask}]", dlatex=[r"\mathbb{1}[\text{mask}]"],
   params={"mask": np.array([True, False])}, method="masked_select", function=True, inputs="masked_fill",
   elementwise=False, saved={"mask": "@mask"})

# --- reductions -------------------------------------------------------------------------------

op("sum", grad_fn="SumBackward0", symbol="Σ", forward=lambda a, dim=None, keepdim=False: kernels.sum(a, axis=dim, keepdims=keepdim),
   vjps=[lambda g, y, a, dim=None, keepdim=False: _expand_reduced(g, a.shape, dim, keepdim)], uses=[""],
   latex=r"\sum @0", dlatex=["1"],
   method="sum", function=True, inputs="reduce_all", saved={"self_sym_sizes": "#0"}, category="reduction")
op("mean", grad_fn="MeanBackward0", forward=lambda a, dim=None, keepdim=False: kernels.mean(a, axis=dim, keepdims=keepdim),
   vjps=[lambda g, y, a, dim=None, keepdim=False: _spread_evenly(g, a.shape, dim, keepdim)], uses=[""],
   latex=r"\frac{1}{n}\sum @0", dlatex=[r"\frac{1}{n}"],
   method="mean", function=True, inputs="reduce_all", saved={"self_sym_numel": "%0", "self_sym_sizes": "#0"},
   category="reduction")
op("amax", grad_fn="MaxBackward1", symbol="max", forward=lambda a, dim=None, keepdim=False: np.max(a, axis=dim, keepdims=keepdim),
   vjps=[lambda g, y, a, dim=None, keepdim=False: _evenly(g, a, y, dim, keepdim)], uses=["0o"],
   latex=r"\max @0", dlatex=[r"\mathbb{1}[@0 = \max @0]"],
   method="max", function=True, inputs="reduce_all", saved={"self": 0, "result": "o"})
op("amin", grad_fn="MinBackward1", symbol="min", forward=lambda a, dim=None, keepdim=False: np.min(a, axis=dim, keepdims=keepdim),
   vjps=[lambda g, y, a, dim=None, keepdim=False: _evenly(g, a, y, dim, keepdim)], uses=["0o"],
   latex=r"\min @0", dlatex=[r"\mathbb{1}[@0 = \min @0]"],
   method="min", function=True, inputs="reduce_all", saved={"self": 0, "result": "o"})
_REDUCED_SAVES = {"dim": "@dim", "keepdim": "@keepdim", "self": 0, "result": "o"}   # (amax, amin, prod over dims)
# x.amax(dim): its own node, the gradient shared among ties as PyTorch's scale_grad_by_count shares it:
# (g / count) · mask, so a nan gradient reaches every element (nan · 0) and a nan maximum none of them
# (dims: a tuple, every dim if none)
op("amax_dims", grad_fn="AmaxBackward0", symbol="max", forward=lambda a, dim, keepdim=False: np.max(a, axis=dim, keepdims=keepdim),
   vjps=[lambda g, y, a, dim, keepdim=False: _by_count(g, a, y, dim, keepdim)], uses=["0o"],
   latex=r"\max @0", dlatex=[r"\mathbb{1}[@0 = \max @0]"],
   method="amax", function=True, inputs="reduce_dim", params={"dim": (0,)}, along_dim=True, saved=_REDUCED_SAVES)
op("amin_dims", grad_fn="AminBackward0", symbol="min", forward=lambda a, dim, keepdim=False: np.min(a, axis=dim, keepdims=keepdim),
   vjps=[lambda g, y, a, dim, keepdim=False: _by_count(g, a, y, dim, keepdim)], uses=["0o"],
   latex=r"\min @0", dlatex=[r"\mathbb{1}[@0 = \min @0]"],
   method="amin", function=True, inputs="reduce_dim", params={"dim": (0,)}, along_dim=True, saved=_REDUCED_SAVES)
op("median", grad_fn="MedianBackward0", forward=lambda a: np.sort(a, axis=None)[(a.size - 1) // 2]
   if not np.isnan(a).any() else np.asarray(np.nan, a.dtype),
   vjps=[lambda g, y, a: _evenly(g, a, y)], uses=["0o"],   # ties share the gradient, as for max
   latex=r"\operatorname{median} @0", dlatex=[r"\mathbb{1}[@0 = \operatorname{median} @0]"],
   method="median", function=True, inputs="reduce_all")
# max/min/median along a dim: the gradient goes where the indices point; PyTorch keeps those (``index``,
# dims kept, worked out at the forward pass), not the input, so writing into the input later is fine
op("median_dim", grad_fn="MedianBackward1", symbol="median", forward=lambda a, dim, keepdim=False, index=None:
   _median_dim(a, dim, keepdim),
   vjps=[lambda g, y, a, dim, keepdim=False, index=None:
    _to_index(g, a.shape, _median_index(a, dim) if index is None else index, dim, keepdim)], uses=[""],
   latex=r"\operatorname{median} @0", dlatex=[r"\mathbb{1}[@0 = \operatorname{median} @0]"],
   params={"dim": 0}, method="median", function=True, inputs="reduce_dim", along_dim=True,
   saved={"dim": "@dim", "keepdim": "@keepdim", "self_sym_sizes": "#0"})


def _extreme_dim(key, grad_fn, name, reduce, arg):
    """max(dim) / min(dim): the values, and the gradient sent to where each one was (the indices
    found at the forward pass, ``index``, as PyTorch keeps them)."""
    op(key, grad_fn=grad_fn, symbol=name,
       forward=lambda a, dim, keepdim=False, index=None: reduce(a, axis=dim, keepdims=keepdim),
       vjps=[lambda g, y, a, dim, keepdim=False, index=None:
             _to_index(g, a.shape, arg(a, axis=dim, keepdims=True) if index is None else index, dim, keepdim)],
       uses=[""], latex=rf"\{name} @0", dlatex=[rf"\mathbb{{1}}[@0 = \{name} @0]"],
       params={"dim": 0}, method=name, function=True, inputs="reduce_dim", along_dim=True,
       saved={"dim": "@dim", "keepdim": "@keepdim", "self_sym_sizes": "#0"})


_extreme_dim("max_dim", "MaxBackward0", "max", np.max, np.argmax)
_extreme_dim("min_dim", "MinBackward0", "min", np.min, np.argmin)


def _vector_norm(a, ord=2, dim=None, keepdim=False, dtype=None):
    """‖x‖_p = (Σ |x_i|^p)^{1/p}; p = ∞ is max |x_i|, p = 0 counts the nonzeros"""
    return kernels.norm(a if dtype is None else a.astype(dtype), ord, dim, keepdim)


def _vector_norm_vjp(g, y, a, ord=2, dim=None, keepdim=False, dtype=None):
    """PyTorch's norm_backward, case by case (0 where the norm is 0; none at all for p = 0):
    p = 2: g·x/‖x‖; p = 1: g·sgn x; p = ±∞: g shared among the |x_i| equal to the norm;
    other p: g·sgn(x)|x|^{p-1} / ‖x‖^{p-1}."""
    if a.ndim == 0:
        dim = None
    g, y = _expand_reduced(g, a.shape, dim, keepdim), _expand_reduced(y, a.shape, dim, keepdim)
    p = float(ord)
    if p == 0:
        return None
    if p == 1:
        return _sign(a) * g
    if p == 2:
        return g * np.where(y == 0, 0, a / y)
    if math.isinf(p):
        size = np.abs(a)
        mask = (size == y) | np.isnan(size)
        count = np.asarray(mask.sum(axis=dim, keepdims=True), g.dtype)    # (a float count: g stays float32)
        return _sign(a) * ((g / count) * mask)
    if p < 1:
        scaled = _sign(a) * np.where(a == 0, 0, call("pow", np.abs(a), n=p - 1))
        return scaled * g * call("pow", y, n=1 - p)
    scaled = _sign(a) * call("pow", np.abs(a), n=p - 1) if p < 2 else a * call("pow", np.abs(a), n=p - 2)
    return scaled * np.where(y == 0, 0, g / call("pow", y, n=p - 1))


op("norm", grad_fn="LinalgVectorNormBackward0", symbol="‖·‖", forward=_vector_norm,
   vjps=[_vector_norm_vjp], uses=["0o"],
   latex=r"\lVert @0 \rVert", dlatex=[r"\frac{@0}{\lVert @0 \rVert}"],
   domain=(0.5, 3.0), method="norm", function=True, inputs="norm",
   saved={"dim": "@dim", "keepdim": "@keepdim", "ord": "@ord=2", "result": "o", "self": 0})



def _variance(a, dim=None, correction=1, keepdim=False):
    """Var(x) = Σ (x - x̄)² / (n - correction)"""
    with np.errstate(divide="ignore", invalid="ignore"):
        var = kernels.in_double(lambda t: np.var(t, axis=dim, ddof=correction, keepdims=keepdim))
        return np.asarray(var(a), a.dtype)


def _std(a, dim=None, correction=1, keepdim=False):
    """σ(x) = √Var(x)"""
    with np.errstate(divide="ignore", invalid="ignore"):
        std = kernels.in_double(lambda t: np.std(t, axis=dim, ddof=correction, keepdims=keepdim))
        return np.asarray(std(a), a.dtype)


def _var_vjp(g, a, dim, correction, keepdim):
    """∂Var/∂x_i = 2 (x_i − x̄) / (n − correction), multiplied in PyTorch's order."""
    mean = kernels.mean(a, axis=dim, keepdims=True)
    with np.errstate(divide="ignore"):  # n = correction: inf, as in PyTorch (a warning there)
        scale = np.asarray(np.float64(2.0) / (_count(a.shape, dim) - correction), g.dtype)
    return scale * _expand_reduced(g, a.shape, dim, keepdim) * (a - mean)


op("var", grad_fn="VarBackward0", forward=_variance,
   vjps=[lambda g, y, a, dim=None, correction=1, keepdim=False: _var_vjp(g, a, dim, correction, keepdim)], uses=["0"],
   latex=r"\operatorname{Var}(@0)", dlatex=[r"\frac{2 (@0 - \bar{@0})}{n - 1}"],
   params={"correction": 1}, method="var", function=True, inputs="moments", along_dim=True,
   saved={"dim": "@dim", "keepdim": "@keepdim", "self": 0})
op("std", grad_fn="StdBackward0", forward=_std,   # through Var: ∂σ = ∂Var / 2σ, and 0 where σ = 0 (as PyTorch)
   vjps=[lambda g, y, a, dim=None, correction=1, keepdim=False:
    _var_vjp(np.where(y == 0, 0, g / (y * 2)), a, dim, correction, keepdim)], uses=["0o"],   # (even a nan g)
   latex=r"\sigma(@0)", dlatex=[r"\frac{@0 - \bar{@0}}{(n - 1)\,\sigma}"],
   params={"correction": 1}, method="std", function=True, inputs="moments", along_dim=True, saved=_REDUCED_SAVES)


def _prod_others(a, dim):
    """For each element, the product of all the others along ``dim`` (no division: zeros are fine)."""
    flat = a.reshape(-1) if dim is None else np.moveaxis(a, dim, -1)
    ones = np.ones(flat.shape[:-1] + (1,), a.dtype)
    left = np.cumprod(np.concatenate((ones, flat[..., :-1]), axis=-1), axis=-1)
    right = np.cumprod(np.concatenate((ones, flat[..., :0:-1]), axis=-1), axis=-1)[..., ::-1]
    others = left * right
    return others.reshape(a.shape) if dim is None else np.moveaxis(others, -1, dim)


def _prod_vjp(g, y, a, dim, keepdim):
    """∂Π/∂x_i = Π / x_i (g · y / x, as PyTorch computes it), or the product of the others where a
    zero makes that a division by zero."""
    if np.ndim(a) == 0:        # PyTorch's prod_backward passes a 0-d input's gradient through (no y / x)
        return g
    g, y = _expand_reduced(g, a.shape, dim, keepdim), _expand_reduced(y, a.shape, dim, keepdim)
    if not (a == 0).any():
        with np.errstate(all="ignore"):
            return g * (y / a)
    return g * _prod_others(a, dim)


op("prod", grad_fn="ProdBackward0", symbol="Π", forward=lambda a: np.asarray(np.prod(a), a.dtype),
   vjps=[lambda g, y, a: _prod_vjp(g, y, a, None, False)], uses=["0o"],
   latex=r"\prod @0", dlatex=[r"\prod_{j \ne i} @0_j"],
   method="prod", function=True, inputs="reduce_all", saved={"self": 0, "result": "o"})
op("prod_dim", grad_fn="ProdBackward1", symbol="Π", forward=lambda a, dim, keepdim=False: np.prod(a, axis=dim, keepdims=keepdim),
   vjps=[lambda g, y, a, dim, keepdim=False: _prod_vjp(g, y, a, dim, keepdim)], uses=["0o"],
   latex=r"\prod @0", dlatex=[r"\prod_{j \ne i} @0_j"],
   params={"dim": 0}, method="prod", function=True, inputs="reduce_dim", along_dim=True, saved=_REDUCED_SAVES)
_prod_along = OPS["prod_dim"].vjps[0]      # (along_dim shows the rule a 0-d input as one element: ask first)
OPS["prod_dim"] = OPS["prod_dim"].renamed("ProdBackward1", vjps=(lambda g, y, a, dim, keepdim=False:
                                          g if np.ndim(a) == 0 else _prod_along(g, y, a, dim=dim, keepdim=keepdim),))


op("softmax", grad_fn="SoftmaxBackward0", forward=_nonempty(kernels.softmax),
   vjps=[lambda g, y, a, dim: call("softmax_backward", g, y, dim=dim)], uses=["o"],
   latex=r"\operatorname{softmax}(@0)", dlatex=[r"\operatorname{diag}(y) - y y^{T}"],
   params={"dim": -1}, method="softmax", function=True, inputs="softmax", along_dim=True, contiguous=True,
   saved={"dim": "@dim", "result": "o"})
op("log_softmax", grad_fn="LogSoftmaxBackward0", symbol="log softmax", forward=_nonempty(kernels.log_softmax),
   vjps=[lambda g, y, a, dim: call("log_softmax_backward", g, y, dim=dim)], uses=["o"],
   latex=r"\log \operatorname{softmax}(@0)", dlatex=[r"I - \mathbf{1} \operatorname{softmax}(@0)^{T}"],
   params={"dim": -1}, method="log_softmax", function=True, inputs="softmax", along_dim=True, contiguous=True,
   saved={"dim": "@dim", "result": "o"})
# their gradients are ops of their own in PyTorch (_softmax_backward_data...), with derivatives.yaml's rules
op("softmax_backward", grad_fn="SoftmaxBackwardDataBackward0", symbol="∂softmax",
   forward=lambda g, y, dim: kernels.softmax_backward(g, y, dim),
   vjps=[lambda gg, o, g, y, dim: call("softmax_backward", gg, y, dim=dim),
         lambda gg, o, g, y, dim: g * gg - (y * g).sum(axis=dim, keepdims=True) * gg
         - g * (y * gg).sum(axis=dim, keepdims=True)], uses=["1", "01"],
   latex=r"(@0 - \textstyle\sum @0 @1)\, @1", dlatex=[r"\operatorname{diag}(@1) - @1 @1^{T}", r"\partial"],
   params={"dim": -1}, inputs="softmax_backward", in_rules=True,
   saved={"grad_output": 0, "output": 1, "dim": "@dim"})
op("log_softmax_backward", grad_fn="LogSoftmaxBackwardDataBackward0", symbol="∂log softmax",
   forward=lambda g, y, dim: kernels.log_softmax_backward(g, y, dim),
   vjps=[lambda gg, o, g, y, dim: gg - (gg * kernels.exp(y)).sum(axis=dim, keepdims=True),   # (exp as PyTorch's)
         lambda gg, o, g, y, dim: -g.sum(axis=dim, keepdims=True) * kernels.exp(y) * gg], uses=["1", "01"],
   latex=r"@0 - e^{@1} \textstyle\sum @0", dlatex=[r"I - e^{@1} \mathbf{1}^{T}", r"-e^{@1} \textstyle\sum @0"],
   params={"dim": -1}, inputs="softmax_backward", in_rules=True,
   saved={"grad_output": 0, "output": 1, "dim": "@dim"})

# --- linear algebra ---------------------------------------------------------------------------

def _mm_grad_a(g, y, a, b):
    """∂(a @ b)/∂a applied to g, as PyTorch's ``mm_mat1_backward`` multiplies: ``g @ bᵀ``, or
    ``(b @ gᵀ)ᵀ`` when ``a`` was laid out by columns (the product then has b's rows)."""
    return call("mm", b, g.T).T if kernels.column_major(a) else call("mm", g, b.T)


def _mm_grad_b(g, y, a, b):
    """∂(a @ b)/∂b applied to g: ``aᵀ @ g``, or ``(gᵀ @ a)ᵀ`` when ``b`` was laid out by columns
    (``nn.Linear``'s ``Wᵀ``: the weight's gradient is then computed in the weight's own shape)."""
    return call("mm", g.T, a).T if kernels.column_major(b) else call("mm", a.T, g)


op("mm", grad_fn="MmBackward0", symbol="@", forward=kernels.mm,
   vjps=[_mm_grad_a, _mm_grad_b], uses=["1", "0"],
   latex="@0 @1", dlatex=["@1^{T}", "@0^{T}"],
   method="mm", function=True, inputs="matmul", precedence=2, elementwise=False, contiguous=True,
   saved={"self": 0, "mat2": 1, "self_sym_sizes": "#0", "mat2_sym_sizes": "#1"},
   category="matmul", matmul_sides=("right", "left"))
op("mv", grad_fn="MvBackward0", symbol="@", forward=kernels.mv,
   vjps=[lambda g, y, a, b: np.outer(g, b), lambda g, y, a, b: call("mv", a.T, g)], uses=["1", "0"],
   latex="@0 @1", dlatex=["@1^{T}", "@0^{T}"],
   method="mv", function=True, inputs="matmul", precedence=2, elementwise=False, contiguous=True,
   saved={"self": 0, "vec": 1}, category="matmul", matmul_sides=("outer", "left"))
op("dot", grad_fn="DotBackward0", symbol="·", forward=kernels.dot,
   vjps=[lambda g, y, a, b: g * b, lambda g, y, a, b: g * a], uses=["1", "0"],
   latex=r"@0 \cdot @1", dlatex=["@1", "@0"],
   method="dot", function=True, inputs="matmul", precedence=2, contiguous=True, saved={"self": 0, "tensor": 1},
   category="reduction")
op("bmm", grad_fn="BmmBackward0", symbol="@", forward=kernels.bmm,
   vjps=[lambda g, y, a, b: call("bmm", g, np.swapaxes(b, -1, -2)),
         lambda g, y, a, b: call("bmm", np.swapaxes(a, -1, -2), g)], uses=["1", "0"],
   latex="@0 @1", dlatex=["@1^{T}", "@0^{T}"],
   method="bmm", function=True, inputs="matmul", precedence=2, elementwise=False, contiguous=True,
   saved={"self": 0, "mat2": 1})

def _times(g, s):
    """PyTorch's maybe_multiply: ``g`` itself when ``s`` is 1, else ``g·s``."""
    return g if s == 1 else g * np.asarray(s, g.dtype)


op("addmm", grad_fn="AddmmBackward0", forward=kernels.addmm,   # nn.Linear: bias + x Wᵀ (beta·c + alpha·a @ b)
   vjps=[lambda g, y, c, a, b, beta=1, alpha=1: _times(g, beta),   # unbroadcast sums the bias's gradient
         lambda g, y, c, a, b, beta=1, alpha=1: _times(_mm_grad_a(g, y, a, b), alpha),
         lambda g, y, c, a, b, beta=1, alpha=1: _times(_mm_grad_b(g, y, a, b), alpha)], uses=["", "2", "1"],
   latex="@0 + @1 @2", dlatex=["1", "@2^{T}", "@1^{T}"],
   method="addmm", inplace=True, function=True, inputs="matmul", elementwise=False, contiguous=True,
   saved={"mat1": 1, "mat2": 2, "mat1_sym_sizes": "#1", "mat2_sym_sizes": "#2", "alpha": "@alpha=1",
          "beta": "@beta=1"}, category="matmul", matmul_sides=(None, "right", "left"))

def _logsumexp(a, dim, keepdim=False):
    """log Σ e^{x_i}, shifted by the max (which cancels) to avoid overflow"""
    m = np.max(a, axis=dim, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0).astype(a.dtype)     # PyTorch's shift: 0 where the max is ±inf
    with np.errstate(divide="ignore"):   # the log of an empty sum: -inf, silently as in PyTorch
        out = np.log(kernels.sum(np.exp(a - m), axis=dim, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=dim)


op("logsumexp", grad_fn="LogsumexpBackward0", symbol="logΣexp", forward=_logsumexp,
   vjps=[lambda g, y, a, dim, keepdim=False:
    _expand_reduced(g, a.shape, dim, keepdim) * np.exp(a - _expand_reduced(y, a.shape, dim, keepdim))], uses=["0o"],
   latex=r"\log \sum e^{@0}", dlatex=[r"\operatorname{softmax}(@0)"],
   params={"dim": 0}, method="logsumexp", function=True, inputs="reduce_dim", along_dim=True,
   saved={"dim": "@dim", "keepdim": "@keepdim", "self": 0, "result": "o"})
def _reversed_cumsum(w, dim):
    """Σ_{j ≥ i} w_j along ``dim``: PyTorch's ``w.flip(dim).cumsum(dim).flip(dim)``."""
    return np.flip(call("cumsum", np.flip(w, dim), dim=dim), dim)


def _cumsum_vjp(g, y, a, dim):
    """∂(Σ_{j≤k} x_j)/∂x_i = 1 for k ≥ i: the gradient summed from the end"""
    return g if a.size <= 1 or a.shape[dim] == 1 else _reversed_cumsum(g, dim)


def _cumprod_vjp(g, y, a, dim):
    """∂(Π_{j≤k} x_j)/∂x_i = y_k / x_i for k ≥ i: Σ_{k≥i} y_k g_k / x_i, as PyTorch's cumprod_backward
    computes it where no x is 0; with zeros, its mask gymnastics (the products of the others)."""
    if a.size <= 1 or a.shape[dim] == 1:
        return g
    w = y * g
    zero = a == 0
    if not zero.any():
        return _reversed_cumsum(w, dim) / a
    return _cumprod_vjp_zeros(g, y, a, dim, w, zero)


def _cumprod_vjp_zeros(g, y, a, dim, w, zero):
    """cumprod_backward's O(n) path for inputs holding zeros: before the first zero as without
    zeros; at the first zero, Σ_k (Π of the inputs after it up to k) g_k times the product before
    it; after it, 0."""
    count = kernels.cumsum(zero.astype(np.int64), dim)
    before = count == 0
    out = np.zeros(a.shape, g.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[before] = (_reversed_cumsum(np.where(before, w, 0).astype(g.dtype), dim) / a)[before]
    between = count == 1
    first = np.argmax(between, axis=dim)                       # the first zero's index (0 if none)
    first_mask = np.zeros(a.shape, bool)
    np.put_along_axis(first_mask, np.expand_dims(first, dim), True, axis=dim)
    first_mask &= between
    between &= ~first_mask
    after = kernels.cumprod(np.where(between, a, 1).astype(a.dtype), dim) * np.where(count != 1, 0, g).astype(g.dtype)
    total = kernels.sum(after, axis=dim, keepdims=True)
    prior = np.take_along_axis(y, np.expand_dims(np.maximum(first - 1, 0), dim), axis=dim)
    prior = np.where(np.expand_dims(first, dim) == 0, 1, prior).astype(y.dtype)
    out[first_mask] = np.broadcast_to(total * prior, a.shape)[first_mask]
    return out


op("cumsum", grad_fn="CumsumBackward0", forward=kernels.cumsum,
   vjps=[_cumsum_vjp], uses=[""],
   latex=r"\sum_{j \le i} @0_j", dlatex=[r"\mathbb{1}[j \le i]"],
   params={"dim": 0}, method="cumsum", inplace=True, function=True, inputs="softmax", along_dim=True,
   contiguous=True,     # (PyTorch allocates a cumsum row-major)
   saved={"dim": "@dim"})
op("cumprod", grad_fn="CumprodBackward0", forward=kernels.cumprod,
   vjps=[_cumprod_vjp], uses=["0o"],
   latex=r"\prod_{j \le i} @0_j", dlatex=[r"\prod_{j \le k,\, j \ne i} @0_j"],
   params={"dim": 0}, method="cumprod", inplace=True, function=True, inputs="softmax", along_dim=True,
   contiguous=True, saved={"dim": "@dim", "result": "o", "self": 0})

# --- shapes (no arithmetic: the gradient is moved, never scaled) ------------------------------

op("view", grad_fn="ViewBackward0", forward=lambda a, shape: np.reshape(a, shape),
   vjps=[lambda g, y, a, shape: np.reshape(g, a.shape)], uses=[""],
   latex="@0", dlatex=["1"],
   params={"shape": (-1,)}, is_view=True, method="view", inputs="reshape", saved={"self_sym_sizes": "#0"},
   category="reshape")
op("expand", grad_fn="ExpandBackward0", forward=lambda a, shape: np.broadcast_to(a, shape),
   vjps=[lambda g, y, a, shape: g], uses=[""],   # unbroadcast does the summing
   latex="@0", dlatex=["1"],
   params={"shape": (2, 3, 4)}, is_view=True, method="expand", inputs="expand", saved={"self_sym_sizes": "#0"},
   category="reshape")
op("permute", grad_fn="PermuteBackward0", forward=lambda a, dims: np.transpose(a, dims),
   vjps=[lambda g, y, a, dims: np.transpose(g, np.argsort(dims))], uses=[""],
   latex="@0^{T}", dlatex=["1"],
   params={"dims": (1, 0)}, is_view=True, method="permute", function=True, inputs="permute", saved={"dims": "@dims"})
op("transpose", grad_fn="TransposeBackward0", forward=lambda a, d0, d1: np.swapaxes(a, d0, d1),
   vjps=[lambda g, y, a, d0, d1: np.swapaxes(g, d0, d1)], uses=[""],
   latex="@0^{T}", dlatex=["1"],
   params={"d0": 0, "d1": -1}, is_view=True, method="transpose", aliases=("swapaxes",), function=True,
   inputs="transpose", along_dim=True, saved={"dim0": "@d0", "dim1": "@d1"}, category="transpose")
op("unsqueeze", grad_fn="UnsqueezeBackward0", forward=lambda a, dim: np.expand_dims(a, dim),
   vjps=[lambda g, y, a, dim: np.squeeze(g, axis=dim)], uses=[""],
   latex="@0", dlatex=["1"],
   params={"dim": 0}, is_view=True, method="unsqueeze", function=True, inputs="unsqueeze", saved={"dim": "@dim"},
   category="reshape")
op("squeeze", grad_fn="SqueezeBackward0", forward=_squeezed,
   vjps=[lambda g, y, a, dim=None: np.reshape(g, a.shape)], uses=[""],
   latex="@0", dlatex=["1"],
   is_view=True, method="squeeze", function=True, inputs="squeeze", category="reshape",
   saved={"self_sym_sizes": "#0"})
# (the trailing ... keeps a 0-d result a view of the input, not a numpy scalar copy)
op("select", grad_fn="SelectBackward0", symbol="[i]", forward=lambda a, dim, index: a[(slice(None),) * dim + (index, ...)],
   vjps=[lambda g, y, a, dim, index: call("select_backward", g, shape=a.shape, dim=dim, index=index)], uses=[""],
   latex="@0_{@index}", dlatex=["1"],
   params={"dim": 0, "index": 0}, is_view=True, method="select", function=True, inputs="select",
   saved={"dim": "@dim", "index": "@index", "self_sym_sizes": "#0"})
op("slice", grad_fn="SliceBackward0", symbol="[a:b]", forward=lambda a, dim, s: a[(slice(None),) * dim + (s,)],
   vjps=[lambda g, y, a, dim, s: call("slice_backward", g, shape=a.shape, dim=dim, s=s)], uses=[""],
   latex="@0", dlatex=["1"],
   params={"dim": 0, "s": slice(0, 1)}, is_view=True, method="narrow", function=True, inputs="slice",
   saved={"dim": "@dim", "start": "@s.start", "end": "@s.stop", "step": "@s.step", "self_sym_sizes": "#0"})
# x[i]'s and x[a:b]'s gradients are ops of their own in PyTorch (SelectBackwardBackward0 under
# create_graph=True): zeros with the gradient written in; their own gradient is the select or slice again
op("select_backward", grad_fn="SelectBackwardBackward0", symbol="[i]ᵀ",
   forward=lambda g, shape, dim, index: _scatter(g, shape, (slice(None),) * dim + (index,)),
   vjps=[lambda gg, y, g, shape, dim, index: call("select", gg, dim=dim, index=index)], uses=[""],
   latex=r"\operatorname{scatter}(@0)", dlatex=["1"], params={"shape": (2,), "dim": 0, "index": 0},
   inputs="select_backward", in_rules=True, saved={"dim": "@dim", "index": "@index"})
op("slice_backward", grad_fn="SliceBackwardBackward0", symbol="[a:b]ᵀ",
   forward=lambda g, shape, dim, s: _scatter(g, shape, (slice(None),) * dim + (s,)),
   vjps=[lambda gg, y, g, shape, dim, s: call("slice", gg, dim=dim, s=s)], uses=[""],
   latex=r"\operatorname{scatter}(@0)", dlatex=["1"], params={"shape": (2,), "dim": 0, "s": slice(0, 1)},
   inputs="slice_backward", in_rules=True, saved={"dim": "@dim"})
op("repeat", grad_fn="RepeatBackward0", forward=lambda a, sizes: np.tile(a, sizes),
   vjps=[lambda g, y, a, sizes: _unrepeat(g, a.shape, sizes)], uses=[""],
   latex="@0", dlatex=["1"],
   params={"sizes": (2, 1)}, method="repeat", inputs="repeat", contiguous=True)
op("diagonal", grad_fn="DiagonalBackward0_copy", symbol="diag", forward=lambda a, offset=0: np.diagonal(a, offset).copy(),
   vjps=[lambda g, y, a, offset=0: _diag_scatter(g, a.shape, offset)], uses=[""],
   latex=r"\operatorname{diag}(@0)", dlatex=["1"],
   method="diag", function=True, inputs="diag")
op("diag_embed", grad_fn="DiagEmbedBackward0", symbol="diag", forward=lambda a, offset=0: np.diag(a, offset),
   vjps=[lambda g, y, a, offset=0: np.diagonal(g, offset).copy()], uses=[""],
   latex=r"\operatorname{diag}(@0)", dlatex=["1"],
   method="diag", function=True, inputs="diag")
op("flip", grad_fn="FlipBackward0", forward=lambda a, dims: np.flip(a, dims).copy(),
   vjps=[lambda g, y, a, dims: np.flip(g, dims)], uses=[""],
   latex="@0", dlatex=["1"],
   params={"dims": (0,)}, method="flip", function=True, inputs="flip", along_dim=True, saved={"dims": "@dims"})
op("tril", grad_fn="TrilBackward0", forward=lambda a, diagonal=0: np.tril(a, diagonal),
   vjps=[lambda g, y, a, diagonal=0: np.tril(g, diagonal)], uses=[""],
   latex=r"\operatorname{tril}(@0)", dlatex=["1"],
   method="tril", inplace=True, function=True, inputs="tri")
op("triu", grad_fn="TriuBackward0", forward=lambda a, diagonal=0: np.triu(a, diagonal),
   vjps=[lambda g, y, a, diagonal=0: np.triu(g, diagonal)], uses=[""],
   latex=r"\operatorname{triu}(@0)", dlatex=["1"],
   method="triu", inplace=True, function=True, inputs="tri")
op("gather", grad_fn="GatherBackward0", forward=lambda a, dim, index: np.take_along_axis(a, index, dim),
   vjps=[lambda g, y, a, dim, index: _scatter_along(g, a.shape, dim, index)], uses=[""],
   latex=r"@0_{\text{index}}", dlatex=["1"],
   params={"dim": 0, "index": np.array([[0]])}, method="gather", function=True, inputs="gather", along_dim=True,
   saved={"dim": "@dim", "index": "@index"})
op("index_select", grad_fn="IndexSelectBackward0", symbol="select", forward=lambda a, dim, index: np.take(a, index, axis=dim),
   vjps=[lambda g, y, a, dim, index: _scatter(g, a.shape, (slice(None),) * dim + (index,))], uses=[""],
   latex=r"@0_{\text{index}}", dlatex=["1"],
   params={"dim": 0, "index": np.array([0])}, method="index_select", function=True, inputs="gather",
   saved={"dim": "@dim", "index": "@index", "self_sym_sizes": "#0"})
op("sort", grad_fn="SortBackward0", forward=lambda a, dim=-1, descending=False: _sorted(a, dim, descending)[0],
   vjps=[lambda g, y, a, dim=-1, descending=False:
    _scatter_along(g, a.shape, dim, _sorted(a, dim, descending)[1])], uses=["0"],
   latex=r"\operatorname{sort}(@0)", dlatex=["1"],
   method="sort", function=True, inputs="sort", along_dim=True, saved={"dim": "@dim", "self_sym_sizes": "#0"})
op("topk", grad_fn="TopkBackward0", forward=lambda a, dim, index: np.take_along_axis(a, index, dim),
   vjps=[lambda g, y, a, dim, index: _scatter_along(g, a.shape, dim, index)], uses=[""],
   latex=r"\operatorname{topk}(@0)", dlatex=["1"], params={"dim": 0, "index": np.array([0])},
   saved={"dim": "@dim", "indices": "@index", "self_sym_sizes": "#0"}, method="topk", function=True, inputs="topk",
   along_dim=True)
op("alias", grad_fn="AliasBackward0", forward=lambda a: a.view(),
   vjps=[lambda g, y, a: g], uses=[""],
   latex="@0", dlatex=["1"],
   is_view=True, method="__getitem__", category="elementwise")
op("index", grad_fn="IndexBackward0", symbol="[idx]", forward=lambda a, key: a[key],
   vjps=[lambda g, y, a, key: _scatter(g, a.shape, key)], uses=[""],
   latex="@0_{idx}", dlatex=["1"],
   params={"key": ([0, 0],)}, method="__getitem__", inputs="index")
def _cat_piece(g, sizes, i, dim):
    """Input i's part of cat's gradient: ``g.narrow(dim, start, size)``, as PyTorch's cat_tensors_backward
    cuts it (a slice: SliceBackward0 under create_graph=True)."""
    start = int(sum(sizes[:i]))
    return call("slice", g, dim=dim % g.ndim, s=slice(start, start + sizes[i]))


op("cat", grad_fn="CatBackward0", forward=lambda *xs, dim=0: np.ascontiguousarray(np.concatenate(xs, axis=dim)),
   vjps=[lambda g, y, *xs, i, dim=0: _cat_piece(g, [x.shape[dim % x.ndim] for x in xs], i, dim)], uses=[""],
   latex=r"[@*]", dlatex=["1"],
   params={"dim": 0}, variadic=True, function="cat", inputs="join", saved={"dim": "@dim"}, category="join")
op("stack", grad_fn="StackBackward0", forward=lambda *xs, dim=0: np.ascontiguousarray(np.stack(xs, axis=dim)),
   vjps=[lambda g, y, *xs, i, dim=0: np.take(g, i, axis=dim)], uses=[""],
   latex=r"[@*]", dlatex=["1"],
   params={"dim": 0}, variadic=True, function="stack", inputs="join", saved={"dim": "@dim"}, category="join")
op("where", grad_fn="WhereBackward0", forward=lambda a, b, cond: np.where(cond, a, b),
   vjps=[lambda g, y, a, b, cond: np.where(cond, g, 0), lambda g, y, a, b, cond: np.where(cond, 0, g)], uses=["", ""],
   latex=r"@0 \text{ if } \mathrm{cond} \text{ else } @1",
   dlatex=[r"\mathbb{1}[\mathrm{cond}]", r"\mathbb{1}[\lnot \mathrm{cond}]"],
   params={"cond": np.array([True, False])}, method="where", function=True, inputs="where",
   saved={"condition": "@cond"})
op("clone", grad_fn="CloneBackward0", forward=lambda a, contiguous=False: np.array(a, copy=True, order="C" if contiguous else "K"),
   vjps=[lambda g, y, a, contiguous=False: g], uses=[""],
   latex="@0", dlatex=["1"],
   method="clone", function=True, category="elementwise")
op("to", grad_fn="ToCopyBackward0", forward=lambda a, dtype: a.astype(dtype),
   vjps=[lambda g, y, a, dtype: g.astype(a.dtype)], uses=[""],
   latex="@0", dlatex=["1"],
   params={"dtype": np.float64}, method="to", category="elementwise")
# Whole-tensor writes (x.zero_(), x.fill_(v), x.copy_(y), x[...] = v): the old values get no gradient
op("zero", grad_fn="ZeroBackward0", forward=lambda a: np.zeros_like(a),
   vjps=[lambda g, y, a: np.zeros_like(g)], uses=[""], latex="0", dlatex=["0"], method="zero_")
op("fill", grad_fn="FillBackward2", forward=lambda a, value: np.full_like(a, value),
   vjps=[lambda g, y, a, value: np.zeros_like(g)], uses=[""], latex="@value", dlatex=["0"],
   method="fill_", params={"value": 1.5})
op("fill_tensor", grad_fn="FillBackward3", symbol="fill", forward=lambda a, v: np.full_like(a, v),
   vjps=[lambda g, y, a, v: np.zeros_like(g), lambda g, y, a, v: g.sum()], uses=["", ""],
   latex="@1", dlatex=["0", "1"], method="fill_", inputs="fill_value")
op("copy", grad_fn="CopyBackwards", forward=lambda a, b: np.array(np.broadcast_to(b, a.shape), a.dtype),
   vjps=[lambda g, y, a, b: np.zeros_like(g), lambda g, y, a, b: g], uses=["", ""],   # unbroadcast sums
   latex="@1", dlatex=["0", "1"], method="copy_", inputs="copy")
# x[idx] = v with index tensors or lists (one node; a basic index writes through a view instead)
op("index_put", grad_fn="IndexPutBackward0", symbol="[]=", forward=_copy_slices,
   vjps=[lambda g, y, a, b, key: _zero_at(g, key),
    lambda g, y, a, b, key: g[key]], uses=["", ""],
   latex="@0", dlatex=["1", "1"],
   params={"key": ([0],)}, method="__setitem__", inputs="index_put")

# --- writing into a view (PyTorch's "rebase history") ------------------------------------------
# An in-place op on a view of x (x[0].mul_(2), x[0] = v) becomes x's CopySlices: x with the
# view's region replaced, whose rule runs the op's own rule on that region of the gradient.
# The view itself, and every other view of x read after the write, is then described by sizes,
# strides and an offset into x: AsStridedBackward0, whose gradient lands where the view reads.
op("as_strided", grad_fn="AsStridedBackward0", symbol="view", forward=_strided.as_strided,
   vjps=[lambda g, y, a, size, stride, storage_offset=0, geometry=None:
    _strided.as_strided_backward(g, a.shape, size, stride, storage_offset, geometry)], uses=[""],
   latex="@0", dlatex=["1"], elementwise=False,
   params={"size": (2,), "stride": (1,), "storage_offset": 0}, is_view=True, method="as_strided", function=True,
   inputs="as_strided", saved={"size": "@size", "stride": "@stride", "storage_offset": "@storage_offset"})
op("copy_slices", grad_fn="CopySlices", symbol="[]=", forward=_strided.copy_slices,
   vjps=[_strided.copy_slices_backward], uses=["012o"],
   latex="@0", dlatex=["1"], variadic=True, elementwise=False,
   params={"inner": None, "inner_params": {}, "size": (1,), "stride": (1,), "storage_offset": 0},
   method="__setitem__", inputs="copy_slices")


# Variants that differ only in the name PyTorch gives them (and in how a student reaches them).
OPS["sum_dim"] = OPS["sum"].renamed("SumBackward1", key="sum_dim", params={"dim": (0,)}, inputs="reduce_dim",
saved={"dim": "@dim", "keepdim": "@keepdim", "self_sym_sizes": "#0"})
OPS["mean_dim"] = OPS["mean"].renamed("MeanBackward1", key="mean_dim", params={"dim": (0,)}, inputs="reduce_dim",
saved={"dim": "@dim", "keepdim": "@keepdim", "self_sym_numel": "%0", "self_sym_sizes": "#0"})
OPS["reshape_copy"] = OPS["view"].renamed("UnsafeViewBackward0", key="reshape_copy", is_view=False,
                                          method="reshape", function=True)
OPS["reshape_alias"] = OPS["view"].renamed("ReshapeAliasBackward0", key="reshape_alias", method="reshape",
                                           function=True)
_t_vjps = (lambda g, y, a, d0, d1: g.T,)   # PyTorch's t() is differentiated by t(): TBackward0 again
OPS["t"] = OPS["transpose"].renamed("TBackward0", key="t", params={"d0": 0, "d1": 1}, method="t", aliases=(),
                                    vjps=_t_vjps, saved={})
# the in-place forms of the view ops (x.t_()...): the same maths, PyTorch's names for them
OPS["t_"] = OPS["transpose"].renamed("TBackward1", key="t_", params={"d0": 0, "d1": 1}, method="t_", aliases=(),
                                     function=False, vjps=_t_vjps, saved={})
OPS["transpose_"] = OPS["transpose"].renamed("TransposeBackward1", key="transpose_", method="transpose_",
                                             aliases=("swapaxes_",), function=False)
OPS["unsqueeze_"] = OPS["unsqueeze"].renamed("UnsqueezeBackward1", key="unsqueeze_", method="unsqueeze_",
                                             function=False)
OPS["squeeze_"] = OPS["squeeze"].renamed("SqueezeBackward3", key="squeeze_", method="squeeze_", function=False)
OPS["as_strided_"] = OPS["as_strided"].renamed("AsStridedBackward1", key="as_strided_", method="as_strided_")
# split/chunk and unbind: one node with several outputs, as PyTorch records them (piece k leads to
# (node, k)); the rule receives the list of the pieces' gradients, zeros for pieces no gradient reached.
def _pieces(a, dim, sizes):
    """a cut along ``dim`` into pieces of the given sizes (views)"""
    starts = np.cumsum((0,) + tuple(sizes))
    return [a[(slice(None),) * dim + (slice(int(b), int(b + k)),)] for b, k in zip(starts, sizes)]


def _split_op(key, grad_fn, saved):
    op(key, grad_fn=grad_fn, symbol="split", forward=_pieces,
       vjps=[lambda g, y, a, dim, sizes: np.concatenate(g, axis=dim)], uses=[""],
       latex="@0", dlatex=["1"], params={"dim": 0, "sizes": (1, 1)}, method="split", function=True, inputs="split",
       is_view=True, multi_output=True, saved=saved)


_split_op("split", "SplitBackward0", saved={"dim": "@dim", "self_sym_sizes": "#0", "split_size": "@sizes"})
_split_op("split_sizes", "SplitWithSizesBackward0",
saved={"dim": "@dim", "self_sym_sizes": "#0", "split_sizes": "@sizes"})
op("unbind", grad_fn="UnbindBackward0", symbol="unbind",
   forward=lambda a, dim: [a[(slice(None),) * dim + (i, ...)] for i in range(a.shape[dim])],   # views
   vjps=[lambda g, y, a, dim: np.stack(g, axis=dim)], uses=[""],
   latex="@0", dlatex=["1"], params={"dim": 0}, method="unbind", function=True, inputs="split", is_view=True,
   multi_output=True, saved={"dim": "@dim"})
_SQUEEZED = {"dim": "@dim", "self_sym_sizes": "#0"}     # squeeze(dim) and squeeze_(dim): a dim, or a tuple
OPS["squeeze_dim"] = OPS["squeeze"].renamed("SqueezeBackward1", key="squeeze_dim", params={"dim": 0}, saved=_SQUEEZED)
OPS["squeeze_dims"] = OPS["squeeze"].renamed("SqueezeBackward2", key="squeeze_dims", params={"dim": (0,)}, saved=_SQUEEZED)
# a vector times a matrix: PyTorch multiplies a one-row matrix, then squeezes the row away
OPS["squeeze_mm"] = OPS["squeeze"].renamed("SqueezeBackward4", key="squeeze_mm", params={"dim": 0}, method="matmul",
                                           is_view=False, saved=_SQUEEZED)   # (squeeze_: no view of a view)
OPS["squeeze_dims_"] = OPS["squeeze_mm"].renamed("SqueezeBackward5", key="squeeze_dims_", params={"dim": (0,)}, method="squeeze_", function=False)
