"""How a value is written for a student: in a node, a tooltip, a caption, a formula.

One module writes every number the picture, the captions and the derivation show, so they cannot
disagree; PyTorch's own printing (``repr(tensor)``) is :mod:`gradviz._format`, which this reads.

>>> summary(np.array([[0., 0.], [1., 2.]], np.float32)), number_text(0.88137), short(np.array([10., 10.]))
('[[0., 0.], [1., 2.]]', '0.8814', '[10, 10]')
"""

import math

import numpy as np

from ._format import format_array, printoptions

__all__ = ["format_value", "format_number", "format_line", "summary", "node_text", "drawn_in_full", "number_text",
           "short", "SMALL", "CAPTION_FULL", "NODE_FULL", "NODE_ROWS"]

SMALL = 16          # tensors with at most this many elements are shown in full


# --- as PyTorch prints it: nodes, tooltips, captions ---------------------------------------------

def format_value(a, small=SMALL):
    """A tensor's values as PyTorch prints them: in full when small, else a short summary.

    >>> format_value(np.array([1., 2.], np.float32))
    '[1., 2.]'
    >>> format_value(np.arange(100, dtype=np.float32))
    '[ 0.,  1., ..., 98., 99.]'
    >>> print(format_value(np.arange(30, dtype=np.float32).reshape(6, 5)))
    [[ 0.,  1.,  ...,  3.,  4.],
     [ 5.,  6.,  ...,  8.,  9.],
     ...,
     [20., 21.,  ..., 23., 24.],
     [25., 26.,  ..., 28., 29.]]
    """
    if a is None:
        return None
    a = np.asarray(a)
    if a.size <= small:
        with printoptions(linewidth=60):
            return format_array(a)
    edge = 2 if a.ndim <= 2 else 1
    with printoptions(threshold=0, edgeitems=edge, linewidth=60):
        text = format_array(a)
    return text


def format_number(v):
    """A constant as a student writes it: ``5``, ``0.5``, ``-1``, ``True``.

    >>> format_number(5.0), format_number(np.float32(0.5)), format_number(2), format_number(1/3)
    ('5', '0.5', '2', '0.3333333333333333')
    """
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if math.isfinite(v) and float(v).is_integer() and abs(float(v)) < 1e15:   # (1e15 is no float16)
            return str(int(v))
        return np.format_float_positional(v, trim="-") if math.isfinite(v) else str(float(v))
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return format_number(v[()])
    text = repr(v)
    return text if len(text) <= 24 else text[:21] + "..."


CAPTION_FULL = 8       # a caption writes arrays up to this many numbers in full
NODE_FULL = 3          # a node draws a tensor in full when it is one row of at most this many numbers
NODE_ROWS = 2          # ... or a matrix of at most this many such rows


def format_line(a):
    """A value as PyTorch prints it (what the graph shows), on one line: ``[10., 10.]``, ``0.5000``."""
    if a is None:
        return "None"
    return " ".join(format_value(np.asarray(a)).split())


def summary(a, full=CAPTION_FULL, brief=False):
    """A value summarised so that it cannot mislead: the one summariser of captions and nodes.

    Up to ``full`` numbers in full, as PyTorch prints them.  A bigger array by its shape, its largest
    row and its norm -- never just a first row that happens to be zero; an array of one number
    repeated by that number.  ``brief`` (a node, which draws the shape beside it): the norm alone.

    >>> summary(np.array([2.5, 2.5], np.float32))
    '[2.5000, 2.5000]'
    >>> summary(np.array([[0., 0.], [0., 0.], [1., 2.], [0., 0.5], [0., 0.]], np.float32))
    '5×2, [2, :] = [1., 2.], ‖·‖ = 2.2913'
    >>> summary(np.zeros((4, 4), np.float32)), summary(np.full((3, 4), 0.25, np.float32))
    ('zeros(4, 4)', '3×4, all 0.2500')
    >>> summary(np.arange(6, dtype=np.float32).reshape(3, 2), full=0, brief=True)
    'norm 7.4162'
    """
    if a is None:
        return "None"
    a = np.asarray(a)
    if a.size <= full:
        return format_line(a)
    shape = "×".join(str(n) for n in a.shape)
    if a.dtype.kind in "fc" and not np.any(a):
        return f"zeros({', '.join(str(n) for n in a.shape)})"
    flat = a.reshape(-1)
    if flat.size and np.all(flat == flat[0]):
        return f"all {format_line(flat[0])}" if brief else f"{shape}, all {format_line(flat[0])}"
    norm = format_line(np.asarray(np.linalg.norm(flat.astype(np.float64)), dtype=a.dtype))
    if brief:       # a word, not ‖·‖: Graphviz sizes a node by its text's bytes, and ‖·‖ is eight
        return f"norm {norm}"
    if a.ndim == 1:
        return f"{format_line(a)} ({shape}), ‖·‖ = {norm}"
    rows = a.reshape(a.shape[0], -1)
    with np.errstate(all="ignore"):
        k = int(np.nanargmax(np.abs(rows.astype(np.float64)).sum(axis=1))) if np.any(np.isfinite(rows)) else 0
    index = ", ".join([str(k)] + [":"] * (a.ndim - 1))
    return f"{shape}, [{index}] = {format_line(a[k])}, ‖·‖ = {norm}"


