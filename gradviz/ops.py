r"""The op table: every primitive once -- forward, vector-Jacobian products, PyTorch name, symbol, LaTeX.

The contract, written once (as in HIPS/autograd): for an op ``y = f(x_0, x_1, ...)`` and the
gradient ``g = ∂L/∂y`` arriving from above, ``vjps[i](g, y, x_0, x_1, ..., **params)`` returns
``g · ∂y/∂x_i`` -- the gradient sent down to input ``i``, before broadcasting is undone
(the engine calls :func:`gradviz._broadcast.unbroadcast`, never the op).

``uses[i]`` says which values the rule for input ``i`` reads: ``"0"``, ``"1"``, ``"2"`` for inputs,
``"o"`` for the output.  The engine saves exactly those (only for inputs that need a grad),
so freeing them after ``backward()`` behaves like PyTorch's saved tensors.  A value that is
not saved reaches the rule as a :class:`Meta` carrying only its ``shape`` and ``dtype``.

In ``latex``, ``dlatex`` and ``symbol``, ``@0``/``@1`` stand for the inputs, ``@y`` for the
output and ``@name`` for a parameter; the graph and the hand derivation fill them in.
"""

import warnings
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ._random import _fma
from ._reduce import torch_sum

__all__ = ["Op", "Meta", "OPS", "op"]

# PyTorch makes nan and inf silently. Ops that make them from ordinary inputs (log(-1), 1/0) run
# under np.errstate (_quiet below), and so does every backward pass; overflow can come from any
# op (a training run that diverges), so numpy's RuntimeWarnings raised inside gradviz's own
# modules are also filtered out here, at no cost per op. (A `warnings.catch_warnings()` block
# around `import gradviz` drops that filter again when it ends; pytest's collection is one.)
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"gradviz\.")


@dataclass(frozen=True)
class Op:
    """One primitive: how to compute it, how to differentiate it, how to show it."""

    key: str                     # short name used in the table and the tests
    name: str                    # PyTorch grad_fn class name, e.g. "MulBackward0"
    symbol: str                  # what the graph node shows, e.g. "×"
    forward: Callable            # (*arrays, **params) -> array
    vjps: tuple                  # one rule per input (the last one repeats for variadic ops)
    uses: tuple                  # per input: which saved values its rule reads
    latex: str                   # the forward expression
    dlatex: tuple                # the local derivative ∂y/∂x_i, one per input
    doc: str = ""
    variadic: bool = False       # cat/stack: any number of inputs, rule gets i=
    domain: tuple = (-3.0, 3.0)  # where tests draw inputs from (kept away from kinks and poles)
    params: dict = field(default_factory=dict)  # parameter values used by the table-driven tests
    is_view: bool = False        # the output shares storage (and the version counter) with input 0

    def vjp(self, i):
        return self.vjps[min(i, len(self.vjps) - 1)]

    def renamed(self, name, **changes):
        """The same maths under another PyTorch name (``reshape`` vs ``view``...)."""
        return replace(self, name=name, **changes)


class Meta:
    """Stands in for a value that was not saved: only its shape and dtype are known."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))


OPS = {}


def op(key, name, symbol, forward, vjps, uses, latex, dlatex, **kw):
    OPS[key] = Op(key, name, symbol, forward, tuple(vjps), tuple(uses), latex, tuple(dlatex),
                  doc=forward.__doc__ or "", **kw)
    return OPS[key]


# --- helpers used by several rules ------------------------------------------------------------

def _expand_reduced(g, shape, dim, keepdim):
    """Put back the axes a reduction removed, so ``g`` broadcasts against the input."""
    if dim is None:
        return np.broadcast_to(g, shape)
    if not keepdim:
        g = np.expand_dims(g, dim)
    return np.broadcast_to(g, shape)


def _count(shape, dim):
    return int(np.prod(shape)) if dim is None else int(np.prod([shape[d] for d in dim]))


def _evenly(g, x, y, dim=None, keepdim=False):
    """max/min: the gradient goes to the extreme elements, split evenly among ties."""
    yy = y if dim is None or keepdim else np.expand_dims(y, dim)
    mask = (x == yy)
    gg = g if dim is None or keepdim else np.expand_dims(g, dim)
    return mask * (gg / mask.sum(axis=dim, keepdims=True))


def _to_index(g, shape, idx, dim, keepdim):
    """A pick along ``dim``: the gradient goes where ``idx`` (dims kept) points, 0 elsewhere."""
    out = np.zeros(shape, dtype=g.dtype)
    np.put_along_axis(out, idx, g if keepdim else np.expand_dims(g, dim), axis=dim)
    return out


def _first_extreme(g, x, dim, keepdim, arg):
    """max/min along dim: the gradient goes to the element that ``indices`` points at."""
    return _to_index(g, x.shape, arg(x, axis=dim, keepdims=True), dim, keepdim)


def _median_index(a, dim):
    """Where the lower median sits along ``dim``, dims kept (a stable sort: the middle of equals)."""
    return np.take(np.argsort(a, axis=dim, kind="stable"), [(a.shape[dim] - 1) // 2], axis=dim)


def _median_dim(a, dim, keepdim=False):
    """the lower median along dim"""
    m = np.take_along_axis(a, _median_index(a, dim), dim)
    return m if keepdim else np.squeeze(m, dim)


def _diag_scatter(g, shape, offset):
    out = np.zeros(shape, g.dtype)
    rows = np.arange(len(g)) + max(-offset, 0)
    out[rows, rows + offset] = g
    return out


def _scatter_along(g, shape, dim, index):
    """Add each element of ``g`` into the place along ``dim`` that ``index`` says it came from."""
    out = np.zeros(shape, g.dtype)
    idx = np.indices(index.shape, sparse=True)
    key = tuple(index if d == dim % len(shape) else i for d, i in enumerate(idx))
    np.add.at(out, key, g)
    return out


def _sorted(a, dim, descending):
    """Values and indices, sorted along ``dim`` (stable, so equal values keep their order)."""
    idx = np.argsort(-a if descending else a, axis=dim, kind="stable")
    return np.take_along_axis(a, idx, dim), idx


def _scatter(g, shape, key):
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, key, g)
    return out


def _zero_at(g, key):
    g = np.array(g, copy=True)
    g[key] = 0
    return g


def _copy_slices(a, b, key):
    out = np.array(a, copy=True)
    out[key] = b
    return out


def _quiet(f):
    """``f`` without numpy's warnings: PyTorch makes nan and inf silently (log(-1), 1/0, exp(1000))."""
    def quietly(*args, **kwargs):
        with np.errstate(all="ignore"):
            return f(*args, **kwargs)
    quietly.__name__, quietly.__doc__ = getattr(f, "__name__", "f"), f.__doc__
    return quietly


