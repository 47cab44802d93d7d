r"""How a gradient travels back through one op, written as a :mod:`gradviz.formula` tree.

The op table stays the one place an op's maths is written: its ``latex`` / ``dlatex`` templates
are parsed into trees here (``@0``, ``@1`` the inputs, ``@y`` the output, ``@name`` a parameter,
``n`` the count a mean divides by), and :func:`step` writes the gradient after each op the way
the maths is:

* element by element: ``g · f'(x)`` (``⊙`` next to matrix products), and a sum where the input
  was broadcast to a bigger output (``\sum_{\text{batch}}``, as PyTorch sums it);
* a matrix product ``A B``: ``g Bᵀ`` for ``A`` and ``Aᵀ g`` for ``B``, in that order;
* a reduction (``Σ``, mean): ``g`` copied back to every element, times ``1/n`` with ``n``
  filled in;
* a join (``stack``, ``cat``): input ``k`` gets its own part of ``g``, ``g[k]`` or ``g[2:4]``;
* anything else: the op's rule named, and applied as the engine applies it (:class:`Rule`).

>>> import numpy as np
>>> x = Sym("x", np.array([0.8814]))
>>> d = parse(r"1 - \tanh^{2} @0", {"0": x})
>>> d.latex(), d.latex(numbers=True)
('1 - \\tanh^{2}\\left(x\\right)', '1 - \\tanh^{2}\\left(0.8814\\right)')
>>> float(np.round(d.value(), 4)[0])
0.5
"""

import math
import re

import numpy as np

from .formula import Add, Expand, Fn, Frac, Ind, MatMul, Mul, Neg, Num, Pow, Reshape, Rule, RowSum, Sum, Sym, T, Take
from ._nn_ops import regression_loss_latex
from .ops import OPS

__all__ = ["parse", "step", "ParseError", "is_one", "times", "category", "COMPOSITES", "linear_step"]


def category(op_key):
    """How a gradient passes back through an op: its op-table ``category`` ("elementwise", "reduction",
    "reshape", "transpose", "matmul"), or None (the op's own rule, named and applied: :class:`Rule`)."""
    op = OPS.get(op_key)
    return op.category if op is not None else None


# --- the op table's templates, parsed ---------------------------------------------------------

class ParseError(ValueError):
    pass


_TOKENS = re.compile(r"\s*(@\w+|\d+(?:\.\d+)?|\\[A-Za-z]+|\\[,;! ]|[A-Za-z]|[-+^_{}()\[\]|/=<>])")
# the functions written as application (tanh²(u)), by their LaTeX name: the op-table entries that
# say ``latex_fn`` (log_2 and log_10 are read as \log with a base)
_FUNC_CMDS = {op.latex_fn: key for key, op in OPS.items() if op.latex_fn and re.fullmatch(r"\\[a-z]+", op.latex_fn)}


# ... and those written with \operatorname (sign, erf), by the name in the braces
_OPERATOR_NAMES = {op.latex_fn[len(r"\operatorname{"):-1]: key for key, op in OPS.items()
                   if op.latex_fn and op.latex_fn.startswith(r"\operatorname{") and op.numpy is not None}