def node_text(a):
    """What a node or an edge draws for a value: one short row, or a matrix up to 2×3, in full
    (``[1., 1.]``, ``20.``, ``[[0., 1.],⏎ [1., 0.]]``; one number repeated as ``all 1.``), anything
    bigger as its :func:`summary`
    (``norm 2.6253``, ``all 0.2500``, ``zeros(4, 4)``), so a batch keeps its node small (issue 8:
    lesson 6's network fits its box).  The full value is the node's tooltip; a gradient's, the
    derivation's check lines.

    >>> node_text(np.array([1., 1.], np.float32)), node_text(np.ones((2, 2), np.float32))
    ('[1., 1.]', 'all 1.')
    >>> print(node_text(np.array([[0., 1.], [1., 0.]], np.float32)))
    [[0., 1.],
     [1., 0.]]
    """
    if a is None:
        return None
    a = np.asarray(a)
    flat = a.reshape(-1)
    if drawn_in_full(a.shape) and a.ndim == 2 and a.shape[0] > 1 and not np.all(flat == flat[0]):
        return format_value(a)          # a small matrix row by row, as PyTorch prints it: [[0., 1.],\n [1., 0.]]
    return summary(a, full=a.size if drawn_in_full(a.shape) and (a.ndim < 2 or a.size == 1) else 0, brief=True)


def drawn_in_full(shape):
    """Whether a node draws a tensor of this shape in full: one row of at most NODE_FULL numbers, or a
    matrix of at most NODE_ROWS rows of NODE_FULL (a 2×2 gradient= is the lesson: [[0, 1], [1, 0]])."""
    shape = tuple(shape)
    if len(shape) == 2:
        return shape[0] <= NODE_ROWS and shape[1] <= NODE_FULL
    return math.prod(shape) <= NODE_FULL and (len(shape) <= 1 or math.prod(shape[:-1]) == 1)


# --- in a formula -------------------------------------------------------------------------------

def number_text(v):
    """A number as a formula writes it: ``10``, ``0.5``, ``-3``, ``0.8814``, ``\\infty``."""
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    v = float(v)
    if math.isnan(v):
        return r"\mathrm{nan}"
    if math.isinf(v):
        return r"\infty" if v > 0 else r"-\infty"
    if v.is_integer() and abs(v) < 1e6:
        return str(int(v))
    text = f"{v:.4g}"
    if "e" in text:
        m, e = text.split("e")
        return rf"{m} \cdot 10^{{{int(e)}}}"
    return text


def short(a, limit=6):
    """A short text for a value in a formula: ``10``, ``0.5``, ``[10, 10]``, ``[1, 2, 3, …] (4×5)``."""
    if a is None:
        return "None"
    a = np.asarray(a)
    if a.size == 1:
        return _scalar(a.reshape(-1)[0])
    if a.size <= limit and a.ndim == 1:
        return "[" + ", ".join(_scalar(v) for v in a) + "]"
    if a.size <= limit and a.ndim == 2:
        return "[" + ", ".join("[" + ", ".join(_scalar(v) for v in row) + "]" for row in a) + "]"
    head = ", ".join(_scalar(v) for v in a.reshape(-1)[:3])
    return f"[{head}, …] ({'×'.join(str(n) for n in a.shape)})"


def _scalar(v):
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        return str(v)
    if v.is_integer() and abs(v) < 1e6:
        return str(int(v))
    return f"{v:.4g}"