def _rounded(f):
    """``f`` computed in double and rounded once: float32 results then agree with PyTorch's
    (its vectorised exp, log, sin... are within an ulp of exact; numpy's float32 ones differ more)."""
    @_quiet
    def in_double(a):
        return f(a.astype(np.float64)).astype(a.dtype) if a.dtype == np.float32 else f(a)
    in_double.__name__ = getattr(f, "__name__", "f")
    in_double.__doc__ = f"{in_double.__name__}, computed in double and rounded once"
    return in_double


_exp, _log, _sin, _cos, _tanh = (_rounded(f) for f in (np.exp, np.log, np.sin, np.cos, np.tanh))


def _sigmoid(a):
    """σ(x) = 1 / (1 + e^{-x})"""
    return 1 / (1 + _exp(-a))


# --- arithmetic -------------------------------------------------------------------------------

def _add(a, b, alpha=1):
    """a + αb (α = 1 unless ``a.add(b, alpha=...)``)"""
    if alpha == 1:
        return np.add(a, b)
    if a.dtype == b.dtype and a.dtype in (np.float32, np.float64):
        # PyTorch's kernel is one fused multiply-add, b·α + a rounded once: what makes
        # ``param.add_(grad, alpha=-lr)`` (every SGD step) agree to the last bit
        return _fma(b, a.dtype.type(alpha), a, a.dtype)
    return np.add(a, np.multiply(b, alpha, dtype=b.dtype))


def _sub(a, b, alpha=1):
    """a − αb"""
    return np.subtract(a, b) if alpha == 1 else _add(a, b, -alpha)


op("add", "AddBackward0", "+", _add,
   [lambda g, y, a, b, alpha=1: g, lambda g, y, a, b, alpha=1: g if alpha == 1 else g * alpha], ["", ""],
   "@0 + @1", ["1", "1"])
op("sub", "SubBackward0", "−", _sub,
   [lambda g, y, a, b, alpha=1: g, lambda g, y, a, b, alpha=1: -g if alpha == 1 else -g * alpha], ["", ""],
   "@0 - @1", ["1", "-1"])
op("rsub", "RsubBackward1", "−", lambda a, c: np.subtract(c, a, dtype=a.dtype),
   [lambda g, y, a, c: -g], [""],
   "@c - @0", ["-1"], params={"c": 2.0})
op("mul", "MulBackward0", "×", np.multiply,
   [lambda g, y, a, b: g * b, lambda g, y, a, b: g * a], ["1", "0"],
   r"@0 \cdot @1", ["@1", "@0"])
op("div", "DivBackward0", "÷", _quiet(np.divide),
   [lambda g, y, a, b: g / b, lambda g, y, a, b: -g * (a / b / b)], ["1", "01"],
   r"\frac{@0}{@1}", [r"\frac{1}{@1}", r"-\frac{@0}{@1^{2}}"], domain=(0.5, 3.0))
op("neg", "NegBackward0", "−", np.negative,
   [lambda g, y, a: -g], [""],
   "-@0", ["-1"])
op("reciprocal", "ReciprocalBackward0", "1/x", _quiet(np.reciprocal),
   [lambda g, y, a: -g * (y * y)], ["o"],
   r"\frac{1}{@0}", [r"-\frac{1}{@0^{2}}"], domain=(0.5, 3.0))


def _power(a, n):
    """aⁿ as PyTorch's kernel computes it: small exponents by multiplying, so the bits agree."""
    if a.dtype.kind != "f":
        return np.power(a, n, dtype=a.dtype)
    special = {0: lambda: np.ones_like(a), 1: lambda: a.copy(), 2: lambda: a * a, 3: lambda: a * a * a,
               -1: lambda: 1 / a, -2: lambda: 1 / (a * a), 0.5: lambda: np.sqrt(a),
               -0.5: lambda: 1 / np.sqrt(a)}
    return special[n]() if n in special else _rounded(lambda t: np.power(t, n))(a)


