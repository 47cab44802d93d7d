r"""The hand derivation beside the graph: the chain rule along every path, built from the op table.

For each leaf ``x`` and each path from the root down to it, the line reads

    ∂o/∂x = ∂o/∂c · ∂c/∂y · … = 0.5 · 1 · 5 · 2a · 1 = 0.5 · 1 · 5 · 2·2 · 1 = 10

where every local derivative is the op's ``dlatex`` (``gradviz/ops.py``) with the input names, then
the input values, put in.  The paths' sum is the chain rule's answer; the widget puts the engine's
``.grad`` next to it.  LaTeX becomes MathML here, in Python (latex2mathml), and the MathML is
cleaned to a whitelist of MathML tags, so nothing a user writes can run in the page.
"""

import html
import inspect
import math
import re

import numpy as np

from .. import chain_rule, formula
from .._nn_ops import weighted_nll_latex
from .._broadcast import unbroadcast
from ..trace.model import Value, array_of
from ..value_text import format_line, number_text, short
from ._lesson import latex_name
from .sanitize import sanitize_mathml

__all__ = ["mathml", "build_derivation", "chain_gradients", "expected_gradients",
           "check", "UserCodeError", "StepMath", "Delta", "path_expr", "step_expr"]

MAX_PATHS = 6          # paths written out per leaf; more, and backprop's own form is written instead
MAX_BACKPROP = 80      # ... for graphs of up to this many ops (each tensor's gradient once, numbered)
MAX_FACTORS = 10       # factors written out per path before "⋯"
MAX_DEFS = 32          # forward definitions written out
MAX_LEAVES = 8
MAX_WRITTEN = 64       # a longer path is written as its chain of ∂s and its value, not as one formula


# --- LaTeX -> safe MathML ---------------------------------------------------------------------

# \tanh x: a thin space after a function's name (latex2mathml would write "tanhx")
_SPACED_FUNCTIONS = re.compile(r"\\(%s) (?=[A-Za-z\\])" % "|".join(formula.FUNCTION_NAMES + ["exp", "max", "min",
                                                                                          "sigma"]))


def mathml(latex, display=False):
    """``{"latex": ..., "mathml": ...}`` for one formula (MathML cleaned; on a LaTeX error, the text)."""
    from latex2mathml.converter import convert

    spaced = _SPACED_FUNCTIONS.sub(r"\\\1\\, ", latex)
    try:
        markup = convert(spaced, display="block" if display else "inline")
    except Exception:  # latex2mathml raises many kinds; show the source instead of failing
        markup = f'<math><mtext>{html.escape(latex, quote=False)}</mtext></math>'
    return {"latex": latex, "mathml": sanitize_mathml(markup)}


# --- filling in the op table's templates ------------------------------------------------------

def _param_text(v):
    if v is None:
        return r"\infty"
    if isinstance(v, (int, float, np.integer, np.floating)):
        return short(v)
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(_param_text(x) for x in v) + ")"
    return re.sub(r"[^A-Za-z0-9_.,()\- ]", "", str(v)) or "?"


LINE_VALUES = 3        # a path's line ends with its value when that is at most this many numbers


MATRIX_ROWS, MATRIX_COLS = 2, 3      # a matrix up to 2×3 is written out (as the graph draws it)


def value_latex(a, limit=4, rows=MATRIX_ROWS, cols=MATRIX_COLS):
    r"""A value as LaTeX: a number, ``[1, 2]`` for a short vector, a matrix up to 2×3 in full; None
    for anything bigger.

    >>> print(value_latex(np.array([[0., 30.], [30., 0.]])))
    \left[\begin{matrix}0 & 30 \\ 30 & 0\end{matrix}\right]
    """
    if a is None:
        return None
    a = np.asarray(a)
    if a.size == 1 or (a.size and np.all(a == a.reshape(-1)[0])):
        first = a.reshape(-1)[0]
        return number_text(first) if a.dtype.kind == "f" and np.isinf(first) else short(first)   # \infty
    if a.ndim == 2 and a.shape[0] <= rows and a.shape[1] <= cols:
        rows = r" \\ ".join(" & ".join(short(v) for v in row) for row in a)
        return rf"\left[\begin{{matrix}}{rows}\end{{matrix}}\right]"
    if a.ndim > 1 or a.size > limit:
        return None
    return short(a).replace("[", r"\left[").replace("]", r"\right]").replace(", ", r",\ ")


def fill(template, lesson, node, numeric):
    """``template`` with ``@0``/``@1``/``@y``/``@param`` replaced by names, or by values
    (written by :func:`gradviz.formula.fill`; a mean's ``n`` is filled in as its count)."""
    kinds = lesson.kinds(node)
    subs = {}
    for i, (kind, thing) in enumerate(kinds):
        text = None
        if numeric or kind == "const" and (thing is None or thing.name is None):
            text = value_latex(lesson.inputs(node)[i])      # None: too big to write, keep the name
        # (one tensor read twice is told apart, x⁽¹⁾ and x⁽²⁾, as the definition's note says)
        named = lesson.input_name(node, i)
        subs[str(i)] = text if text is not None else _input_name(lesson, node, i) if named and kind != "const" \
            else latex_name(named or "?")
    subs["y"] = (value_latex(lesson.output(node)) if numeric else None) or latex_name(lesson.name(node))
    for key, v in node.params.items():
        subs.setdefault(key, _param_text(v))
    count = _count(node, node.inputs[0].shape, np.shape(lesson.output(node))) if node.inputs else None
    if count is not None:
        template = re.sub(r"(?<![\\A-Za-z@])n(?![A-Za-z])", str(count), template)
    out = formula.fill(template, subs)
    out = re.sub(r"\\frac\{1\}\{1\}\s*", "", out)          # a loss summed, not averaged: no 1/1
    return re.sub(r"@\d+", "?", out)


