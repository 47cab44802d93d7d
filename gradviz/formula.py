r"""The chain rule as expression trees: each tree is written as LaTeX *and* evaluated with numpy.

Every formula the widget shows is one of these trees, so the derivation that is displayed is
the derivation that is checked: a test evaluates the tree and compares it with the engine's
``.grad`` (``tests/test_formula.py``).  :mod:`gradviz.chain_rule` builds them from the op table
(the one place an op's maths is written) and writes how a gradient travels back through each op.

>>> import numpy as np
>>> x = Sym("x", np.array([0.8814]))
>>> d = Fn("tanh", x, power=Num(2))
>>> d.latex(), d.latex(numbers=True)
('\\tanh^{2}\\left(x\\right)', '\\tanh^{2}\\left(0.8814\\right)')
>>> float(np.round(d.value(), 4)[0])
0.5
"""

import math
import re

import numpy as np

from ._broadcast import unbroadcast
from .ops import OPS
from .value_text import number_text

__all__ = ["Expr", "Num", "Sym", "Fn", "Add", "Neg", "Mul", "MatMul", "T", "Frac", "Pow", "Ind", "Sum",
           "Take", "Rule", "RowSum", "NoHandDerivation", "Named", "Reshape", "Expand", "latex_name", "constant_latex", "fill", "plain",
           "FUNCTION_NAMES", "as_shown", "SUBSTITUTE_MAX"]

SUBSTITUTE_MAX = 4     # a named array with at most this many numbers is written out in a formula
LIST_MAX = 6           # a variadic op's inputs (@*) beyond this many, when they are x_{0}, x_{1}, ...: x_{0}, x_{1}, …, x_{19}


# --- numbers and names ------------------------------------------------------------------------

_GREEK = set("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma "
             "tau upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega".split())


_DIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def latex_name(name):
    r"""A variable name as LaTeX: ``x``, ``w_{1}``, ``\alpha``, ``\mathrm{loss}``.

    >>> [latex_name(s) for s in ("x", "w1", "x_2", "alpha", "loss", "a_b", "<s>")]
    ['x', 'w_{1}', 'x_{2}', '\\alpha', '\\mathrm{loss}', '\\mathrm{a\\_b}', '\\mathrm{<s>}']
    """
    m = re.fullmatch(r"(.+?)([₀₁₂₃₄₅₆₇₈₉]+)", name)       # c₁: the first version of c (changed in place)
    if m:
        return f"{latex_name(m.group(1))}_{{{m.group(2).translate(_DIGITS)}}}"
    m = re.fullmatch(r"([A-Za-z]|alpha|beta|gamma|delta|theta|lambda|mu|sigma|phi|omega)_?(\d+)", name)
    if m:
        return f"{latex_name(m.group(1))}_{{{m.group(2)}}}"
    if name in _GREEK:
        return "\\" + name
    if re.fullmatch(r"[A-Za-z]", name):
        return name
    escaped = re.sub(r"([\\{}_^#$%&~])", lambda m: {"\\": r"\backslash ", "^": r"\^{}", "~": r"\~{}"}
                     .get(m.group(1), "\\" + m.group(1)), name)
    return rf"\mathrm{{{escaped}}}"


def constant_latex(a):
    r"""An unnamed constant too big to write out: ``\mathbf{1}_{3 \times 4}`` (all ones), else ``C_{3 \times 4}``.

    >>> constant_latex(np.ones((3, 4)))
    '\\mathbf{1}_{3 \\times 4}'
    """
    a = np.asarray(a)
    shape = r" \times ".join(str(n) for n in a.shape)
    if a.size and np.all(a == 1):
        return rf"\mathbf{{1}}_{{{shape}}}"
    return rf"C_{{{shape}}}"


def _is_ones(e):
    """A formula that is all ones (the seed copied to a matrix): written 𝟏 beside a matrix product."""
    while isinstance(e, Reshape):
        e = e.arg
    return isinstance(e, Num) and e.v.size and bool(np.all(e.v == 1))


def _array_text(a):
    """A small array as LaTeX numbers: ``\\left[10,\\ 10\\right]``, a matrix as a ``bmatrix``."""
    a = np.asarray(a)
    if a.ndim == 0:
        return number_text(a[()])
    if a.ndim == 2:
        rows = r" \\ ".join(" & ".join(number_text(v) for v in row) for row in a)
        return rf"\left[\begin{{matrix}}{rows}\end{{matrix}}\right]"
    inner = r",\ ".join(_array_text(v) for v in a)
    return rf"\left[{inner}\right]"


