"""A student's answer as numbers: a number, a Python-style (nested) list, or a short expression, parsed without eval.

What may be typed (the same in ``static/practice.js``, which checks answers in a saved page):

- numbers as Python writes them (``10``, ``-0.5``, ``1e-3``, ``.25``), ``inf`` and ``nan``;
- ``+ - * / **`` and parentheses between numbers (``0.5*5*4``, ``2*(1+1)**2``, ``-2**2`` is -4);
- lists and tuples, nested (``[10, 10]``, ``[[1, 2], [3, 4]]``, ``1, 2``), each element an expression;
- ``tensor(...)`` or ``torch.tensor(...)`` around any of those, as PyTorch prints a tensor;
- ``−``, ``×``, ``·`` and ``÷`` as the widget's captions write them.

Nothing else: no names but those, no calls but ``tensor``, no strings, no arithmetic on lists
(``2*[1, 2]`` is Python's repetition, not what a student means: write ``[2*1, 2*2]``).  The text is
first read token by token (at most :data:`LIMITS`), then parsed by :mod:`ast` and evaluated by a
walker that knows only the nodes above, in float64 with IEEE rules (``1/0`` is inf, ``9**9**9``
is inf at once: no integer arithmetic can run long).

>>> parse_answer("[[1, 2], [3, 4]]").shape
(2, 2)
>>> parse_answer("tensor([10., 10.])")
array([10., 10.])
>>> parse_answer("__import__('os')")
Traceback (most recent call last):
...
gradviz.quiz.answers.AnswerError: p_name
"""

import ast
import re
import warnings

import numpy as np

__all__ = ["AnswerError", "parse_answer", "LIMITS", "TOKEN"]

LIMITS = {"chars": 2000, "depth": 32, "numbers": 10000}

# one token: a number, a name, an operator, a bracket, a comma, a dot (torch.tensor); spaces between
TOKEN = re.compile(r"\s*(?:(?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
                   r"|(?P<op>\*\*|[-+*/(),.\[\]]))")
_NAMES = {"inf": np.inf, "nan": np.nan}
_SIGNS = str.maketrans({"\u2212": "-", "\u00d7": "*", "\u00b7": "*", "\u22c5": "*", "\u00f7": "/"})


class AnswerError(ValueError):
    """An answer that cannot be read; ``key`` names why (worded by the widget: ``gradviz.widget.i18n``)."""

    def __init__(self, key, **args):
        super().__init__(key)
        self.key, self.fields = key, args


def _tokens(text):
    """The tokens of ``text``, or AnswerError: only what :data:`TOKEN` knows, brackets at most LIMITS deep."""
    pos, depth, out = 0, 0, []
    text = text.rstrip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise AnswerError("p_syntax")
        kind = m.lastgroup
        tok = m.group(kind)
        if kind == "num" and re.fullmatch(r"0\d+", tok):      # 007: Python refuses it too
            raise AnswerError("p_syntax")
        if kind == "name" and tok not in _NAMES and tok not in ("tensor", "torch"):
            raise AnswerError("p_name", name=tok[:20])
        if tok in "([":
            depth += 1
            if depth > LIMITS["depth"]:
                raise AnswerError("p_too_big")
        elif tok in ")]":
            depth -= 1
        out.append((kind, tok))
        pos = m.end()
    return out


def parse_answer(text):
    """The numbers of an answer as a float64 array (its shape is the answer's shape).

    Raises :class:`AnswerError` (a ``ValueError``) whose ``key`` says what is wrong: ``p_empty``,
    ``p_too_long``, ``p_syntax``, ``p_name`` (a name other than inf, nan, tensor), ``p_list_arith``,
    ``p_ragged`` (rows of different lengths) or ``p_too_big``.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_answer() takes the text typed, a str, not {type(text).__name__}")
    if len(text) > LIMITS["chars"]:
        raise AnswerError("p_too_long", limit=LIMITS["chars"])
    text = text.translate(_SIGNS).strip()
    if not text:
        raise AnswerError("p_empty")
    _tokens(text)
    try:
        with warnings.catch_warnings():            # ("1e3x": Python warns of an invalid literal, then refuses)
            warnings.simplefilter("ignore")
            tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise AnswerError("p_syntax") from None
    count = [0]
    with np.errstate(all="ignore"):
        value = _eval(tree.body, count, top=True)
    if isinstance(value, list):
        return _array(value)
    return np.array(value, dtype=np.float64)


def _eval(node, count, top=False):
    """A float, or a list of what its elements are: only the nodes of the module docstring."""
    if isinstance(node, ast.Constant):
        if type(node.value) not in (int, float):          # (the tokens allow no other constant)
            raise AnswerError("p_syntax")
        count[0] += 1
        if count[0] > LIMITS["numbers"]:
            raise AnswerError("p_too_big")
        try:
            return np.float64(float(node.value))
        except OverflowError:                             # an integer beyond float64: inf, as float('1e999')
            return np.float64(np.inf)
    if isinstance(node, ast.Name):
        if node.id not in _NAMES:
            raise AnswerError("p_syntax")
        count[0] += 1
        return np.float64(_NAMES[node.id])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval(node.operand, count)
        if isinstance(v, list):
            raise AnswerError("p_list_arith")
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        a, b = _eval(node.left, count), _eval(node.right, count)
        if isinstance(a, list) or isinstance(b, list):
            raise AnswerError("p_list_arith")
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div):
            return np.float64(a) / np.float64(b)
        return np.power(np.float64(a), np.float64(b))
    if isinstance(node, (ast.List, ast.Tuple)) and isinstance(node.ctx, ast.Load):
        return [_eval(e, count) for e in node.elts]
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1 and _is_tensor(node):
        if isinstance(node.args[0], ast.Starred):
            raise AnswerError("p_syntax")
        return _eval(node.args[0], count)
    raise AnswerError("p_syntax")


def _is_tensor(call):
    """``tensor(...)`` or ``torch.tensor(...)`` as written, not ``(tensor)(...)``: what practice.js reads."""
    func = call.func
    if func.col_offset != call.col_offset:
        return False
    if isinstance(func, ast.Name):
        return func.id == "tensor"
    return (isinstance(func, ast.Attribute) and func.attr == "tensor" and isinstance(func.value, ast.Name)
            and func.value.id == "torch" and func.value.col_offset == func.col_offset)


def _array(value):
    """A nested list as an array; rows of different lengths (or numbers beside lists) are ``p_ragged``."""
    def shape(v):
        if not isinstance(v, list):
            return ()
        if not v:
            return (0,)
        inner = [shape(x) for x in v]
        if any(s != inner[0] for s in inner):
            raise AnswerError("p_ragged")
        return (len(v),) + inner[0]

    dims = shape(value)
    return np.array(value, dtype=np.float64).reshape(dims)