def _tokenize(text):
    pos, out = 0, []
    while pos < len(text):
        m = _TOKENS.match(text, pos)
        if not m:
            if text[pos:].strip() == "":
                break
            raise ParseError(f"cannot read {text[pos:]!r}")
        tok = m.group(1)
        if tok not in (r"\,", r"\;", r"\!", "\\ ", r"\left", r"\right"):
            out.append(tok)
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text, refs):
        self.toks, self.i, self.refs = _tokenize(text), 0, refs

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want=None):
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise ParseError(f"expected {want!r}, found {tok!r}")
        self.i += 1
        return tok

    def parse(self):
        e = self.expr()
        if self.peek() is not None:
            raise ParseError(f"unexpected {self.peek()!r}")
        return e

    def expr(self):
        terms = []
        neg = False
        if self.peek() == "-":
            self.take()
            neg = True
        t = self.term()
        terms.append(Neg(t) if neg else t)
        while self.peek() in ("+", "-"):
            op = self.take()
            t = self.term()
            terms.append(Neg(t) if op == "-" else t)
        return _simplify_add(terms)

    _STOP = {None, "+", "-", ")", "]", "}", "|", ">", "<", "=", r"\le", r"\ge", "^", "_", "/"}

    def term(self):
        factors = [self.power()]
        while True:
            tok = self.peek()
            if tok == r"\cdot":
                self.take()
                factors.append(self.power())
            elif tok == "/":
                self.take()
                factors[-1] = Frac(factors[-1], self.power())
            elif tok not in self._STOP:
                factors.append(self.power())
            else:
                break
        return factors[0] if len(factors) == 1 else _simplify_mul(factors)

    def power(self):
        base = self.atom()
        if self.peek() == "^":
            self.take()
            return _simplify_pow(base, self.group())
        return base

    def group(self):
        if self.peek() == "{":
            self.take()
            e = self.expr()
            self.take("}")
            return e
        return self.atom()

    def atom(self):
        tok = self.take()
        if re.fullmatch(r"\d+(\.\d+)?", tok):
            return Num(float(tok))
        if tok.startswith("@") or tok == "n":
            key = tok[1:] if tok.startswith("@") else "n"
            if key not in self.refs:
                raise ParseError(f"nothing to put in for {tok}")
            return self.refs[key]
        if tok == "(":
            e = self.expr()
            self.take(")")
            return e
        if tok == "{":
            e = self.expr()
            self.take("}")
            return e
        if tok == "|":
            e = self.expr()
            self.take("|")
            return Fn("abs", e)
        if tok == "e" and self.peek() == "^":
            self.take()
            return Fn("exp", self.group())
        if tok == r"\frac":
            num, den = self.group(), self.group()
            if not _left_out(den):
                return Frac(num, den)
            return _ParamNum(num.v) if isinstance(num, Num) else num     # (softplus's 1/β with β = 1: left out)
        if tok == r"\pi":
            return Sym("pi", np.array(math.pi), latex=r"\pi", substitute=False)
        if tok == r"\sqrt":
            return Fn("sqrt", self.group())
        if tok == r"\sigma":
            return Fn("sigmoid", self.paren_arg())
        if tok == r"\operatorname":
            self.take("{")
            name = ""
            while self.peek() not in ("}", None):
                name += self.take()
            self.take("}")
            key = _OPERATOR_NAMES.get(name)
            if key is None:
                raise ParseError(f"no formula for {name}")
            return Fn(key, self.paren_arg() if self.peek() == "(" else self.power())
        if tok == r"\mathbb":
            self.take("{")
            self.take("1")
            self.take("}")
            self.take("[")
            items = [self.expr()]
            while self.peek() in (">", "<", "=", r"\le", r"\ge"):
                items += [self.take(), self.expr()]
            self.take("]")
            if len(items) < 3:
                raise ParseError("an indicator needs a comparison")
            return Ind(items)
        if tok in _FUNC_CMDS or tok == r"\log":
            name = _FUNC_CMDS.get(tok)
            if tok == r"\log":
                self.take("_")
                base = self.group()
                if not isinstance(base, Num) or float(base.v) not in (2.0, 10.0):
                    raise ParseError("log base")
                name = "log2" if float(base.v) == 2 else "log10"
            power = None
            if self.peek() == "^":
                self.take()
                power = self.group()
            return Fn(name, self.paren_arg() if self.peek() == "(" else self.power(), power)
        raise ParseError(f"no formula for {tok!r}")

    def paren_arg(self):
        self.take("(")
        e = self.expr()
        self.take(")")
        return e


def _simplify_add(terms):
    if len(terms) == 1:
        return terms[0]
    nums = [t for t in terms if isinstance(t, Num) or (isinstance(t, Neg) and isinstance(t.arg, Num))]
    if len(nums) == len(terms):           # constant arithmetic: 2 - 1 is 1
        return Num(sum(t.value() for t in terms))
    return terms[0] if len(terms) == 1 else Add(*terms)


def _simplify_mul(factors):
    if all(isinstance(f, Num) for f in factors):
        return Num(np.prod([f.value() for f in factors]))
    factors = [f for f in factors if not _left_out(f)]     # a parameter that is 1 (ELU's scale): no 1 ·
    return factors[0] if len(factors) == 1 else Mul(*factors)


class _ParamNum(Num):
    """A parameter of the op written as its number (ELU's alpha, softplus's beta)."""


def _left_out(e):
    """A parameter that is 1 is left out of a product (``x * 1`` written by the user stays)."""
    return isinstance(e, _ParamNum) and is_one(e)