def _paren(text):
    """Parentheses around ``text``; brackets if it already holds parentheses (not a function's)."""
    inner = re.sub(r"\\[A-Za-z]+(\^\{[^{}]*\})?\\left\(", "", text)
    return rf"\left[{text}\right]" if r"\left(" in inner else rf"\left({text}\right)"


_SHOWN = [False]        # True: numbers evaluate as written (rounded), see as_shown()


class as_shown:
    """``with as_shown(): e.value()`` computes a formula from its numbers *as written* (4 digits)."""

    def __enter__(self):
        _SHOWN.append(True)

    def __exit__(self, *exc):
        _SHOWN.pop()


def _as_written(v):
    """The numbers a reader sees: what :func:`number_text` wrote, read back."""
    return np.vectorize(lambda x: float(f"{x:.4g}") if np.isfinite(x) and not float(x).is_integer()
                        else x, otypes=[np.float64])(v) if np.size(v) else v


# --- templates filled as text (forward expressions, and the ops no tree is written for) ---------

_TOKEN = re.compile(r"@(\d+|y|[A-Za-z_]\w*)(\^?)")
_SIMPLE = re.compile(r"[A-Za-z0-9.]+|\\[A-Za-z]+|[A-Za-z]_\{\d+\}|\\mathrm\{[^{}]*\}")
_NUMBER = re.compile(r"-?[\d.]+(e[-+]?\d+)?|\\left\[.*")


def fill(template, subs, text=False):
    r"""An op-table template with ``@0``, ``@y``, ``@n``... replaced by ``subs[key]`` (LaTeX).

    A power's base gets parentheses unless it is one symbol; a number written after a name or
    a number gets a ``\cdot`` (``3 \cdot 2``, not ``32``); a negative number is parenthesised.
    Keys missing from ``subs`` are left as they are.  ``text=True``: a plain-text template (a node's
    symbol, ``^@n``): parentheses and ``·`` as characters.

    >>> fill("@n @0^{@n - 1}", {"n": "2", "0": "x + 1"})
    '2 \\left(x + 1\\right)^{2 - 1}'
    >>> fill(r"e^{@0}", {"0": "-2"})
    'e^{\\left(-2\\right)}'
    """
    if "@*" in template:              # a variadic op's inputs, every one in order (stack, cat)
        template = template.replace("@*", listed([subs[k] for k in sorted((k for k in subs if str(k).isdigit()),
                                                                          key=int)], text))

    def one(m):
        key, power = m.group(1), m.group(2)
        if key not in subs:
            return m.group(0)
        out = str(subs[key])
        around = ("(", ")") if text else (r"\left(", r"\right)")
        numberish = _NUMBER.fullmatch(out) is not None
        if numberish and out.startswith("-") and template.strip() != m.group(0):
            out = around[0] + out + around[1]
        elif power and not _SIMPLE.fullmatch(out) and not out.startswith(around[0]):
            out = around[0] + out + around[1]        # the base of a power
        before = template[:m.start()].rstrip()
        if numberish and re.search(r"(\d|[})]|(?<![\\A-Za-z])[A-Za-z])$", before):
            out = ("· " if text else r"\cdot ") + out
        return out + power

    return _TOKEN.sub(one, template)


def listed(items, text=False):
    r"""A variadic op's inputs, in order, as the ``@*`` of its template: every name, or, for a long run
    of one indexed name, the textbook's ``x_{0}, x_{1}, \ldots, x_{19}`` (every symbol it stands for
    is then plain from the first and the last).

    >>> listed(["a", "b", "c"])
    'a, b, c'
    >>> listed([f"x_{{{k}}}" for k in range(20)])
    'x_{0}, x_{1}, \\ldots, x_{19}'
    """
    items = [str(x) for x in items]
    if len(items) > LIST_MAX:
        runs = [re.fullmatch(r"(.+)_\{(\d+)\}", x) for x in items]
        if all(runs) and len({m.group(1) for m in runs}) == 1 and \
                [int(m.group(2)) for m in runs] == list(range(int(runs[0].group(2)), int(runs[0].group(2)) + len(items))):
            items = items[:2] + ["…" if text else r"\ldots"] + items[-1:]
    return ", ".join(items)