def forward_latex(lesson, node):
    """What ``node`` computed, as written in the definitions: ``\\tanh\\left(b\\right)``, ``X W_{1}``."""
    if getattr(node, "members", None) and node.name == "Linear" and len(node.inputs) in (2, 3):
        # a collapsed Linear: x Wᵀ + b, so the W and b of its derivatives are defined where first used
        x, w, *b = [latex_name(lesson.input_name(node, i) or "?") for i in range(len(node.inputs))]
        return rf"{x}\, {w}^{{T}}" + (f" + {b[0]}" if b else "")
    if chain_rule.category(node.key) == "elementwise" and node.op is not None \
            and all(i.data is not None for i in node.inputs):
        refs = {str(i): operand(lesson, node, i) for i in range(len(node.inputs))}
        for key, v in node.params.items():
            if chain_rule._param(key, v) is not None:
                refs[key] = chain_rule._param(key, v)
        if getattr(node.op, "coefficient_first", False) and isinstance(refs.get("1"), formula.Num) \
                and not isinstance(refs.get("0"), formula.Num):
            refs["0"], refs["1"] = refs["1"], refs["0"]        # 5 * b is written 5 b, as drawn
        try:
            return chain_rule.parse(node.latex, refs).latex()
        except chain_rule.ParseError:
            pass
    weight = node.params.get("weight") if node.key in ("nll_loss", "nll_loss2d") else None
    if weight is not None:      # cross_entropy(weight=w): each row's term weighted by its class's w
        return fill(weighted_nll_latex(node.key, node.params.get("reduction", "mean"),
                                       weight_name(lesson, node)[0]), lesson, node, False)
    return fill(node.latex, lesson, node, False)


def weight_name(lesson, node):
    """The class weights' symbol (LaTeX, text): ``w``, or another letter when a tensor is called w
    (or when w is the image loss's width index)."""
    first = [] if node.key == "nll_loss2d" else [("w", "w")]
    return _free_name(lesson, *first, (r"\omega", "ω"), (r"\kappa", "κ"))


def _factor(latex):
    """Parenthesise a factor that is a sum or difference."""
    body = latex.strip()
    if re.search(r"(?<!^)(?<![{(^_])\s[+-]\s", body) or body.startswith("-"):
        return rf"\left({body}\right)"
    return body


def _term(text):
    return rf"\left({text}\right)" if text.startswith("-") else text


def _paren(text, n=2):
    """Parentheses around a product of ``n`` factors (one factor needs none)."""
    return rf"\left({text}\right)" if n > 1 else text


def _collected(expr):
    """``v ⊙ 30``: a seed times a product that is one number everywhere, that number worked out."""
    if isinstance(expr, formula.Reshape):
        expr = expr.arg
    if not (isinstance(expr, formula.Mul) and expr.hadamard and len(expr.factors) == 2):
        return []
    v, inner = expr.factors
    value = np.asarray(inner.value())
    if not isinstance(v, formula.Sym) or value.size == 0 or not np.all(value == value.reshape(-1)[0]):
        return []
    return [f"{v.tex} \\odot {_term(short(value.reshape(-1)[0]))}"]


def _partial(top, bottom):
    return rf"\frac{{\partial {top}}}{{\partial {bottom}}}"


# --- the numbers: the chain rule done by hand -------------------------------------------------

def _vjp(lesson, node, i, g):
    """What the chain rule sends from ``node`` to its input ``i`` when ``g`` arrives.

    A step the op table cannot differentiate (a custom Function, a node gradviz does not know)
    gives what the engine really sent when ``g`` is what it received, else None: its code is
    never run again here.
    """
    op = node.op
    args = lesson.inputs(node)
    if op is not None and op.multi_output:   # split/unbind: one gradient per piece, which this
        return None                           # one-output-per-node account cannot add up by hand
    if op is None and getattr(node, "members", None):
        got = _layer_vjp(lesson, node, i, g)
        if got is not None:
            return got
    if op is None or any(a is None for a in args):
        return _recorded_vjp(lesson, node, i, g)
    try:
        return _table_vjp(node, i, g, args, lesson.output(node))
    except Exception:  # a rule missing what it needs (a statistic PyTorch did not save): the engine's numbers
        return _recorded_vjp(lesson, node, i, g)


def _table_vjp(node, i, g, args, out):
    """The op table's rule for input ``i`` of ``node``, given what arrived (``g``) and what it read."""
    op, params = node.op, node.params
    rule = op.vjp(i)
    with np.errstate(all="ignore"):         # nan and inf are shown as they are, like the engine's
        gi = rule(g, out, *args, i=i, **params) if op.variadic else rule(g, out, *args, **params)
    gi = np.asarray(gi)
    shape, dtype = node.inputs[i].shape, node.inputs[i].dtype
    if gi.shape != shape:
        gi = unbroadcast(gi, shape)
    return gi.astype(dtype, copy=False)


def _layer_vjp(lesson, node, i, g):
    """What a collapsed layer sends to its input ``i``: the chain rule through the ops it folds, by hand
    (None when one of them has no rule in the op table)."""
    members, target = node.members, node.inputs[i].src
    inside = {id(m) for m in members}
    end = next((m for m in members if m.out is node.out), members[-1])
    buffers, total = {id(end): np.asarray(g, np.float64)}, None
    for m in reversed(members):
        gm = buffers.pop(id(m), None)
        if gm is None:
            continue
        args = [inp.data for inp in m.inputs]
        if m.op is None or m.op.multi_output or m.user or any(a is None for a in args) or m.out.data is None:
            return None
        for k, inp in enumerate(m.inputs):
            inner = inp.kind == "op" and id(inp.src) in inside
            if inp.kind == "const" or not (inner or inp.src is target):
                continue
            try:
                gk = np.asarray(_table_vjp(m, k, gm, args, m.out.data), np.float64)
            except Exception:  # a rule that cannot run on these numbers: no hand value
                return None
            if inner:
                buffers[id(inp.src)] = buffers[id(inp.src)] + gk if id(inp.src) in buffers else gk
            else:
                total = total + gk if total is not None else gk
    if total is None:
        return None
    return total.astype(node.inputs[i].dtype or np.float64, copy=False)


def _recorded_vjp(lesson, node, i, g):
    # (a split: what arrived at every output went out at once; else the pass where g arrived)
    e = lesson.trace.recorded(node, None if node.outputs > 1 else g)
    if e is None or i >= len(e.grads_out) or e.grads_out[i] is None:
        return None
    return e.grads_out[i]