def _simplify_pow(base, exp):
    if isinstance(exp, Num) and exp.v.ndim == 0 and float(exp.v) == 1:
        return base
    if isinstance(base, Fn) and base.power is None and base.name not in ("exp", "sqrt", "abs"):
        return Fn(base.name, base.arg, exp)
    return Pow(base, exp)


def parse(template, refs):
    """The op-table template as a tree, ``@key`` replaced by ``refs[key]`` (raises ParseError)."""
    return _Parser(template, refs).parse()


# --- one op, backwards ------------------------------------------------------------------------

def is_one(e):
    return isinstance(e, Num) and e.v.ndim == 0 and float(e.v) == 1


def times(g, d, hadamard):
    """``g`` times the local derivative ``d``, element by element (a factor 1 kept: it is a step)."""
    if isinstance(d, Neg):
        return Neg(times(g, d.arg, hadamard))
    if g is None:
        return d
    if hadamard and is_one(d):        # beside matrix products a factor 1 is only clutter
        return g
    had = hadamard and not _scalar(g) and not _scalar(d)
    head = g.factors if isinstance(g, Mul) and g.chain and g.hadamard == had else [g]
    return Mul(*head, d, hadamard=had, chain=True)


def _scalar(e):
    """Written as one number (a number copied to every element counts: 1/n · 2f, not 1/n ⊙ 2f)."""
    while isinstance(e, Reshape):
        e = e.arg
    return np.ndim(_safe_value(e)) == 0 or np.size(_safe_value(e)) == 1


def _safe_value(e):
    try:
        return e.value()
    except Exception:  # a rule that cannot run shows its name; its size is unknown
        return np.zeros(2)


def step(op_key, i, g, operands, params, out, in_shape, out_shape, dlatex, rule=None, matrix=False, count=None):
    """What the gradient ``g`` (a tree; None for the seed 1) becomes after op ``op_key``'s input ``i``.

    ``operands``: a tree per input (names or numbers); ``out``: the output's tree; ``dlatex``: the
    op table's local derivatives (one template per input); ``rule``:
    ``(template_text, apply)`` used when the op's gradient has none of the shapes this module
    writes; ``matrix``: the path holds matrix products (elementwise products are then ``⊙``);
    ``count``: the n a mean divides by.
    """
    refs = {str(k): v for k, v in enumerate(operands)}
    refs["y"] = out
    for k, v in (params or {}).items():
        if _param(k, v) is not None:
            refs[k] = _param(k, v)
    if count is not None:              # the count itself, not a symbol n nobody defined
        refs["n"] = Num(count)
    in_shape, out_shape = tuple(in_shape), tuple(out_shape)
    dl = dlatex[min(i, len(dlatex) - 1)]
    kind = category(op_key)
    if kind == "matmul":
        side = OPS[op_key].matmul_sides[i]
        if side is None:
            return _broadcast_sum(g if g is not None else Num(1), in_shape, out_shape)
        other = operands[3 - i] if op_key == "addmm" else operands[1 - i]
        gg = g if g is not None else Num(np.ones(out_shape))
        if side == "right":
            return MatMul(gg, T(other))
        if side == "left":
            return MatMul(T(other), gg)
        return MatMul(gg, other, outer=True)
    if kind == "transpose":
        if len(in_shape) < 2:
            return g if g is not None else Num(1)
        return T(g if g is not None else Num(np.ones(out_shape)))
    if kind == "join":
        e = _join_step(op_key, i, g, operands, params or {}, in_shape, out_shape)
        if e is not None:
            return e
    if kind == "reshape":
        gg = g if g is not None else Num(1)
        if op_key == "expand":
            return _broadcast_sum(gg, in_shape, out_shape)
        return Reshape(gg, in_shape)
    if op_key in COMPOSITES:
        e = COMPOSITES[op_key](i, g, operands, out, params or {}, in_shape, out_shape)
        if e is not None:
            return e
    try:
        return _local_step(op_key, i, g, dl, refs, params, in_shape, out_shape, matrix)
    except ParseError:
        if rule is None:
            raise
    jacobian, apply = rule
    return Rule(g if g is not None else Num(1), jacobian, apply, name=op_key)


# --- the composite ops, as a course writes them -------------------------------------------------
# (each returns None where its textbook form does not hold: a weight, an ignored class... then the
# op's own vjp is applied, written g · ∂y/∂x)

def _gg(g):
    return g if g is not None else Num(1)