def _frac_text(m):
    """``a/b`` for a caption, a sum or difference in parentheses (``(s − y)/4``, not ``s − y/4``)."""
    a, b = m.group(1).strip(), m.group(2).strip()
    wrap = lambda t: f"({t})" if re.search(r"\s[-+]\s|\s", t) else t
    return f"{wrap(a)}/{wrap(b)} "


# the functions the op table writes by name (its entries' ``latex_fn``: \tanh, \ln, \log of \log_{2}...),
# longest first (σ and \operatorname{sign} are written otherwise)
FUNCTION_NAMES = sorted({m.group(1) for op in OPS.values() if op.latex_fn
                         for m in [re.match(r"\\([a-z]+)", op.latex_fn)] if m} - {"sigma", "operatorname"},
                        key=lambda w: (-len(w), w))

_PLAIN = [
    (r"\\_", "_"),
    (r"\\operatorname\{([^{}]+)\}", r"\1"), (r"\\mathrm\{([^{}]+)\}", r"\1"),
    (r"\\left\(", "("), (r"\\right\)", ")"), (r"\\delta", "δ"), (r"\\text\{batch\}", "batch"),
    (r"\\frac\{([^{}]*)\}\{([^{}]*)\}", _frac_text),
    (r"\\sqrt\{([^{}]*)\}", r"√(\1)"),
    (r"\\left\|", "|"), (r"\\right\|", "|"), (r"\\lVert", "‖"), (r"\\rVert", "‖"),
    (r"\\left\(", "("), (r"\\right\)", ")"), (r"\\left\[", "["), (r"\\right\]", "]"),
    (r"\\cdot", "·"), (r"\\odot", "⊙"), (r"\\ldots", "…"), (r"\\sum", "Σ"), (r"\\sigma", "σ"),
    *[(r"\\" + w, w) for w in FUNCTION_NAMES], (r"\\max", "max"), (r"\\min", "min"),
    (r"\\operatorname\{([^{}]+)\}", r"\1"), (r"\\mathrm\{([^{}]+)\}", r"\1"), (r"\\mathbb\{1\}", "𝟙"),
    (r"\\text\{([^{}]*)\}", r"\1"), (r"\\lnot", "¬"), (r"\\le", "≤"), (r"\\infty", "∞"), (r"\\,", " "),
    (r"\^\{T\}", "ᵀ"), (r"\^\{2\}", "²"), (r"\^\{([^{}]*)\}", r"^\1"),
    (r"(?<=[A-Za-z])_\{(\d+)\}", lambda m: m.group(1).translate(_SUBSCRIPTS)), (r"_\{([^{}]*)\}", r"_\1"),
]


def plain(latex):
    r"""A formula as plain text for a caption: ``x + 1``, ``a²``, ``Σ y``, ``tanh(b)``.

    >>> plain(r"1 - \tanh^{2}\left(b\right)")
    '1 - tanh²(b)'
    """
    text = latex
    for pat, rep in _PLAIN:
        text = re.sub(pat, rep, text)
    return re.sub(r"\s+", " ", text.replace("{", "").replace("}", "")).strip()


# --- the tree ---------------------------------------------------------------------------------

class Expr:
    """A formula: ``latex(numbers=False)`` writes it, ``value()`` computes it (float64)."""

    prec = 9            # how tightly it binds: 1 sums, 2 negation, 3 products, 9 atoms
    matrix = False      # holds a matrix product or transpose (then elementwise products are ⊙)

    def latex(self, numbers=False):
        raise NotImplementedError

    def value(self):
        raise NotImplementedError

    def wrap(self, numbers, below):
        text = self.latex(numbers)
        return _paren(text) if self.prec < below else text


    def size(self):
        return 1 + sum(c.size() for c in self.children())

    def children(self):
        return ()

    def __repr__(self):
        return f"<{type(self).__name__} {self.latex()}>"


class Num(Expr):
    """A number (or a small array) written as its value."""

    def __init__(self, value):
        self.v = np.asarray(value, dtype=np.float64)

    def latex(self, numbers=False):
        return _array_text(self.v)

    def value(self):
        return _as_written(self.v) if _SHOWN[-1] else self.v

    @property
    def prec(self):
        return 2 if self.v.ndim == 0 and self.v < 0 else 9