def local_derivative(lesson, node, i):
    """∂(output)/∂(input i) as numbers, when the op works element by element (else None).

    Not for matrix products, nor for an input that was broadcast to a bigger output: what goes
    back to it is a sum over the copies, not a product a caption could call "multiplies by".
    """
    if node.op is None or not node.op.elementwise or node.key in chain_rule.COMPOSITES:
        return None             # (softmax's Jacobian is a matrix: what it sends is no product)
    if math.prod(node.inputs[i].shape) < math.prod(np.shape(lesson.output(node))):
        return None
    try:
        ones = np.ones_like(lesson.output(node))
        return _vjp(lesson, node, i, ones)
    except Exception:
        return None


def chain_gradients(lesson, seed):
    """∂root/∂leaf for every leaf: each path's product of local derivatives, summed over paths.

    ``seed`` None (a ``gradient=`` the engine refused) gives no numbers: ``{}``.
    """
    buffers = {lesson.root_step: np.asarray(seed)} if lesson.nodes and seed is not None else {}
    result, unknown = {}, set()      # unknown: no hand rule on the way, and nothing recorded to reuse
    for node in reversed(lesson.nodes):
        g = buffers.pop(node, None)
        if g is None and node not in unknown:
            continue
        for i, (kind, thing) in enumerate(lesson.kinds(node)):
            if kind == "const":
                continue
            gi = None if node in unknown else _vjp(lesson, node, i, g)
            key = thing.seq if kind == "leaf" else thing
            if gi is None:
                unknown.add(key)
            elif kind == "leaf":
                result[key] = result[key] + gi if key in result else gi
            else:
                buffers[key] = buffers[key] + gi if key in buffers else gi
    return {k: v for k, v in result.items() if k not in unknown}


def _paths(lesson, leaf, limit):
    """Up to ``limit`` paths root -> leaf as lists of ``(node, i)``, and how many there are."""
    counts = {}
    for node in lesson.nodes:     # forward order: inputs before the ops that use them
        c = 0
        for i, (kind, thing) in enumerate(lesson.kinds(node)):
            if kind == "leaf" and thing is leaf:
                c += 1
            elif kind == "op":
                c += counts.get(thing, 0)
        counts[node] = c
    out = []
    root = lesson.root_step
    if root is None or not counts.get(root):
        return out, counts.get(root, 0) if root is not None else 0
    # Depth first, inputs in order, with a stack of our own: a 20,000-op chain is a path 20,000
    # deep (Python's recursion stops at 1,000).  A path grows as a linked list (above, (node, i)),
    # written out only when it reaches the leaf, so a long path is not copied at every step.
    stack = [(root, None, iter(enumerate(lesson.kinds(root))))]
    while stack and len(out) < limit:
        node, above, inputs = stack[-1]
        step = next(inputs, None)
        if step is None:
            stack.pop()
            continue
        i, (kind, thing) = step
        here = (above, (node, i))
        if kind == "leaf" and thing is leaf:
            out.append(_unlink(here))
        elif kind == "op" and counts.get(thing):
            stack.append((thing, here, iter(enumerate(lesson.kinds(thing)))))
    return out, counts[root]


def _unlink(link):
    path = []
    while link is not None:
        link, item = link
        path.append(item)
    return path[::-1]


def _path_value(lesson, path, seed):
    if seed is None:
        return None
    g = np.asarray(seed)
    for node, i in path:
        g = _vjp(lesson, node, i, g)
        if g is None:
            return None
    return g


def operand_mark(lesson, node, i):
    """``1``, ``2``... when input ``i`` of ``node`` is a tensor the op reads more than once (``y * y``:
    the two operands are told apart, y⁽¹⁾ and y⁽²⁾), else None."""
    kinds = lesson.kinds(node)
    kind, thing = kinds[i]
    if kind == "const":
        return None
    same = [k for k, (kk, tt) in enumerate(kinds) if kk == kind and tt is thing
            and node.inputs[k].output_nr == node.inputs[i].output_nr]
    return same.index(i) + 1 if len(same) > 1 else None


def _input_name(lesson, node, i):
    mark = operand_mark(lesson, node, i)
    return latex_name(lesson.input_name(node, i)) + (f"^{{({mark})}}" if mark else "")


class UserCodeError(Exception):
    """An error raised by the user's own code (an ``expected=`` closed form), shown in the widget."""


def expected_gradients(lesson, expected):
    """The instructor's closed forms evaluated: ``{leaf seq: (latex or None, array)}``.

    A value may be an array, a callable, or ``(latex, callable_or_array)``.  A callable gets the
    leaves it names as numpy arrays (``lambda x: 5 * (x + 1)``; one parameter gets this leaf).
    """
    out = {}
    by_name = {t.name: t for t in lesson.leaves}
    for name, spec in (expected or {}).items():
        leaf = by_name.get(name)
        if leaf is None:
            raise ValueError(f"expected= names {name!r}, which is not a leaf of this graph "
                             f"(leaves: {', '.join(by_name) or 'none'})")
        latex, fn = spec if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str) \
            else (None, spec)
        if callable(fn):
            params = list(inspect.signature(fn).parameters)
            try:
                if all(p in by_name for p in params) and params:
                    value = fn(*(np.array(by_name[p].data, copy=True) for p in params))
                else:
                    value = fn(np.array(leaf.data, copy=True))
            except Exception as exc:  # the instructor's code, not gradviz's: say whose error it is
                raise UserCodeError(f"expected={{{name!r}: ...}} raised {type(exc).__name__}: {exc}") from exc
        else:
            value = fn
        value = array_of(value)
        try:
            value = np.broadcast_to(np.asarray(value, dtype=np.float64), leaf.shape)
        except (TypeError, ValueError):   # said here, not as numpy's error nine frames deeper
            raise ValueError(f"expected[{name!r}] gives {_what(value)}, but {name} has shape {tuple(leaf.shape)}: "
                             f"the gradient needs one number, or one per element of {name}") from None
        out[leaf.seq] = (latex, value)
    return out