op("pow", "PowBackward0", "^@n", _quiet(_power),
   [lambda g, y, a, n: g * (np.asarray(n, g.dtype) * _power(a, n - 1)) if n != 0 else 0 * g], ["0"],
   "@0^{@n}", ["@n @0^{@n - 1}"], domain=(0.5, 3.0), params={"n": 2})
op("pow_tt", "PowBackward1", "^", lambda a, b: _rounded(lambda t: np.power(t, b))(a),
   [lambda g, y, a, b: g * (b * _rounded(lambda t: np.power(t, b - 1))(a)),
    lambda g, y, a, b: g * (y * _log(a))], ["01", "01o"],
   "@0^{@1}", ["@1 @0^{@1 - 1}", r"@0^{@1} \ln @0"], domain=(0.5, 2.0))
op("rpow", "PowBackward2", "c^x", lambda a, c: _rounded(lambda t: np.power(np.asarray(c, t.dtype), t))(a),
   [lambda g, y, a, c: g * (y * np.log(np.asarray(c, y.dtype)))], ["o"],
   "@c^{@0}", [r"@c^{@0} \ln @c"], params={"c": 2.0})

# --- elementwise functions --------------------------------------------------------------------

op("exp", "ExpBackward0", "exp", _exp,
   [lambda g, y, a: g * y], ["o"],
   "e^{@0}", ["e^{@0}"])
op("log", "LogBackward0", "log", _log,
   [lambda g, y, a: g / a], ["0"],
   r"\ln @0", [r"\frac{1}{@0}"], domain=(0.2, 3.0))
op("sqrt", "SqrtBackward0", "√", _quiet(np.sqrt),
   [lambda g, y, a: g / (2 * y)], ["o"],
   r"\sqrt{@0}", [r"\frac{1}{2\sqrt{@0}}"], domain=(0.2, 3.0))
op("abs", "AbsBackward0", "abs", np.abs,
   [lambda g, y, a: g * np.sign(a)], ["0"],
   r"\left|@0\right|", [r"\operatorname{sign}(@0)"], domain=(0.1, 3.0))
op("sin", "SinBackward0", "sin", _sin,
   [lambda g, y, a: g * _cos(a)], ["0"],
   r"\sin @0", [r"\cos @0"])
op("cos", "CosBackward0", "cos", _cos,
   [lambda g, y, a: g * -_sin(a)], ["0"],
   r"\cos @0", [r"-\sin @0"])
op("tanh", "TanhBackward0", "tanh", _tanh,
   [lambda g, y, a: g * _rounded(lambda t: 1 - t * t)(y)], ["o"],   # 1 - y² rounded once, as fused
   r"\tanh @0", [r"1 - \tanh^{2} @0"])
op("sigmoid", "SigmoidBackward0", "σ", _sigmoid,
   [lambda g, y, a: g * (1 - y) * y], ["o"],
   r"\sigma(@0)", [r"\sigma(@0)\,(1 - \sigma(@0))"])
op("relu", "ReluBackward0", "ReLU", lambda a: np.maximum(a, 0).astype(a.dtype),
   [lambda g, y, a: g * (y > 0)], ["o"],
   r"\max(0, @0)", [r"\mathbb{1}[@0 > 0]"], domain=(0.1, 3.0))
op("clamp", "ClampBackward1", "clamp", lambda a, lo, hi: np.clip(a, lo, hi).astype(a.dtype),
   [lambda g, y, a, lo, hi: g * ((lo is None or a >= lo) & (hi is None or a <= hi))], ["0"],
   r"\operatorname{clamp}(@0, @lo, @hi)", [r"\mathbb{1}[@lo \le @0 \le @hi]"],
   params={"lo": -1.0, "hi": 1.0})


def _steps(f, name, symbol, doc):
    """A piecewise-constant function: its derivative is 0 wherever it exists."""
    op(name, name.capitalize() + "Backward0", symbol, f, [lambda g, y, a, **_: np.zeros_like(g)], [""],
       rf"\operatorname{{{name}}}(@0)", ["0"])
    OPS[name] = replace(OPS[name], doc=doc)


_steps(lambda a, decimals=0: np.round(a, decimals), "round", "round", "round half to even")
_steps(np.floor, "floor", "⌊x⌋", "the largest integer ≤ x")
_steps(np.ceil, "ceil", "⌈x⌉", "the smallest integer ≥ x")
_steps(np.trunc, "trunc", "trunc", "x rounded toward 0")
_steps(np.sign, "sign", "sign", "−1, 0 or 1")

_log1p, _expm1, _tan, _sinh, _cosh, _log2, _log10 = (
    _rounded(f) for f in (np.log1p, np.expm1, np.tan, np.sinh, np.cosh, np.log2, np.log10))

op("log1p", "Log1PBackward0", "log1p", _log1p,
   [lambda g, y, a: g / (a + 1)], ["0"],
   r"\ln(1 + @0)", [r"\frac{1}{1 + @0}"], domain=(0.0, 3.0))