class Sym(Expr):
    """A named tensor: its name, or with ``numbers=True`` its value when that is short enough.

    ``scalar_ok``: an array whose elements are all equal may be written as one number (only
    where every product is elementwise, so the number means "each element").
    """

    def __init__(self, name, value, latex=None, substitute=True, scalar_ok=False, matrix_max=None):
        self.name, self.v = name, np.asarray(value, dtype=np.float64)
        self.tex = latex or latex_name(name)
        self.substitute, self.scalar_ok = substitute, scalar_ok
        self.matrix_max = matrix_max        # (rows, columns): a matrix up to this size is written out

    def shown(self, numbers):
        if not numbers or not self.substitute:
            return None
        v = self.v
        if v.size == 1:
            return Num(v.reshape(()))
        if self.scalar_ok and v.size and np.all(v == v.reshape(-1)[0]):
            return Num(v.reshape(-1)[0])
        if v.ndim == 1 and v.size <= SUBSTITUTE_MAX:
            return Num(v)
        if self.matrix_max and v.ndim == 2 and v.shape[0] <= self.matrix_max[0] and v.shape[1] <= self.matrix_max[1]:
            return Num(v)
        return None

    def latex(self, numbers=False):
        n = self.shown(numbers)
        return n.latex() if n is not None else self.tex

    def value(self):
        n = self.shown(True) if _SHOWN[-1] else None
        if n is not None:
            return np.broadcast_to(n.value(), self.v.shape)
        return self.v


    @property
    def prec(self):
        return 9


class Fn(Expr):
    """``f(arg)``, or ``f^{k}(arg)`` (the k-th power of f's value): ``name`` is the op-table entry
    whose ``latex_fn`` writes it and whose ``numpy`` computes it (exp, sqrt, abs have forms of their own)."""

    def __init__(self, name, arg, power=None):
        self.name, self.arg, self.power = name, arg, power

    def children(self):
        return (self.arg,) + ((self.power,) if self.power is not None else ())

    @property
    def matrix(self):
        return self.arg.matrix

    def latex(self, numbers=False):
        arg = self.arg.latex(numbers)
        if self.name == "exp":
            text = f"e^{{{arg}}}"
        elif self.name == "sqrt":
            text = rf"\sqrt{{{arg}}}"
        elif self.name == "abs":
            text = rf"\left|{arg}\right|"
        else:
            head = OPS[self.name].latex_fn
            if self.power is not None:
                head += "^{" + self.power.latex(numbers) + "}"
            return rf"{head}\left({arg}\right)"
        if self.power is not None:
            return rf"\left({text}\right)^{{{self.power.latex(numbers)}}}"
        return text

    def value(self):
        with np.errstate(all="ignore"):
            v = OPS[self.name].numpy(self.arg.value())
            return v if self.power is None else np.power(v, self.power.value())


class Add(Expr):
    prec = 1

    def __init__(self, *terms):
        self.terms = terms

    def children(self):
        return self.terms

    @property
    def matrix(self):
        return any(t.matrix for t in self.terms)

    def latex(self, numbers=False):
        out = self.terms[0].latex(numbers)
        for t in self.terms[1:]:
            if isinstance(t, Neg):
                out += " - " + t.arg.wrap(numbers, 2)
            else:
                text = t.latex(numbers)
                out += " + " + (_paren(text) if text.startswith("-") else text)
        return out

    def value(self):
        return sum(t.value() for t in self.terms)


class Neg(Expr):
    prec = 2

    def __init__(self, arg):
        self.arg = arg

    def children(self):
        return (self.arg,)

    @property
    def matrix(self):
        return self.arg.matrix

    def latex(self, numbers=False):
        text = self.arg.latex(numbers)
        return "-" + (_paren(text) if self.arg.prec <= 2 or text.startswith("-") else text)

    def value(self):
        return -self.arg.value()