def _scale(g, e):
    """``g · e`` for a scalar ``g`` arriving at a loss (left out when it is the seed 1)."""
    if g is None or is_one(g) or (isinstance(g, Num) and g.v.size == 1 and float(g.v.reshape(-1)[0]) == 1):
        return e
    return Mul(g, e, chain=True)


def _onehot(target, shape, dim):
    y = np.zeros(shape)
    t = np.asarray(target).astype(np.int64)
    np.put_along_axis(y, np.expand_dims(t, dim), 1.0, axis=dim) if y.ndim > 1 else y.__setitem__(t, 1.0)
    return Sym("onehot(t)", y, latex=r"\operatorname{onehot}(t)", matrix_max=(4, 4))


def _nll(i, g, operands, out, params, in_shape, out_shape):
    target = params.get("target")
    if i != 0 or target is None or params.get("weight") is not None or len(in_shape) not in (1, 2):
        return None
    t = np.asarray(target)
    if np.any(t == params.get("ignore_index", -100)):
        return None
    reduction = params.get("reduction", "mean")
    n = (in_shape[0] if len(in_shape) == 2 else 1) if reduction == "mean" else 1
    y = _onehot(t, in_shape, 1 if len(in_shape) == 2 else 0)
    if reduction == "none":
        if g is None:
            return None
        e = Neg(Mul(Expand(g, in_shape, 1, False), y, hadamard=True))
        return e
    e = Neg(Mul(Frac(Num(1), Num(n)), y) if n != 1 else y)
    if g is not None and not is_one(g):
        e = Mul(g, e, chain=True)
    e.onehot, e.n, e.g = y, n, g       # (a log-softmax below writes δ = (softmax − onehot)/N)
    return e


def _log_softmax(i, g, operands, out, params, in_shape, out_shape):
    dim = params.get("dim", -1)
    operand = operands[0]
    s = Sym("softmax", np.exp(out.v), latex=rf"\operatorname{{softmax}}\left({operand.latex()}\right)",
            matrix_max=(4, 4))
    if getattr(g, "onehot", None) is not None and dim in (-1, len(in_shape) - 1) and len(in_shape) in (1, 2):
        # cross-entropy: δ = (softmax(f) − onehot(t)) / N (each row of onehot sums to 1)
        diff = Add(s, Neg(g.onehot))
        e = Frac(diff, Num(g.n)) if g.n != 1 else diff
        return e if g.g is None or is_one(g.g) else Mul(g.g, e, chain=True)
    gg = _gg(g) if g is not None else Num(np.ones(out_shape))
    return Add(gg, Neg(Mul(s, RowSum(gg, dim), hadamard=True)))


def _softmax(i, g, operands, out, params, in_shape, out_shape):
    dim = params.get("dim", -1)
    y = Sym(out.name, out.v, latex=out.tex, matrix_max=(4, 4))
    gg = _gg(g) if g is not None else Num(np.ones(out_shape))
    return Mul(y, Add(gg, Neg(RowSum(Mul(gg, y, hadamard=True), dim))), hadamard=True)


def _mse(i, g, operands, out, params, in_shape, out_shape):
    reduction = params.get("reduction", "mean")
    a, b = operands[0], operands[1]
    diff = Add(a, Neg(b)) if i == 0 else Add(b, Neg(a))
    n = math.prod(in_shape) if reduction == "mean" else 1
    d = Mul(Frac(Num(2), Num(n)) if n != 1 else Num(2), diff)
    if reduction == "none":
        return Mul(_gg(g), d, hadamard=True) if g is not None else d
    return _scale(g, d)


def _regression(key):
    """smooth_l1_loss, huber_loss: g copied back to every element, times the piecewise derivative
    (the op table's, 1/n for the mean; written without a 1/1 for the sum); g ⊙ it for 'none'."""
    def composite(i, g, operands, out, params, in_shape, out_shape):
        reduction = params.get("reduction", "mean")
        refs = {"0": operands[0], "1": operands[1], "n": Num(math.prod(in_shape))}
        for k in ("beta", "delta"):
            if _param(k, params.get(k)) is not None:
                refs[k] = _param(k, params[k])
        piece = regression_loss_latex(key, reduction, derivative=True,
                                      **{k: v for k, v in params.items() if k in ("beta", "delta")})
        d = parse(piece, refs)
        d = d if i == 0 else Neg(d)
        if reduction == "none":
            return Mul(_gg(g), d, hadamard=True) if g is not None else d
        return _scale(g, d)
    return composite