op("expm1", "Expm1Backward0", "expm1", _expm1,
   [lambda g, y, a: g * (y + 1)], ["o"],
   r"e^{@0} - 1", [r"e^{@0}"])
op("rsqrt", "RsqrtBackward0", "1/√", _quiet(lambda a: 1 / np.sqrt(a)),
   [lambda g, y, a: -0.5 * g * y * y * y], ["o"],
   r"\frac{1}{\sqrt{@0}}", [r"-\frac{1}{2 @0^{3/2}}"], domain=(0.2, 3.0))
op("tan", "TanBackward0", "tan", _tan,
   [lambda g, y, a: g * (1 + y * y)], ["o"],
   r"\tan @0", [r"1 + \tan^{2} @0"], domain=(-1.2, 1.2))
_atan, _asin, _acos = (_rounded(f) for f in (np.arctan, np.arcsin, np.arccos))

op("atan", "AtanBackward0", "atan", _atan,
   [lambda g, y, a: g / (a * a + 1)], ["0"],
   r"\arctan @0", [r"\frac{1}{1 + @0^{2}}"])
op("asin", "AsinBackward0", "asin", _asin,
   [lambda g, y, a: g * _rounded(lambda t: 1 / np.sqrt(1 - t * t))(a)], ["0"],
   r"\arcsin @0", [r"\frac{1}{\sqrt{1 - @0^{2}}}"], domain=(-0.9, 0.9))
op("acos", "AcosBackward0", "acos", _acos,
   [lambda g, y, a: g * _rounded(lambda t: -1 / np.sqrt(1 - t * t))(a)], ["0"],
   r"\arccos @0", [r"-\frac{1}{\sqrt{1 - @0^{2}}}"], domain=(-0.9, 0.9))
op("sinh", "SinhBackward0", "sinh", _sinh,
   [lambda g, y, a: g * _cosh(a)], ["0"],
   r"\sinh @0", [r"\cosh @0"])
op("cosh", "CoshBackward0", "cosh", _cosh,
   [lambda g, y, a: g * _sinh(a)], ["0"],
   r"\cosh @0", [r"\sinh @0"])
op("log2", "Log2Backward0", "log₂", _log2,
   [lambda g, y, a: g / (a * np.log(np.asarray(2.0, a.dtype)))], ["0"],
   r"\log_2 @0", [r"\frac{1}{@0 \ln 2}"], domain=(0.2, 3.0))
op("log10", "Log10Backward0", "log₁₀", _log10,
   [lambda g, y, a: g / (a * np.log(np.asarray(10.0, a.dtype)))], ["0"],
   r"\log_{10} @0", [r"\frac{1}{@0 \ln 10}"], domain=(0.2, 3.0))


def _winner(a, b, g, better):
    """The gradient goes to the larger (or smaller) input, half to each where they tie."""
    return np.where(a == b, g / 2, np.where(better(a, b), g, 0))


op("maximum", "MaximumBackward0", "max", np.maximum,
   [lambda g, y, a, b: _winner(a, b, g, np.greater), lambda g, y, a, b: _winner(b, a, g, np.greater)],
   ["01", "01"], r"\max(@0, @1)", [r"\mathbb{1}[@0 > @1]", r"\mathbb{1}[@1 > @0]"])
op("minimum", "MinimumBackward0", "min", np.minimum,
   [lambda g, y, a, b: _winner(a, b, g, np.less), lambda g, y, a, b: _winner(b, a, g, np.less)],
   ["01", "01"], r"\min(@0, @1)", [r"\mathbb{1}[@0 < @1]", r"\mathbb{1}[@1 < @0]"])
op("masked_fill", "MaskedFillBackward0", "fill", lambda a, mask, value: np.where(mask, value, a).astype(a.dtype),
   [lambda g, y, a, mask, value: np.where(mask, 0, g)], [""],
   r"@0 \text{ where not mask}", [r"\mathbb{1}[\lnot \text{mask}]"],
   params={"mask": np.array([True, False]), "value": 0.0})

# --- reductions -------------------------------------------------------------------------------

op("sum", "SumBackward0", "Σ", lambda a, dim=None, keepdim=False: torch_sum(a, axis=dim, keepdims=keepdim),
   [lambda g, y, a, dim=None, keepdim=False: _expand_reduced(g, a.shape, dim, keepdim)], [""],
   r"\sum @0", ["1"])
op("mean", "MeanBackward0", "mean",
   lambda a, dim=None, keepdim=False: torch_sum(a, axis=dim, keepdims=keepdim) / _count(a.shape, dim),
   [lambda g, y, a, dim=None, keepdim=False:
    _expand_reduced(g, a.shape, dim, keepdim) / _count(a.shape, dim)], [""],
   r"\frac{1}{n}\sum @0", [r"\frac{1}{n}"])
op("amax", "MaxBackward1", "max", lambda a, dim=None, keepdim=False: np.max(a, axis=dim, keepdims=keepdim),
   [lambda g, y, a, dim=None, keepdim=False: _evenly(g, a, y, dim, keepdim)], ["0o"],
   r"\max @0", [r"\mathbb{1}[@0 = \max @0]"])