class Mul(Expr):
    """An elementwise (or scalar) product, written with ``·`` -- or ``⊙`` when ``hadamard``.

    A number before a name is written next to it (``2 a``).  ``chain`` marks the product the chain
    rule builds factor by factor; a factor that is itself a product (a local derivative such as
    ``2 a``) keeps its parentheses, so each factor of the chain stays visible.
    """

    prec = 3

    def __init__(self, *factors, hadamard=False, chain=False):
        flat = []
        for f in factors:
            flat.extend(f.factors if isinstance(f, Mul) and f.hadamard == hadamard and not f.chain
                        and not chain else [f])
        self.factors, self.hadamard, self.chain = flat, hadamard, chain

    def children(self):
        return self.factors

    @property
    def matrix(self):
        return any(f.matrix for f in self.factors)

    def latex(self, numbers=False):
        out = ""
        for k, f in enumerate(self.factors):
            text = f.latex(numbers)
            if f.prec < 3 or (k and text.startswith("-")) or (f.prec == 3 and (self.hadamard or self.chain)
                                                                and not self._same_chain(f)):
                text = _paren(text)
            if k == 0:
                out = text
            elif (not self.hadamard and not self.chain and isinstance(self.factors[k - 1], Num)
                  and re.match(r"[A-Za-z]|\\(?!left|frac|cdot|infty|mathrm\{nan)", text)):
                out += " " + text
            else:
                out += (r" \odot " if self.hadamard else r" \cdot ") + text
        return out

    def _same_chain(self, f):
        """A chain product seen through a reshape (a mean's copy-back): it continues this product."""
        while isinstance(f, Reshape):
            f = f.arg
        return isinstance(f, Mul) and f.chain and f.hadamard == self.hadamard and self.chain

    def value(self):
        with np.errstate(all="ignore"):
            out = self.factors[0].value()
            for f in self.factors[1:]:
                out = out * f.value()
            return out


class MatMul(Expr):
    """A matrix product ``a b`` (``outer``: a column times a row, for ``mv``'s matrix)."""

    prec = 3
    matrix = True

    def __init__(self, a, b, outer=False):
        self.a, self.b, self.outer = a, b, outer

    def children(self):
        return (self.a, self.b)

    def latex(self, numbers=False):
        a, b = self.a.latex(numbers), self.b.latex(numbers)
        # a product of numbers and one matrix needs no parentheses before a matrix product
        # ((c·A) B = c·(A B)); an elementwise product of matrices does
        scaled = isinstance(self.a, Mul) and not self.a.hadamard
        a = r"\mathbf{1}" if _is_ones(self.a) else \
            _paren(a) if self.a.prec < 3 or (self.a.prec == 3 and not isinstance(self.a, MatMul) and not scaled) else a
        b = r"\mathbf{1}" if _is_ones(self.b) else _paren(b) if self.b.prec <= 3 or b.startswith("-") else b
        if self.outer:                  # mv's matrix: the column g times the row vᵀ
            return rf"{a}\, {b}^{{T}}"
        if b.startswith(r"\mathrm") or a.endswith("}") and r"\mathrm" in a.rsplit(" ", 1)[-1]:
            return rf"{a}\, {b}"            # δ model.2.weight, not δmodel.2.weight
        return f"{a} {b}"

    def value(self):
        a, b = self.a.value(), self.b.value()
        return np.outer(a, b) if self.outer else a @ b


class T(Expr):
    """The transpose ``aᵀ``."""

    matrix = True

    def __init__(self, arg):
        self.arg = arg

    def children(self):
        return (self.arg,)

    def latex(self, numbers=False):
        text = self.arg.latex(numbers)
        return (_paren(text) if self.arg.prec < 9 or isinstance(self.arg, Frac) else text) + "^{T}"

    def value(self):
        v = self.arg.value()
        return v.T if v.ndim >= 2 else v


class Frac(Expr):
    def __init__(self, a, b):
        self.a, self.b = a, b

    def children(self):
        return (self.a, self.b)

    @property
    def matrix(self):
        return self.a.matrix or self.b.matrix

    def latex(self, numbers=False):
        return rf"\frac{{{self.a.latex(numbers)}}}{{{self.b.latex(numbers)}}}"

    def value(self):
        with np.errstate(all="ignore"):
            return self.a.value() / self.b.value()


class Pow(Expr):
    def __init__(self, base, exp):
        self.base, self.exp = base, exp

    def children(self):
        return (self.base, self.exp)

    @property
    def matrix(self):
        return self.base.matrix

    def latex(self, numbers=False):
        base = self.base.latex(numbers)
        if self.base.prec < 9 or base.startswith("-") or isinstance(self.base, (Pow, Frac, T)) \
                or (isinstance(self.base, Fn) and self.base.name not in ("abs",)) or r"\left[" in base:
            base = _paren(base)
        return f"{base}^{{{self.exp.latex(numbers)}}}"

    def value(self):
        with np.errstate(all="ignore"):
            return np.power(self.base.value(), self.exp.value())