def _bce(i, g, operands, out, params, in_shape, out_shape):
    if params.get("weight") is not None or i != 0:
        return None
    reduction = params.get("reduction", "mean")
    if reduction == "none":
        return None
    p, y = operands[0], operands[1]
    n = math.prod(in_shape) if reduction == "mean" else 1
    d = Frac(Add(p, Neg(y)), Mul(p, Add(Num(1), Neg(p))))
    return _scale(g, Mul(Frac(Num(1), Num(n)), d) if n != 1 else d)


def _bce_logits(i, g, operands, out, params, in_shape, out_shape):
    if params.get("weight") is not None or params.get("pos_weight") is not None or i != 0:
        return None
    reduction = params.get("reduction", "mean")
    if reduction == "none":
        return None
    x, y = operands[0], operands[1]
    n = math.prod(in_shape) if reduction == "mean" else 1
    d = Add(Fn("sigmoid", x), Neg(y))
    return _scale(g, Mul(Frac(Num(1), Num(n)), d) if n != 1 else d)


def _no_weight(gamma):
    """A normalisation's weight not given: the kernel's ones (or, under real PyTorch, no value)."""
    if not isinstance(gamma, Num):
        return False
    v = np.asarray(gamma.v, np.float64)
    return bool(v.size == 0 or not np.all(np.isfinite(v)) or np.all(v == 1))


def _batch_norm(i, g, operands, out, params, in_shape, out_shape):
    """Batch norm of each channel (axis 1) over the batch -- and over the positions of sequences and
    images --, n numbers: ∂β = Σ g, ∂γ = Σ g ⊙ x̂, and while training
    ∂x = γ / (n √(σ² + ε)) ⊙ (n g − Σ g − x̂ ⊙ Σ g ⊙ x̂); in eval mode ∂x = g ⊙ γ / √(σ² + ε)."""
    x, gamma = operands[0], operands[1]
    if g is None or getattr(x, "v", None) is None or x.v.ndim < 2 or i == 0 and len(in_shape) != x.v.ndim:
        return None
    axes, channel = (0,) + tuple(range(2, x.v.ndim)), (1, -1) + (1,) * (x.v.ndim - 2)
    training, eps = bool(params.get("training", True)), float(params.get("eps", 1e-5))
    if training:
        mu, var = x.v.mean(axis=axes, keepdims=True), x.v.var(axis=axes, keepdims=True)
    elif params.get("running_mean") is not None and params.get("running_var") is not None:
        mu, var = (np.asarray(params[k], np.float64).reshape(channel) for k in ("running_mean", "running_var"))
    else:
        return None
    sd = Sym("sigma", np.sqrt(var + eps), latex=r"\sqrt{\sigma^{2} + \epsilon}", substitute=False)
    xhat = Sym("xhat", (x.v - mu) / np.sqrt(var + eps), latex=r"\hat{x}", substitute=False)
    index = {2: "b", 3: "b,l"}.get(x.v.ndim, "b,h,w" if x.v.ndim == 4 else "b,d,h,w")
    if i in (1, 2):
        e = g if i == 2 else Mul(g, xhat, hadamard=True)
        return Sum(e, in_shape) if x.v.ndim == 2 else Reshape(RowSum(e, axes, index), in_shape)
    scale = Num(1) if _no_weight(gamma) else gamma if x.v.ndim == 2 else Reshape(gamma, channel[1:])
    if not training:
        return Mul(g, Frac(scale, sd), hadamard=True)
    n = Num(math.prod(x.v.shape[a] for a in axes))
    inner = Add(Mul(n, g), Neg(RowSum(g, axes, index)), Neg(Mul(xhat, RowSum(Mul(g, xhat, hadamard=True), axes, index),
                                                                 hadamard=True)))
    return Mul(Frac(scale, Mul(n, sd)), inner, hadamard=True)