op("amin", "MinBackward1", "min", lambda a, dim=None, keepdim=False: np.min(a, axis=dim, keepdims=keepdim),
   [lambda g, y, a, dim=None, keepdim=False: _evenly(g, a, y, dim, keepdim)], ["0o"],
   r"\min @0", [r"\mathbb{1}[@0 = \min @0]"])
op("median", "MedianBackward0", "median", lambda a: np.sort(a, axis=None)[(a.size - 1) // 2],
   [lambda g, y, a: _evenly(g, a, y)], ["0o"],            # ties share the gradient, as for max
   r"\operatorname{median} @0", [r"\mathbb{1}[@0 = \operatorname{median} @0]"])
op("median_dim", "MedianBackward1", "median", _median_dim,
   [lambda g, y, a, dim, keepdim=False: _to_index(g, a.shape, _median_index(a, dim), dim, keepdim)], ["0"],
   r"\operatorname{median} @0", [r"\mathbb{1}[@0 = \operatorname{median} @0]"], params={"dim": 0})
op("max_dim", "MaxBackward0", "max", lambda a, dim, keepdim=False: np.max(a, axis=dim, keepdims=keepdim),
   [lambda g, y, a, dim, keepdim=False: _first_extreme(g, a, dim, keepdim, np.argmax)], ["0"],
   r"\max @0", [r"\mathbb{1}[@0 = \max @0]"], params={"dim": 0})
op("min_dim", "MinBackward0", "min", lambda a, dim, keepdim=False: np.min(a, axis=dim, keepdims=keepdim),
   [lambda g, y, a, dim, keepdim=False: _first_extreme(g, a, dim, keepdim, np.argmin)], ["0"],
   r"\min @0", [r"\mathbb{1}[@0 = \min @0]"], params={"dim": 0})
def _norm(a, p=2, dim=None, keepdim=False):
    """‖x‖_p = (Σ |x_i|^p)^{1/p}; p = ∞ is max |x_i|"""
    if p == 2:
        return np.asarray(np.sqrt(np.sum(a * a, axis=dim, keepdims=keepdim)), a.dtype)
    if p == np.inf:
        return np.asarray(np.max(np.abs(a), axis=dim, keepdims=keepdim), a.dtype)
    return np.asarray(np.sum(np.abs(a) ** p, axis=dim, keepdims=keepdim) ** (1 / p), a.dtype)


def _norm_vjp(g, y, a, p=2, dim=None, keepdim=False):
    """∂‖x‖_p/∂x_i = sign(x_i) |x_i|^{p-1} / ‖x‖_p^{p-1} (0 where the norm is 0, as PyTorch masks it)"""
    g = _expand_reduced(g, a.shape, dim, keepdim)
    y = _expand_reduced(y, a.shape, dim, keepdim)
    safe = np.where(y == 0, np.inf, y)
    if p == 2:
        return a / safe * g
    if p == 1:
        return np.sign(a) * g
    if p == np.inf:  # the gradient goes to the largest |x_i|, split evenly among ties
        mask = np.abs(a) == y
        return mask * np.sign(a) * g / mask.sum(axis=dim, keepdims=True)
    return np.sign(a) * np.abs(a) ** (p - 1) / safe ** (p - 1) * g


op("norm", "LinalgVectorNormBackward0", "‖·‖", _norm, [_norm_vjp], ["0o"],
   r"\lVert @0 \rVert", [r"\frac{@0}{\lVert @0 \rVert}"], domain=(0.5, 3.0))



def _variance(a, dim=None, correction=1, keepdim=False):
    """Var(x) = Σ (x - x̄)² / (n - correction)"""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(_rounded(lambda t: np.var(t, axis=dim, ddof=correction, keepdims=keepdim))(a), a.dtype)


def _std(a, dim=None, correction=1, keepdim=False):
    """σ(x) = √Var(x)"""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(_rounded(lambda t: np.std(t, axis=dim, ddof=correction, keepdims=keepdim))(a), a.dtype)


def _var_vjp(g, a, dim, correction, keepdim):
    """∂Var/∂x_i = 2 (x_i − x̄) / (n − correction), multiplied in PyTorch's order."""
    mean = torch_sum(a, axis=dim, keepdims=True) / _count(a.shape, dim)
    with np.errstate(divide="ignore"):  # n = correction: inf, as in PyTorch (a warning there)
        scale = np.asarray(np.float64(2.0) / (_count(a.shape, dim) - correction), g.dtype)
    return scale * _expand_reduced(g, a.shape, dim, keepdim) * (a - mean)


op("var", "VarBackward0", "var", _variance,
   [lambda g, y, a, dim=None, correction=1, keepdim=False: _var_vjp(g, a, dim, correction, keepdim)],
   ["0"], r"\operatorname{Var}(@0)", [r"\frac{2 (@0 - \bar{@0})}{n - 1}"], params={"correction": 1})
op("std", "StdBackward0", "std", _std,   # through Var: ∂σ = ∂Var / 2σ, and 0 where σ = 0 (as PyTorch)
   [lambda g, y, a, dim=None, correction=1, keepdim=False:
    _var_vjp(g / np.where(y == 0, np.inf, y * 2), a, dim, correction, keepdim)],
   ["0o"], r"\sigma(@0)", [r"\frac{@0 - \bar{@0}}{(n - 1)\,\sigma}"], params={"correction": 1})


def _prod_others(a, dim):
    """For each element, the product of all the others along ``dim`` (no division: zeros are fine)."""
    flat = a.reshape(-1) if dim is None else np.moveaxis(a, dim, -1)
    ones = np.ones(flat.shape[:-1] + (1,), a.dtype)
    left = np.cumprod(np.concatenate((ones, flat[..., :-1]), axis=-1), axis=-1)
    right = np.cumprod(np.concatenate((ones, flat[..., :0:-1]), axis=-1), axis=-1)[..., ::-1]
    others = left * right
    return others.reshape(a.shape) if dim is None else np.moveaxis(others, -1, dim)


op("prod", "ProdBackward0", "Π", lambda a: np.asarray(np.prod(a), a.dtype),
   [lambda g, y, a: g * _prod_others(a, None)], ["0"],
   r"\prod @0", [r"\prod_{j \ne i} @0_j"])
op("prod_dim", "ProdBackward1", "Π", lambda a, dim, keepdim=False: np.prod(a, axis=dim, keepdims=keepdim),
   [lambda g, y, a, dim, keepdim=False: _expand_reduced(g, a.shape, dim, keepdim) * _prod_others(a, dim)],
   ["0"], r"\prod @0", [r"\prod_{j \ne i} @0_j"], params={"dim": 0})


def _softmax(a, dim):
    """softmax(x)_i = e^{x_i} / Σ_j e^{x_j} (shifted by the max, which cancels, to avoid overflow)"""
    e = _exp(a - np.max(a, axis=dim, keepdims=True))
    return e * (1 / torch_sum(e, axis=dim, keepdims=True))


def _log_softmax(a, dim):
    """log softmax(x)_i = x_i − log Σ_j e^{x_j}"""
    shifted = a - np.max(a, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


op("softmax", "SoftmaxBackward0", "softmax", _softmax,
   [lambda g, y, a, dim: y * (g - np.sum(g * y, axis=dim, keepdims=True))], ["o"],
   r"\operatorname{softmax}(@0)", [r"\operatorname{diag}(y) - y y^{T}"], params={"dim": -1})
op("log_softmax", "LogSoftmaxBackward0", "log softmax", _log_softmax,
   [lambda g, y, a, dim: g - np.exp(y) * np.sum(g, axis=dim, keepdims=True)], ["o"],
   r"\log \operatorname{softmax}(@0)", [r"I - \mathbf{1} \operatorname{softmax}(@0)^{T}"],
   params={"dim": -1})

# --- linear algebra ---------------------------------------------------------------------------

op("mm", "MmBackward0", "@", np.matmul,
   [lambda g, y, a, b: g @ b.T, lambda g, y, a, b: a.T @ g], ["1", "0"],
   "@0 @1", ["@1^{T}", "@0^{T}"])
op("mv", "MvBackward0", "@", np.matmul,
   [lambda g, y, a, b: np.outer(g, b), lambda g, y, a, b: a.T @ g], ["1", "0"],
   "@0 @1", ["@1^{T}", "@0^{T}"])
op("dot", "DotBackward0", "·", np.dot,
   [lambda g, y, a, b: g * b, lambda g, y, a, b: g * a], ["1", "0"],
   r"@0 \cdot @1", ["@1", "@0"])
op("bmm", "BmmBackward0", "@", np.matmul,
   [lambda g, y, a, b: g @ np.swapaxes(b, -1, -2), lambda g, y, a, b: np.swapaxes(a, -1, -2) @ g],
   ["1", "0"], "@0 @1", ["@1^{T}", "@0^{T}"])

op("addmm", "AddmmBackward0", "addmm", lambda c, a, b: np.matmul(a, b) + c,  # nn.Linear: bias + x Wᵀ
   [lambda g, y, c, a, b: g,                   # unbroadcast sums the bias's gradient over the batch
    lambda g, y, c, a, b: g @ b.T, lambda g, y, c, a, b: a.T @ g], ["", "2", "1"],
   "@0 + @1 @2", ["1", "@2^{T}", "@1^{T}"])

def _logsumexp(a, dim, keepdim=False):
    """log Σ e^{x_i}, shifted by the max (which cancels) to avoid overflow"""
    m = np.max(a, axis=dim, keepdims=True)
    out = np.log(torch_sum(np.exp(a - m), axis=dim, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=dim)


op("logsumexp", "LogsumexpBackward0", "logΣexp", _logsumexp,
   [lambda g, y, a, dim, keepdim=False:
    _expand_reduced(g, a.shape, dim, keepdim) * np.exp(a - _expand_reduced(y, a.shape, dim, keepdim))],
   ["0o"], r"\log \sum e^{@0}", [r"\operatorname{softmax}(@0)"], params={"dim": 0})
op("cumsum", "CumsumBackward0", "cumsum", lambda a, dim: np.cumsum(a, axis=dim, dtype=a.dtype),
   [lambda g, y, a, dim: np.flip(np.cumsum(np.flip(g, dim), axis=dim), dim)], [""],
   r"\sum_{j \le i} @0_j", [r"\mathbb{1}[j \le i]"], params={"dim": 0})

# --- losses -------------------------------------------------------------------------------------

def _mse_loss(a, b, reduction="mean"):
    """ℓ = mean((a − b)²) (or their sum, or each one for reduction='none')"""
    d = a - b
    sq = d * d
    if reduction == "none":
        return sq
    return torch_sum(sq) / sq.size if reduction == "mean" else torch_sum(sq)


def _mse_vjp(g, a, b, reduction):
    """(2/n)(a − b)·g, multiplied in the order of PyTorch's kernel: the factor first, then g"""
    norm = a.dtype.type(2.0 / a.size if reduction == "mean" else 2.0)
    return norm * (a - b) * g


op("mse_loss", "MseLossBackward0", "MSE", _mse_loss,
   [lambda g, y, a, b, reduction="mean": _mse_vjp(g, a, b, reduction),
    lambda g, y, a, b, reduction="mean": _mse_vjp(g, b, a, reduction)], ["01", "01"],
   r"\frac{1}{n}\sum (@0 - @1)^{2}", [r"\frac{2}{n}(@0 - @1)", r"-\frac{2}{n}(@0 - @1)"],
   params={"reduction": "mean"})

# --- shapes (no arithmetic: the gradient is moved, never scaled) ------------------------------

op("view", "ViewBackward0", "view", lambda a, shape: np.reshape(a, shape),
   [lambda g, y, a, shape: np.reshape(g, a.shape)], [""],
   "@0", ["1"], params={"shape": (-1,)}, is_view=True)
op("expand", "ExpandBackward0", "expand", lambda a, shape: np.broadcast_to(a, shape),
   [lambda g, y, a, shape: g], [""],  # unbroadcast does the summing
   "@0", ["1"], params={"shape": (2, 3, 4)}, is_view=True)
op("permute", "PermuteBackward0", "permute", lambda a, dims: np.transpose(a, dims),
   [lambda g, y, a, dims: np.transpose(g, np.argsort(dims))], [""],
   "@0^{T}", ["1"], params={"dims": (1, 0)}, is_view=True)
op("transpose", "TransposeBackward0", "transpose", lambda a, d0, d1: np.swapaxes(a, d0, d1),
   [lambda g, y, a, d0, d1: np.swapaxes(g, d0, d1)], [""],
   "@0^{T}", ["1"], params={"d0": 0, "d1": -1}, is_view=True)
op("unsqueeze", "UnsqueezeBackward0", "unsqueeze", lambda a, dim: np.expand_dims(a, dim),
   [lambda g, y, a, dim: np.reshape(g, a.shape)], [""],
   "@0", ["1"], params={"dim": 0}, is_view=True)
op("squeeze", "SqueezeBackward0", "squeeze", lambda a, dim=None: np.squeeze(a, dim),
   [lambda g, y, a, dim=None: np.reshape(g, a.shape)], [""],
   "@0", ["1"], is_view=True)
op("select", "SelectBackward0", "[i]", lambda a, dim, index: a[(slice(None),) * dim + (index,)],
   [lambda g, y, a, dim, index: _scatter(g, a.shape, (slice(None),) * dim + (index,))], [""],
   "@0_{@index}", ["1"], params={"dim": 0, "index": 0}, is_view=True)
op("slice", "SliceBackward0", "[a:b]", lambda a, dim, s: a[(slice(None),) * dim + (s,)],
   [lambda g, y, a, dim, s: _scatter(g, a.shape, (slice(None),) * dim + (s,))], [""],
   "@0", ["1"], params={"dim": 0, "s": slice(0, 1)}, is_view=True)
def _unrepeat(g, shape, sizes):
    """Undo ``repeat``: every copy of an element contributed, so its gradient sums over the copies."""
    padded = (1,) * (len(sizes) - len(shape)) + tuple(shape)
    split = g.reshape([n for r, s in zip(sizes, padded) for n in (r, s)])
    return split.sum(axis=tuple(range(0, 2 * len(sizes), 2))).reshape(shape)


op("repeat", "RepeatBackward0", "repeat", lambda a, sizes: np.tile(a, sizes),
   [lambda g, y, a, sizes: _unrepeat(g, a.shape, sizes)], [""],
   "@0", ["1"], params={"sizes": (2, 1)})
op("diagonal", "DiagonalBackward0_copy", "diag", lambda a, offset=0: np.diagonal(a, offset).copy(),
   [lambda g, y, a, offset=0: _diag_scatter(g, a.shape, offset)], [""],
   r"\operatorname{diag}(@0)", ["1"])
op("diag_embed", "DiagEmbedBackward0", "diag", lambda a, offset=0: np.diag(a, offset),
   [lambda g, y, a, offset=0: np.diagonal(g, offset).copy()], [""],
   r"\operatorname{diag}(@0)", ["1"])
op("flip", "FlipBackward0", "flip", lambda a, dims: np.flip(a, dims).copy(),
   [lambda g, y, a, dims: np.flip(g, dims)], [""],
   "@0", ["1"], params={"dims": (0,)})
op("tril", "TrilBackward0", "tril", lambda a, diagonal=0: np.tril(a, diagonal),
   [lambda g, y, a, diagonal=0: np.tril(g, diagonal)], [""],
   r"\operatorname{tril}(@0)", ["1"])
op("triu", "TriuBackward0", "triu", lambda a, diagonal=0: np.triu(a, diagonal),
   [lambda g, y, a, diagonal=0: np.triu(g, diagonal)], [""],
   r"\operatorname{triu}(@0)", ["1"])
op("gather", "GatherBackward0", "gather", lambda a, dim, index: np.take_along_axis(a, index, dim),
   [lambda g, y, a, dim, index: _scatter_along(g, a.shape, dim, index)], [""],
   r"@0_{\text{index}}", ["1"], params={"dim": 0, "index": np.array([[0]])})
op("index_select", "IndexSelectBackward0", "select", lambda a, dim, index: np.take(a, index, axis=dim),
   [lambda g, y, a, dim, index: _scatter(g, a.shape, (slice(None),) * dim + (index,))], [""],
   r"@0_{\text{index}}", ["1"], params={"dim": 0, "index": np.array([0])})
op("sort", "SortBackward0", "sort", lambda a, dim=-1, descending=False: _sorted(a, dim, descending)[0],
   [lambda g, y, a, dim=-1, descending=False:
    _scatter_along(g, a.shape, dim, _sorted(a, dim, descending)[1])], ["0"],
   r"\operatorname{sort}(@0)", ["1"])
op("alias", "AliasBackward0", "alias", lambda a: a.view(),
   [lambda g, y, a: g], [""],
   "@0", ["1"], is_view=True)
op("index", "IndexBackward0", "[idx]", lambda a, key: a[key],
   [lambda g, y, a, key: _scatter(g, a.shape, key)], [""],
   "@0_{idx}", ["1"], params={"key": ([0, 0],)})
op("cat", "CatBackward0", "cat", lambda *xs, dim=0: np.concatenate(xs, axis=dim),
   [lambda g, y, *xs, i, dim=0:
    np.split(g, np.cumsum([x.shape[dim] for x in xs])[:-1], axis=dim)[i]], [""],
   r"[@0, @1]", ["1"], variadic=True)
op("stack", "StackBackward0", "stack", lambda *xs, dim=0: np.stack(xs, axis=dim),
   [lambda g, y, *xs, i, dim=0: np.take(g, i, axis=dim)], [""],
   r"[@0, @1]", ["1"], variadic=True)
op("where", "WhereBackward0", "where", lambda a, b, cond: np.where(cond, a, b),
   [lambda g, y, a, b, cond: np.where(cond, g, 0), lambda g, y, a, b, cond: np.where(cond, 0, g)],
   ["", ""], r"@0 \text{ if } c \text{ else } @1", [r"\mathbb{1}[c]", r"\mathbb{1}[\lnot c]"],
   params={"cond": np.array([True, False])})
op("clone", "CloneBackward0", "clone",
   lambda a, contiguous=False: np.array(a, copy=True, order="C" if contiguous else "K"),
   [lambda g, y, a, contiguous=False: g], [""], "@0", ["1"])
op("to", "ToCopyBackward0", "to", lambda a, dtype: a.astype(dtype),
   [lambda g, y, a, dtype: g.astype(a.dtype)], [""], "@0", ["1"], params={"dtype": np.float64})
op("copy_slices", "CopySlices", "[]=", _copy_slices,
   [lambda g, y, a, b, key: _zero_at(g, key),
    lambda g, y, a, b, key: g[key]], ["", ""],
   "@0", ["1", "1"], params={"key": (0,)})


# Variants that differ only in the name PyTorch gives them.
OPS["sum_dim"] = OPS["sum"].renamed("SumBackward1", key="sum_dim", params={"dim": (0,)})
OPS["mean_dim"] = OPS["mean"].renamed("MeanBackward1", key="mean_dim", params={"dim": (0,)})
OPS["reshape_copy"] = OPS["view"].renamed("UnsafeViewBackward0", key="reshape_copy", is_view=False)
OPS["reshape_alias"] = OPS["view"].renamed("ReshapeAliasBackward0", key="reshape_alias")
OPS["t"] = OPS["transpose"].renamed("TBackward0", key="t", params={"d0": 0, "d1": 1})
# the in-place forms of the view ops (x.t_()...): the same maths, PyTorch's names for them
OPS["t_"] = OPS["transpose"].renamed("TBackward1", key="t_", params={"d0": 0, "d1": 1})
OPS["transpose_"] = OPS["transpose"].renamed("TransposeBackward1", key="transpose_")
OPS["unsqueeze_"] = OPS["unsqueeze"].renamed("UnsqueezeBackward1", key="unsqueeze_")
OPS["squeeze_"] = OPS["squeeze"].renamed("SqueezeBackward3", key="squeeze_")
# split/chunk and unbind: PyTorch makes one node with several outputs; gradviz one node per piece
# (same name, same maths as slicing), so each piece prints as PyTorch prints it.
OPS["split"] = OPS["slice"].renamed("SplitBackward0", key="split")
OPS["split_sizes"] = OPS["slice"].renamed("SplitWithSizesBackward0", key="split_sizes")
OPS["unbind"] = OPS["select"].renamed("UnbindBackward0", key="unbind")
OPS["squeeze_dim"] = OPS["squeeze"].renamed("SqueezeBackward1", key="squeeze_dim", params={"dim": 0})
OPS["squeeze_mm"] = OPS["squeeze"].renamed("SqueezeBackward4", key="squeeze_mm", params={"dim": 0})