class Ind(Expr):
    """The indicator ``𝟙[a > b]``: 1 where the comparison holds, else 0 (chains: ``lo ≤ x ≤ hi``)."""

    _OPS = {">": (">", np.greater), "<": ("<", np.less), "=": ("=", np.equal),
            r"\le": (r"\le", np.less_equal), r"\ge": (r"\ge", np.greater_equal)}

    def __init__(self, items):
        self.items = items       # [expr, op, expr, op, expr, ...]

    def children(self):
        return tuple(self.items[::2])

    def latex(self, numbers=False):
        parts = [self.items[0].latex(numbers)]
        for k in range(1, len(self.items), 2):
            parts += [self._OPS[self.items[k]][0], self.items[k + 1].latex(numbers)]
        return r"\mathbb{1}\left[" + " ".join(parts) + r"\right]"

    def value(self):
        out = True
        for k in range(1, len(self.items), 2):
            out = out & self._OPS[self.items[k]][1](self.items[k - 1].value(), self.items[k + 1].value())
        return np.asarray(out, dtype=np.float64)


class _Shaped(Expr):
    """A formula of one argument brought to ``shape`` (a sum over copies, a reshape, a copy-back)."""

    def __init__(self, arg, shape):
        self.arg, self.shape = arg, tuple(shape)

    def children(self):
        return (self.arg,)

    @property
    def matrix(self):
        return self.arg.matrix


class Sum(_Shaped):
    """The sum a broadcast input gets back: over the copies PyTorch made (``\\sum_{\\text{batch}}``)."""

    def latex(self, numbers=False):
        under = "" if len(self.shape) == 0 or math.prod(self.shape) == 1 else r"_{\text{batch}}"
        arg = self.arg.latex(numbers)
        return rf"\sum{under} {arg if isinstance(self.arg, Named) else _paren(arg)}"     # Σ δ

    def value(self):
        return unbroadcast(np.asarray(self.arg.value()), self.shape)   # as the engine sums it


class Reshape(_Shaped):
    """The same numbers in another shape (views, squeeze...): written as its argument."""

    @property
    def prec(self):
        return self.arg.prec

    def latex(self, numbers=False):
        return self.arg.latex(numbers)

    def value(self):
        v = np.asarray(self.arg.value())
        if v.size == 1 and math.prod(self.shape) != 1:    # one number standing for every element
            v = np.broadcast_to(v.reshape(()), self.shape)
        return np.reshape(v, self.shape)


class Expand(Reshape):
    """A reduction's gradient copied back to every element (``g`` for each ``x_i``): written as ``g``."""

    def __init__(self, arg, shape, dim=None, keepdim=False):
        super().__init__(arg, shape)
        self.dim, self.keepdim = dim, keepdim

    def value(self):
        g = np.asarray(self.arg.value())
        if self.dim is not None and not self.keepdim:
            dims = (self.dim,) if isinstance(self.dim, int) else tuple(self.dim)
            g = np.expand_dims(g, tuple(d % len(self.shape) for d in dims))
        return np.broadcast_to(g, self.shape)


_ONLY_NUMBERS = re.compile(r"(?:[-\d.\s]|\\cdot|\\left\(|\\right\))+")