def _layer_norm(i, g, operands, out, params, in_shape, out_shape):
    """Layer norm of each row (its last dimensions, normalized_shape, n numbers): ∂β = Σ_batch g,
    ∂γ = Σ_batch g ⊙ x̂ and, with h = g ⊙ γ, ∂x = (n h − Σ_j h − x̂ ⊙ Σ_j h ⊙ x̂) / (n √(σ² + ε)), the
    sums Σ_j along each row (γ is elementwise, so it stays inside the sums, unlike batch norm's)."""
    x, gamma = operands[0], operands[1]
    shape = tuple(params.get("normalized_shape", ()))
    has_weight = params.get("has_weight", True)
    if g is None or not shape or getattr(x, "v", None) is None or (has_weight and getattr(gamma, "v", None) is None):
        return None
    dims = tuple(range(x.v.ndim - len(shape), x.v.ndim))
    eps = float(params.get("eps", 1e-5))
    mu, var = x.v.mean(axis=dims, keepdims=True), x.v.var(axis=dims, keepdims=True)
    sd = Sym("sigma", np.sqrt(var + eps), latex=r"\sqrt{\sigma^{2} + \epsilon}", substitute=False)
    xhat = Sym("xhat", (x.v - mu) / np.sqrt(var + eps), latex=r"\hat{x}", substitute=False)
    if i == 2:
        return Sum(g, in_shape)
    if i == 1:
        return Sum(Mul(g, xhat, hadamard=True), in_shape)
    h = Mul(g, gamma, hadamard=True) if has_weight else g
    n = Num(math.prod(shape))
    inner = Add(Mul(n, h), Neg(RowSum(h, dims, "j")),
                Neg(Mul(xhat, RowSum(Mul(h, xhat, hadamard=True), dims, "j"), hadamard=True)))
    return Mul(Frac(Num(1), Mul(n, sd)), inner, hadamard=True)


COMPOSITES = {"nll_loss": _nll, "log_softmax": _log_softmax, "softmax": _softmax, "mse_loss": _mse,
              "binary_cross_entropy": _bce, "binary_cross_entropy_with_logits": _bce_logits,
              "native_batch_norm": _batch_norm, "native_layer_norm": _layer_norm,
              "smooth_l1_loss": _regression("smooth_l1_loss"), "huber_loss": _regression("huber_loss")}


def linear_step(i, g, x, w, in_shape):
    """A collapsed ``Linear`` (y = x Wᵀ + b), input ``i`` of (x, W, b): ``g W``, ``gᵀ x``, ``Σ_batch g``."""
    if i == 0:
        return MatMul(g, w)
    if i == 1:
        return MatMul(T(g), x)
    return Sum(g, in_shape)


def _join_step(op_key, i, g, operands, params, in_shape, out_shape):
    """What a stack or cat sends to its input ``i``: that input's rows of ``g`` (``g[i]`` for a stack,
    ``g[start:stop]`` for a cat, along its dim), None where the inputs' sizes are not known."""
    dim = params.get("dim", 0)
    if not out_shape:
        return None
    dim %= len(out_shape)
    if op_key == "stack":
        index = i
    else:
        sizes = [np.shape(e.v) for e in operands[:i]] if all(hasattr(e, "v") for e in operands[:i]) else None
        if sizes is None or len(in_shape) != len(out_shape) or any(len(s) != len(out_shape) for s in sizes):
            return None
        start = sum(s[dim] for s in sizes)
        index = slice(start, start + in_shape[dim])
    return Take(g if g is not None else Num(1), out_shape, dim, index)


def _local_step(op_key, i, g, dl, refs, params, in_shape, out_shape, matrix):
    """``g`` times the op's local derivative (parsed from the table), summed or copied as shapes need."""
    kind = category(op_key)
    if kind == "reduction" and (op_key != "mse_loss" or (params or {}).get("reduction", "mean") == "mean"):
        d = parse(dl, refs)
        if g is None:                  # the seed 1: each element's derivative, copied to every element
            return Expand(d, in_shape)
        gg = Expand(g, in_shape, (params or {}).get("dim"), (params or {}).get("keepdim", False))
        return times(gg, d, matrix)
    if kind == "elementwise":
        d = parse(dl, refs)
        return _broadcast_sum(times(g, d, matrix), in_shape, out_shape)
    raise ParseError(f"no formula for {op_key}")


def _broadcast_sum(e, in_shape, out_shape):
    if math.prod(in_shape) < math.prod(out_shape) or len(in_shape) < len(out_shape):
        return Sum(e, in_shape)
    return e


def _param(key, v):
    """A parameter as a number in a formula (clamp's missing bound is an infinite one), else None."""
    if v is None and key in ("lo", "hi"):
        return Num(-np.inf if key == "lo" else np.inf)
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return _ParamNum(v)
    return None