def _what(value):
    shape = np.shape(value) if not isinstance(value, str) else None
    return f"shape {shape}" if shape is not None else f"{type(value).__name__} {value!r:.40}"


def check(grad, want):
    """How the engine's ``.grad`` compares with the hand result: ``{"ok": bool, "diff": text}``.

    A ``.grad`` that is a whole multiple of the hand result (0 after ``zero_()``, 2x after two
    ``backward()`` calls) is not an error but accumulation: ``"times"`` says how many.

    >>> check(np.array([20., 20.]), np.array([10., 10.]))
    {'ok': False, 'diff': '[10., 10.]', 'times': 2}
    >>> check(np.array([0., 0.]), np.array([np.inf, 1.]))["times"]
    0
    """
    if grad is None:
        return {"ok": None, "diff": ""}
    grad = np.asarray(grad, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    ok = bool(np.allclose(grad, want, rtol=1e-4, atol=1e-6, equal_nan=True))   # (nan where the maths gives nan)
    out = {"ok": ok, "diff": "" if ok else format_line(grad - want)}
    if not ok and np.any(want != 0) and not np.any(grad):       # zero_(): whatever the hand result holds
        out["times"] = 0
    elif not ok and np.any(want != 0) and np.all(np.isfinite(grad)) and np.all(np.isfinite(want)):
        k = round(float(np.sum(grad * want) / np.sum(want * want)))
        if 0 <= k <= 1000 and np.allclose(grad, k * want, rtol=1e-4, atol=1e-6):
            out["times"] = k
    return out


# --- the chain rule as formulas (gradviz.formula trees: written and evaluated alike) -----------

def _is_matrix(node):
    """A matrix product, a transpose, or a layer collapsed into one step (Linear: x Wᵀ + b)."""
    return chain_rule.category(node.key) in ("matmul", "transpose") or bool(getattr(node, "members", None))


def _matrix_path(path):
    return any(_is_matrix(n) for n, _ in path)


def _elementwise_path(lesson, path):
    """Every op on the path works element by element, on inputs of its output's shape (then the
    Jacobians are diagonal, and a seed v multiplies the path's product element by element)."""
    return all(n.op is not None and chain_rule.category(n.key) == "elementwise"
               and lesson.output(n) is not None
               and tuple(n.inputs[i].shape) == tuple(np.shape(lesson.output(n))) for n, i in path)


def operand(lesson, node, i, matrix=False):
    """Input ``i`` of ``node`` as a formula: its name (a :class:`Sym` carrying its value) or a number."""
    kind, thing = lesson.kinds(node)[i]
    value = lesson.inputs(node)[i]
    if kind == "const" and (thing is None or thing.name is None):
        if np.size(value) <= formula.SUBSTITUTE_MAX and np.ndim(value) <= 1:
            return formula.Num(value)
        text = lesson.input_text(kind, thing) or "c"
        return formula.Sym(text, value, latex=formula.constant_latex(value), substitute=False)
    name = lesson.input_name(node, i) or "?"
    return formula.Sym(name, value, scalar_ok=not matrix)


def _count(node, in_shape, out_shape):
    """The n a mean divides by: how many numbers went into each output number."""
    if node.key in ("mean", "mean_dim"):
        return max(1, math.prod(in_shape) // max(1, math.prod(out_shape)))
    if node.key in ("mse_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss"):
        return max(1, math.prod(in_shape)) if node.params.get("reduction", "mean") == "mean" else 1
    if node.key in ("nll_loss", "nll_loss2d"):            # the batch: N rows
        return max(1, in_shape[0]) if len(in_shape) > 1 and node.params.get("reduction", "mean") == "mean" else 1
    return None


def step_expr(lesson, node, i, g, matrix=False):
    """The gradient formula ``g`` after going back through ``node`` to its input ``i``."""
    kinds = lesson.kinds(node)
    in_shape, out_shape = node.inputs[i].shape, np.shape(lesson.output(node))
    jacobian = _partial(latex_name(lesson.name(node) or "y"), _input_name(lesson, node, i))
    apply = lambda gv: _vjp(lesson, node, i, np.asarray(gv, np.float64))
    if getattr(node, "members", None):      # a layer collapsed into one step: its textbook form
        e = _layer_expr(lesson, node, i, g)
        if e is not None:
            return e
    if node.op is None:          # a node the op table does not know: what the engine sent, reused
        hand = bool(getattr(node, "members", None))
        return formula.Rule(g if g is not None else formula.Num(1), jacobian, apply, hand=hand, name=node.name)
    operands = [operand(lesson, node, k, matrix) for k in range(len(kinds))]
    out = formula.Sym(lesson.name(node) or "y", lesson.output(node), scalar_ok=not matrix)
    params = {k: array_of(v) if hasattr(v, "detach") else v for k, v in node.params.items()}
    return chain_rule.step(node.key, i, g, operands, params, out, in_shape, out_shape, node.dlatex,
                  rule=(jacobian, apply), matrix=matrix, count=_count(node, in_shape, out_shape))


def _layer_expr(lesson, node, i, g):
    """A collapsed ``Linear`` (y = x Wᵀ + b): ``g W``, ``gᵀ x``, ``Σ_batch g`` (None for other layers)."""
    if node.name != "Linear" or len(node.inputs) not in (2, 3) or any(
            d is None for d in lesson.inputs(node)) or lesson.output(node) is None:
        return None
    x, w = lesson.inputs(node)[0], lesson.inputs(node)[1]
    y = lesson.output(node)
    if np.ndim(x) != 2 or np.ndim(w) != 2 or np.shape(y) != (np.shape(x)[0], np.shape(w)[0]) \
            or np.shape(x)[1] != np.shape(w)[1] or (len(node.inputs) == 3 and np.shape(lesson.inputs(node)[2]) != (np.shape(w)[0],)):
        return None
    gg = g if g is not None else formula.Num(np.ones(np.shape(y)))
    return chain_rule.linear_step(i, gg, operand(lesson, node, 0, True), operand(lesson, node, 1, True),
                                  node.inputs[i].shape)


def _implicit(seed):
    """Whether ``seed`` is the implicit 1 of ``backward()`` on a scalar (no gradient= to speak of)."""
    seed = np.asarray(seed)
    return seed.size == 1 and float(seed.reshape(-1)[0]) == 1.0


def _free_name(lesson, *candidates):
    """The first of ``candidates`` that names no tensor of the graph (so one symbol, one thing)."""
    taken = {lesson.name(v) for v in lesson.leaves} | {lesson.name(n) for n in lesson.nodes}
    taken |= {lesson.input_name(n, i) for n in lesson.nodes for i in range(len(n.inputs))}
    return next((c for c in candidates if c[0] not in taken), candidates[-1])


def seed_name(lesson):
    """The seed's symbol (LaTeX, text): ``v``, or another letter when a tensor is called v."""
    return _free_name(lesson, ("v", "v"), ("u", "u"), (r"\nu", "ν"))


def objective(lesson, seed):
    """What the chain rule differentiates, as ``(LaTeX, text)``: the root ``o`` itself, or, after
    ``backward(gradient=v)``, the scalar ``L = Σ v ⊙ z`` (its gradient is vᵀJ: ∂L/∂z = v).

    ``seed`` None or the implicit 1: the root.
    """
    root = lesson.root_name
    if seed is None or _implicit(seed):
        return latex_name(root), root
    return _free_name(lesson, ("L", "L"), (r"\mathcal{L}", "ℒ"))


def objective_definition(lesson, seed):
    """``L = Σ v ⊙ z`` (``L = v · z`` for a scalar z) as LaTeX, or None without a gradient=."""
    if seed is None or _implicit(seed):
        return None
    (ltex, _), (vtex, _) = objective(lesson, seed), seed_name(lesson)
    z = latex_name(lesson.root_name)
    if np.size(lesson.root.data if lesson.root.data is not None else seed) == 1:
        return f"{ltex} = {vtex} \\cdot {z}"
    return rf"{ltex} = \sum {vtex} \odot {z}"


def seed_expr(lesson, seed):
    """The seed as a formula: nothing for the implicit 1 of a scalar, else ``v`` (the gradient= given)."""
    if _implicit(seed):
        return None
    tex, text = seed_name(lesson)
    return formula.Sym(text, np.asarray(seed), latex=tex, substitute=False)


class Delta:
    """Where a matrix chain rule names the gradient that arrives δ, and δ once named.

    At the op nearest the root that is a matrix product or takes one's output (a layer's output
    ŷ: ``δ = ∂loss/∂ŷ``), if the ops above it made that gradient a formula: lesson 6's
    ``∂loss/∂W₁ = Xᵀ[(δ W₂ᵀ) ⊙ (1 − tanh²(b))]`` then fits a line of the panel, ``δ`` defined once.
    """

    def __init__(self, lesson):
        self.lesson, self.node, self.named = lesson, None, None
        read = [id(t) for n in lesson.nodes for kind, t in lesson.kinds(n) if kind == "op"]
        for node in reversed(lesson.nodes):
            if node.key in chain_rule.COMPOSITES:       # (δ is named below softmax & co: at the logits)
                continue
            if read.count(id(node)) > 1:   # (two losses of one output: each path brings a part, no one δ)
                break
            if _is_matrix(node) and chain_rule.category(node.key) != "transpose" or any(
                    kind == "op" and (chain_rule.category(getattr(thing, "key", None)) == "matmul"
                                      or getattr(thing, "members", None))
                    for kind, thing in lesson.kinds(node)):
                self.node = node
                break

    def at(self, node, g):
        """``g`` as it arrives at ``node``: δ there, once it is a formula worth a name."""
        if node is not self.node or g is None or g.size() < 3:
            return g
        if self.named is None:
            of = _partial(latex_name(self.lesson.root_name), latex_name(self.lesson.name(node)))
            self.named = formula.Named(r"\delta", g, of)
        return self.named


def path_expr(lesson, path, seed, delta=None):
    """One path's gradient, root first: the chain rule as a tree (``None``: no seed, no numbers).

    ``delta``: a :class:`Delta` naming the gradient at a layer's output δ."""
    if seed is None:
        return None
    v = seed_expr(lesson, seed)
    if v is not None and _elementwise_path(lesson, path):
        # vᵀJ with a diagonal J: v ⊙ (the product of the local derivatives), written as such
        inner = path_expr(lesson, path, np.ones(()))
        return formula.Expand(formula.Mul(v, inner, hadamard=True), inner.shape)
    # (a path through δ is written as δ's other paths are: Σ_batch δ, not Σ(δ · 1))
    matrix = _matrix_path(path) or (delta is not None and any(n is delta.node for n, _ in path)) or \
        (v is not None and np.size(seed) > 1)      # beside a seed v, elementwise products are ⊙
    g = v
    for node, i in path:
        if delta is not None:
            g = delta.at(node, g)
        g = step_expr(lesson, node, i, g, matrix)
    leaf_shape = path[-1][0].inputs[path[-1][1]].shape
    return formula.Expand(g if g is not None else formula.Num(1), leaf_shape)


def leaf_exprs(lesson, seed, limit=MAX_PATHS):
    """``{leaf seq: (trees, count)}``: each written path's formula, and how many paths there are."""
    out, delta = {}, Delta(lesson)
    for leaf in lesson.leaves:
        paths, count = _paths(lesson, leaf, limit)
        out[leaf.seq] = ([path_expr(lesson, p, seed, delta) for p in paths], count)
    return out


def _stages(lhs, *exprs, value=None):
    """``lhs = e₁ = e₂ = … = value`` with repeats left out."""
    parts = [lhs] + [e for e in exprs if e]
    if value is not None:
        parts.append(value)
    out = [parts[0]]
    for p in parts[1:]:
        if p != out[-1]:
            out.append(p)
    return " = ".join(out)


class StepMath:
    """The chain rule step by step, for the frames: which factors a step applies, the product so far.

    Built once per widget.  ``factors(node, i)`` lists ``[leaf name, path, factor]`` of every written
    path that goes through input ``i`` of ``node``; ``sent(node, i)`` is the gradient formula that
    travels down that edge; ``total(key)`` the sum a tensor collects.
    """

    ABBREVIATE = 24     # a gradient formula bigger than this is written as ∂o/∂name further down

    def __init__(self, lesson, seed, paths=None, fmt=format_line):
        self.lesson, self.seed, self.fmt = lesson, seed, fmt     # fmt: how a value is written
        self.root = objective(lesson, seed)[0] if seed is not None else latex_name(lesson.root_name)
        self.index = {}
        first = 0 if seed is None or seed_expr(lesson, seed) is None else 1     # the chip ∂L/∂z = v
        for leaf in lesson.leaves[:MAX_LEAVES]:
            for j, path in enumerate((paths or {}).get(leaf.seq, [])):
                if first:
                    self.index.setdefault("seed", []).append([lesson.name(leaf), j, 0])
                for k, (node, i) in enumerate(path[:MAX_FACTORS]):
                    self.index.setdefault((id(node), i), []).append([lesson.name(leaf), j, k + first])
        self.uses = lesson.consumers()
        self.delta = Delta(lesson)
        self.edge, self.at, self.terms = {}, {}, {}   # (node seq, i) -> tree; tensor key -> tree, terms
        root = lesson.root_step
        if root is None or seed is None:
            return
        matrix = any(_is_matrix(n) for n in lesson.nodes) or (seed_expr(lesson, seed) is not None and np.size(seed) > 1)
        self.at[id(root)] = seed_expr(lesson, seed)
        for node in reversed(lesson.nodes):
            if id(node) not in self.at and node is not root:
                continue
            g = self.delta.at(node, self._upstream(node))     # δ, named as the derivation names it
            for i, (kind, thing) in enumerate(lesson.kinds(node)):
                if kind == "const":
                    continue
                e = step_expr(lesson, node, i, g, matrix)
                self.edge[(id(node), i)] = e
                terms = self.terms.setdefault(id(thing), [])
                terms.append(e)
                self.at[id(thing)] = terms[0] if len(terms) == 1 else formula.Add(*terms)

    def _upstream(self, node):
        """What arrives at ``node``: its formula, or ∂o/∂name when that is a sum or too big to repeat."""
        g = self.at.get(id(node))
        if g is None:
            return None
        if len(self.uses.get(id(node), [])) > 1 or g.size() > self.ABBREVIATE:
            name = latex_name(self.lesson.name(node))
            return formula.Sym(name, g.value(), latex=_partial(self.root, name), substitute=False)
        return g

    def factors(self, node, i):
        return self.index.get((id(node), i), [])

    def seed_factors(self):
        """The chips ``∂L/∂z`` (the seed v) of every written path, lit by the seed's frame."""
        return self.index.get("seed", [])

    NUMBERS_MAX = 160   # a running product with its numbers longer than this (LaTeX) is left at its names

    def _item(self, of, lhs, expr, value):
        if expr is None:
            latex = _stages(lhs, "1", value=None)
        else:
            names, numbers = expr.latex(), expr.latex(numbers=True)
            # (a 4×2 softmax written out in a running product would run off the panel)
            if len(numbers) > self.NUMBERS_MAX and len(numbers) > 2 * len(names):
                numbers = None
            latex = _stages(lhs, names, numbers, value=value_latex(value))
        m = mathml(latex)
        return {"of": of, "latex": latex, "mathml": m["mathml"], "value": self.fmt(value)}

    def sent(self, node, i, value):
        """The ``so_far`` entry for the gradient ``node`` sends to input ``i`` (one use of many, or all)."""
        if (id(node), i) not in self.edge:
            return None
        kind, thing = self.lesson.kinds(node)[i]
        name = self.lesson.input_name(node, i) or "?"
        lname, oname = _input_name(self.lesson, node, i), latex_name(self.lesson.name(node))
        if len(self.uses.get(id(thing), [])) > 1:        # one term of a sum: ∂o/∂d · ∂d/∂c
            lhs = _partial(self.root, oname) + " " + _partial(oname, lname)
        else:
            lhs = _partial(self.root, lname)
        return self._item(name, lhs, self.edge[(id(node), i)], value)

    def total(self, key, name, value):
        """The ``so_far`` entry for a tensor's whole gradient (the sum of its uses', or its one)."""
        if key not in self.at:
            return None
        return self._item(name, _partial(self.root, latex_name(name)), self.at[key], value)


# --- the derivation as data -------------------------------------------------------------------

def build_derivation(lesson, seed, steps=None, expected=None, ids=None, keep=None):
    """The ``derivation`` trait (see :func:`_build_derivation`); a graph no rule here can write by hand
    gets its instructor steps and the words "no hand derivation", never an exception's text.

    Errors in the caller's ``expected=`` (a name that is no leaf, a closed form that raised) are raised.
    """
    keep = {} if keep is None else keep
    expected_gradients(lesson, expected)            # (the caller's own mistakes: said as they are)
    try:
        return _build_derivation(lesson, seed, steps, expected, ids, keep)
    except UserCodeError:
        raise
    except Exception:  # a graph this module cannot write: said in words, the graph and frames still play
        keep.clear()
        keep.update(exprs={}, paths={}, chain=chain_gradients(lesson, seed) if lesson.nodes else {})
        return {"custom": [mathml(x, display=True) for x in (steps or [])], "defs": [], "where": [],
                "leaves": [], "error": "the chain rule of one of its ops cannot be written here"}


def _build_derivation(lesson, seed, steps=None, expected=None, ids=None, keep=None):
    """The ``derivation`` trait: instructor steps, forward definitions, and per leaf its paths.

    Each path has ``stages`` (the symbolic chain, the formula with names, with numbers, its value),
    ``factors`` (one per op on the path, root first: which node and edge applies it) and, when a
    leaf is reached along several paths, its ``term`` of the sum.  ``keep`` (a dict) receives the
    formulas themselves: ``keep["exprs"][leaf seq]`` (one tree per written path, what the stages
    show) and ``keep["paths"][leaf seq]`` (the ``(node, i)`` steps of each).
    """
    keep = {} if keep is None else keep
    keep["exprs"], keep["paths"] = {}, {}
    custom = [mathml(s, display=True) for s in (steps or [])]
    defs = []
    for node in lesson.nodes[:MAX_DEFS]:
        twice = sorted({_input_name(lesson, node, i) for i in range(len(node.inputs)) if operand_mark(lesson, node, i)})
        note = (r"\quad \left(" + " = ".join(twice) + " = " + twice[0].split("^")[0] + r"\right)") if twice else ""
        defs.append(mathml(f"{latex_name(lesson.name(node))} = {forward_latex(lesson, node)}{note}"))
    for node in lesson.nodes:    # what a loss's formula names: the classes t
        target = node.params.get("target") if node.key in ("nll_loss", "nll_loss2d") else None
        target = array_of(target) if target is not None else None
        if target is not None and np.size(target) <= 16:
            defs.append(mathml("t = " + formula.Num(np.asarray(target)).latex()))
            weight = node.params.get("weight")
            if weight is not None and np.size(weight) <= 16:      # cross_entropy(weight=w): w defined too
                defs.append(mathml(weight_name(lesson, node)[0] + " = " + formula.Num(np.asarray(array_of(weight))).latex()))
            break
    for node in lesson.nodes:    # what where(cond, a, b) reads: the condition, as 1 and 0
        cond = node.params.get("cond") if node.key == "where" else None
        cond = array_of(cond) if cond is not None else None
        if cond is not None and np.size(cond) <= 16:
            defs.append(mathml(r"\mathrm{cond} = " + formula.Num(np.asarray(cond, np.float64)).latex()))
            break
    v = seed_expr(lesson, seed) if seed is not None else None
    if v is not None:           # backward(gradient=v): the scalar it differentiates, said once
        defs.append(mathml(f"{v.tex} = " + (value_latex(seed) or formula.Num(seed).latex() if np.size(seed) <= 16
                                            else r"\text{" + "×".join(map(str, np.shape(seed))) + "}")))
        defs.append(mathml(objective_definition(lesson, seed) + r"\quad \text{(backward(gradient=" + v.name + "))}"))
    chain = keep["chain"] = chain_gradients(lesson, seed) if lesson.nodes else {}
    closed = expected_gradients(lesson, expected)
    root = objective(lesson, seed)[0] if seed is not None else latex_name(lesson.root_name)
    top = latex_name(lesson.root_name)
    leaves, delta = [], Delta(lesson)
    counted = {leaf.seq: _paths(lesson, leaf, MAX_PATHS) for leaf in lesson.leaves[:MAX_LEAVES]}
    numbered = None
    if seed is not None and len(lesson.nodes) <= MAX_BACKPROP and any(
            count > MAX_PATHS for _, count in counted.values()):
        numbered = backprop_lines(lesson, seed)
    keep["lines"], keep["node_lines"] = {}, {}
    for leaf in lesson.leaves[:MAX_LEAVES]:
        name = latex_name(lesson.name(leaf))
        paths, count = counted[leaf.seq]
        if numbered is not None:           # too many paths to list: each gradient once, as backprop does
            leaves.append(_numbered_leaf(lesson, leaf, numbered, root, chain, keep))
            keep["paths"][leaf.seq], keep["exprs"][leaf.seq] = [], []
            continue
        fan_in = len(paths) > 1 or count > len(paths)
        lines, terms = [], []
        keep["paths"][leaf.seq], keep["exprs"][leaf.seq] = paths, []
        for k, path in enumerate(paths, 1):
            shown = path if len(path) <= MAX_FACTORS else path[:MAX_FACTORS - 1]
            dots = [r"\cdots"] if len(shown) < len(path) else []
            # each node's output as this path reaches it (a split's q, not its first output p)
            outs = [lesson.name(shown[0][0])] + [lesson.input_name(n, i) for n, i in shown[:-1]]
            sym = [_partial(latex_name(o), _input_name(lesson, n, i)) for o, (n, i) in zip(outs, shown)]
            # (a 20,000-op path as one formula would be 20,000 factors long: unreadable, and slow)
            expr = path_expr(lesson, path, seed, delta) if len(path) <= MAX_WRITTEN else None
            nohand = None
            if expr is not None:
                try:
                    value = expr.value()
                except formula.NoHandDerivation as exc:    # a step no rule here computes: the engine's numbers, said so
                    expr, nohand = None, str(exc)
            keep["exprs"][leaf.seq].append(expr)
            if expr is not None:
                pass
            elif count == 1 and seed is not None:     # the only path: its value is the chain rule's sum
                value = chain.get(leaf.seq)
            else:
                value = _path_value(lesson, path, seed)
            chips = [_factor_data(lesson, n, i, ids) for n, i in shown]
            if v is not None:          # ∂L/∂z = v: the first factor, one for one with the values
                seed_sym = _partial(root, top)
                chips.insert(0, {**mathml(seed_sym), "value": format_line(seed), "node": None, "edge": None})
                if _elementwise_path(lesson, path):
                    stages = [seed_sym + r" \odot " + _paren(r" \cdot ".join(sym + dots), len(sym + dots))]
                else:
                    stages = [r" \cdot ".join([seed_sym] + sym + dots)]
            else:
                stages = [r" \cdot ".join(sym + dots)]
            if expr is not None:
                stages += [expr.latex(), expr.latex(numbers=True)]
                stages += _collected(expr)
            elif nohand is not None:
                name_text = re.sub(r"[^A-Za-z0-9_. ]", "", nohand) or "one op"
                stages.append(rf"\text{{(no hand derivation for {name_text}: the engine's numbers)}}")
            # (a longer vector is the chain rule line's, which wraps: as the last stage it would not)
            if value_latex(value, limit=LINE_VALUES) is not None:
                stages.append(value_latex(value, limit=LINE_VALUES))
            stages = [st for j, st in enumerate(stages) if j == 0 or st != stages[j - 1]]
            line = {"stages": [mathml(st) for st in stages], "value": format_line(value), "factors": chips}
            term = value_latex(value) or rf"\text{{path {k}}}"
            terms.append(term)
            if fan_in:
                line["term"] = mathml(term)
            lines.append(line)
        want = chain.get(leaf.seq)
        entry = {
            "leaf": lesson.name(leaf),
            "lhs": mathml(_partial(root, name)),
            "paths": lines,
            "count": count,
            "chain": format_line(want) if want is not None else "0",
        }
        if fan_in:
            total = value_latex(want)
            entry["sum"] = mathml(_partial(root, name) + " = " + " + ".join(
                [_term(t) for t in terms] + ([r"\dots"] if count > len(paths) else []))
                + (" = " + total if total is not None else ""))
        if leaf.seq in closed:
            latex, value = closed[leaf.seq]
            entry["closed"] = format_line(value)
            if latex:
                shown = value_latex(value)
                entry["closed_tex"] = mathml(f"{_partial(root, name)} = {latex}" + (f" = {shown}" if shown else ""))
        leaves.append(entry)
    keep["delta"] = delta.named
    where = []
    if delta.named is not None:
        where.append(mathml(delta.named.definition(value_latex(delta.named.value(), rows=4, cols=4))))
    if numbered is not None:
        for k, (key, thing, lhs, expr) in enumerate(numbered, 1):
            if not isinstance(thing, Value) or thing not in lesson.leaves[:MAX_LEAVES]:
                keep["node_lines"][key] = expr
                where.append(mathml(_numbered(k, lhs, expr)))
    return {
        "custom": custom,
        "defs": defs,
        "defs_more": max(0, len(lesson.nodes) - MAX_DEFS),
        "where": where,
        "leaves": leaves,
        "leaves_more": max(0, len(lesson.leaves) - MAX_LEAVES),
    }


def backprop_lines(lesson, seed):
    """Backprop's own form of the chain rule: for each tensor, root first, its gradient as the sum
    over its uses of (the gradient at the use's output) · (the use's local derivative), each written
    once and numbered.  ``[(key, step or leaf, lhs LaTeX, formula)]``; a formula names the gradients
    it uses (∂g/∂f) and carries their values, so every line is checked on its own.
    """
    root = objective(lesson, seed)[0]
    matrix = any(_is_matrix(n) for n in lesson.nodes) or (seed_expr(lesson, seed) is not None and np.size(seed) > 1)
    uses = lesson.consumers()
    at, out = {}, []
    first = lesson.root_step
    v = seed_expr(lesson, seed)
    at[id(first)] = formula.Sym(lesson.name(first), np.asarray(seed, np.float64),
                          latex=_partial(root, latex_name(lesson.name(first))), substitute=True)
    out.append((id(first), first, _partial(root, latex_name(lesson.name(first))),
                v if v is not None else formula.Num(1)))
    things = [n for n in reversed(lesson.nodes) if n is not first] + list(lesson.leaves)
    for thing in things:
        terms = []
        for node, i in uses.get(id(thing), []):
            g = at.get(id(node))
            if g is None:
                continue
            terms.append(step_expr(lesson, node, i, g, matrix))
        if not terms:
            continue
        expr = terms[0] if len(terms) == 1 else formula.Add(*terms)
        name = latex_name(lesson.name(thing))
        try:
            value = np.asarray(expr.value(), np.float64)
        except formula.NoHandDerivation:
            return None
        at[id(thing)] = formula.Sym(lesson.name(thing), value, latex=_partial(root, name), substitute=True,
                              scalar_ok=not matrix)
        out.append((id(thing), thing, _partial(root, name), expr))
    return out


def _numbered(k, lhs, expr):
    """``(k)  ∂g/∂f = ∂g/∂g₁ · 1/2 + ∂g/∂v₃ · (−1/f²) = 1 · 1/2 + 10 · (−1/49²) = 0.4958``."""
    value = value_latex(expr.value())
    return rf"\left({k}\right)\quad " + _stages(lhs, expr.latex(), expr.latex(numbers=True), value=value)


def _numbered_leaf(lesson, leaf, numbered, root, chain, keep):
    """A leaf's entry in backprop's form: its own numbered line (the sum over its uses)."""
    name = lesson.name(leaf)
    k, line = next(((k, item) for k, item in enumerate(numbered, 1) if item[1] is leaf), (None, None))
    want = chain.get(leaf.seq)
    entry = {"leaf": name, "lhs": mathml(_partial(root, latex_name(name))), "paths": [], "count": 0,
             "chain": format_line(want) if want is not None else "0"}
    if line is None:
        return entry
    expr = line[3]
    keep["lines"][leaf.seq] = [expr]
    value = expr.value()
    stages = [expr.latex(), expr.latex(numbers=True)] + ([value_latex(value)] if value_latex(value) else [])
    stages = [st for j, st in enumerate(stages) if j == 0 or st != stages[j - 1]]
    entry["paths"] = [{"stages": [mathml(st) for st in stages],
                       "value": format_line(value), "factors": []}]
    entry["count"] = 1
    return entry


def _factor_data(lesson, node, i, ids):
    """One factor chip: ∂(output)/∂(input i), its numbers, and where it sits in the picture."""
    latex = _partial(latex_name(lesson.name(node)), _input_name(lesson, node, i))
    local = local_derivative(lesson, node, i)
    return {**mathml(latex), "value": format_line(local) if local is not None else "",
            "node": ids.op(node) if ids is not None else None,
            "edge": ids.edge_in(node, i) if ids is not None else None}


def targets(lesson, seed, expected=None, chain=None):
    """What each leaf's ``.grad`` is checked against: the closed form if given, else the chain rule.

    ``chain``: :func:`chain_gradients` already computed (``build_derivation``'s ``keep["chain"]``).
    """
    if chain is None:
        chain = chain_gradients(lesson, seed) if lesson.nodes else {}
    closed = expected_gradients(lesson, expected)
    out = {}
    for leaf in lesson.leaves:
        if leaf.seq in closed:
            out[leaf.seq] = closed[leaf.seq][1]
        elif leaf.seq in chain:
            out[leaf.seq] = chain[leaf.seq]
    return out