class Take(Expr):
    r"""The part of a joined tensor's gradient that belongs to one of its inputs, indexed as PyTorch
    indexes it: ``g[1]`` (row 1 of a stack), ``g[2:4]`` (rows 2 and 3 of a cat), ``g[:, 1]`` along dim 1.
    A gradient written as one number (each element's) is that number in every part: written as it is.

    >>> g = Sym("g", np.arange(6.0).reshape(3, 2))
    >>> t = Take(g, (3, 2), 0, 1)
    >>> t.latex(), t.value().tolist()
    ('g\\left[1\\right]', [2.0, 3.0])
    >>> Take(Num(np.arange(4.0)), (4,), 0, slice(1, 3)).latex()
    '\\left[0,\\ 1,\\ 2,\\ 3\\right]\\left[1:3\\right]'
    """

    def __init__(self, arg, shape, dim, index):
        self.arg, self.shape, self.dim, self.index = arg, tuple(shape), dim, index

    def children(self):
        return (self.arg,)

    @property
    def matrix(self):
        return self.arg.matrix

    def key(self):
        """The index as PyTorch code writes it: ``1``, ``2:4``, ``:, 1``."""
        i = self.index
        k = f"{i.start}:{i.stop}" if isinstance(i, slice) else str(i)
        return ", ".join([":"] * self.dim + [k])

    def _one_number(self):
        """The gradient is written as numbers only (``1 · 2``) and is that number everywhere."""
        if not _ONLY_NUMBERS.fullmatch(self.arg.latex()):
            return False
        try:
            v = np.asarray(self.arg.value())
        except Exception:  # a rule that cannot run: written with its index
            return False
        return v.size > 0 and bool(np.all(v == v.reshape(-1)[0]))

    @property
    def prec(self):
        return self.arg.prec if self._one_number() else 9

    def latex(self, numbers=False):
        text = self.arg.latex(numbers)
        if self._one_number():
            return text
        if not (_SIMPLE.fullmatch(text) or text.startswith(r"\left[")):
            text = _paren(text)
        return rf"{text}\left[{self.key()}\right]"

    def value(self):
        v = np.asarray(self.arg.value())
        if self._one_number():          # one number for every element: every part of it too
            return v.reshape(-1)[0] if v.size else v
        v = np.broadcast_to(v, self.shape)
        return v[(slice(None),) * self.dim + (self.index,)]


class NoHandDerivation(ValueError):
    """A step whose gradient no rule here can write (a custom Function, an op PyTorch alone knows)."""


class Rule(Expr):
    r"""An op whose gradient has none of the shapes above: ``g`` times the op's Jacobian, written as
    the chain rule's own factor (``∂L/∂s · ∂s/∂f``), and computed by the op's vjp (the op table's, or
    what the engine sent when no rule here knows the op: then ``hand`` is False).
    """

    prec = 3

    def __init__(self, g, jacobian, apply, hand=True, name=""):
        self.g, self.jacobian, self.apply, self.hand, self.name = g, jacobian, apply, hand, name

    def children(self):
        return (self.g,)

    @property
    def matrix(self):
        return True

    def latex(self, numbers=False):
        if _is_ones(self.g) or (isinstance(self.g, Num) and self.g.v.size == 1 and float(self.g.v) == 1):
            return self.jacobian
        return self.g.wrap(numbers, 3) + r" \cdot " + self.jacobian

    def value(self):
        out = self.apply(np.asarray(self.g.value()))
        if out is None:
            raise NoHandDerivation(self.name)
        return out


class RowSum(_Shaped):
    """``Σ_j a``: the sum along the dimension a softmax normalises (kept, so it broadcasts back)."""

    prec = 9

    def __init__(self, arg, dim, index="j"):
        super().__init__(arg, ())
        self.dim, self.index = dim, index

    def latex(self, numbers=False):
        return rf"\sum_{{{self.index}}} {self.arg.wrap(numbers, 9)}"

    def value(self):
        return np.sum(np.asarray(self.arg.value()), axis=self.dim, keepdims=True)


class Named(Expr):
    r"""A gradient written by its name (``δ``) and valued by its definition, so a matrix chain rule
    fits a line: ``Xᵀ[(δ W₂ᵀ) ⊙ (1 − tanh²(b))]`` beside ``δ = ∂loss/∂d = 1/n · (2f)``, written
    once (:meth:`definition`).  Evaluating the line evaluates the definition as it is shown.

    >>> d = Named(r"\delta", Mul(Num(0.25), Sym("f", np.array([2.]))), "g_d")
    >>> print(d.latex(), "|", d.definition())
    \delta | \delta = g_d = 0.25 f = 0.25 \cdot 2
    >>> float(d.value()[0])
    0.5
    """

    def __init__(self, tex, expr, of=None):
        self.tex, self.expr, self.of = tex, expr, of
        self.matrix = expr.matrix

    def latex(self, numbers=False):
        return self.tex

    def value(self):
        return self.expr.value()

    def definition(self, value=None):
        """``δ = ∂o/∂d = formula = formula with its numbers [= value]``, repeats left out."""
        parts = [self.tex] + ([self.of] if self.of else []) + [self.expr.latex(), self.expr.latex(numbers=True)]
        parts += [value] if value else []
        return " = ".join(p for k, p in enumerate(parts) if k == 0 or p != parts[k - 1])
