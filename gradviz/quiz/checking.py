"""Is an answer right? Its numbers against the engine's, within the dtype's tolerance, its shape too, and what was right and what not.

A verdict is plain data, worded by the widget (``gradviz.widget.i18n``, keys ``p_*`` and ``v_*``)::

    {"ok": True | False | None,   # None: the text could not be read (it costs no try)
     "key": "v_ok" | "v_shape_batch" | "v_mistake" | ... ,
     "args": {...},               # the fields of the key's words
     "mistake": kind or None,     # the known slip it matches (see gradviz.quiz.mistakes)
     "value": the numbers read, as a (nested) list, or None}

``static/practice.js`` does exactly this in a saved page (``tests/quiz/test_quiz.py`` holds the two together).

>>> check_answer("0.5*5*4", 10.0, "float32")["ok"]
True
>>> v = check_answer("[[1, 1], [2, 2]]", [3.0, 3.0], "float32")
>>> v["key"], v["args"]["want"]
('v_shape_batch', '(2,)')
>>> check_answer("2", 3.0, "float32", mistakes=[("forward", 2.0)])["mistake"]
'forward'
"""

import numpy as np

from .answers import AnswerError, parse_answer

__all__ = ["check_answer", "tolerance", "close", "shape_text"]

# how far a typed number may be from the engine's: a student types what the widget shows (4
# significant digits), and never closer than the dtype itself can hold (float16 keeps ~3 digits)
_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}
RTOL = 5e-4
ATOL = 1e-6


def tolerance(dtype):
    """``(rtol, atol)`` for answers about a tensor of ``dtype``: exact for integers and bool.

    >>> tolerance("float32"), tolerance("float16")
    ((0.0005, 1e-06), (0.00390625, 0.0009765625))
    """
    name = str(dtype).replace("torch.", "")
    if name in ("bool",) or name.startswith(("int", "uint")):
        return 0.0, 0.0
    eps = _EPS.get(name, _EPS["float32"])
    return max(RTOL, 4 * eps), max(ATOL, eps)


def close(a, b, dtype="float32"):
    """Element by element: ``a`` is ``b`` within the tolerance (nan is nan, inf only its own sign)."""
    rtol, atol = tolerance(dtype)
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(all="ignore"):
        return (a == b) | (np.isnan(a) & np.isnan(b)) | (np.isfinite(a) & np.isfinite(b) & (np.abs(a - b) <= atol + rtol * np.abs(b)))


def shape_text(shape):
    """A shape as Python writes a tuple: ``()``, ``(2,)``, ``(2, 3)``."""
    shape = tuple(int(n) for n in shape)
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _same(a, b, dtype):
    return np.shape(a) == np.shape(b) and bool(np.all(close(a, b, dtype)))


def check_answer(answer, expected, dtype="float32", *, mistakes=()):
    """The verdict on ``answer`` (text, or numbers already read) against ``expected``.

    ``mistakes``: ``[(kind, value), ...]``, the wrong answers a known slip gives (a forgotten sum
    over the batch, the forward value instead of the gradient...: :func:`~gradviz.quiz.mistakes.distractors`);
    an answer equal to one of them is told which slip it looks like.
    """
    want = np.asarray(expected, dtype=np.float64)
    if isinstance(answer, str):
        try:
            got = parse_answer(answer)
        except AnswerError as e:
            return {"ok": None, "key": e.key, "args": dict(e.fields), "mistake": None, "value": None}
    else:
        got = np.asarray(answer, dtype=np.float64)
    verdict = {"ok": False, "key": "v_wrong", "args": {"got": shape_text(got.shape), "want": shape_text(want.shape)},
               "mistake": None, "value": got.tolist()}
    if got.shape == want.shape:
        hits = close(got, want, dtype)
        if bool(np.all(hits)):
            return dict(verdict, ok=True, key="v_ok")
    for kind, value in mistakes:
        if value is not None and _same(got, value, dtype):
            return dict(verdict, key="v_mistake", mistake=kind)
    if got.shape == want.shape:
        right = int(np.sum(hits))
        if right:
            verdict["args"].update(right=str(right), n=str(want.size))
            return dict(verdict, key="v_partly")
        return verdict
    return dict(verdict, key=_shape_slip(got, want, dtype))


def _shape_slip(got, want, dtype):
    """What a right-valued answer of the wrong shape did: one number for all, per sample, transposed..."""
    if got.ndim == 0 and want.size and bool(np.all(close(np.broadcast_to(got, want.shape), want, dtype))):
        return "v_shape_broadcast"                    # 10 for [10, 10]
    if got.size == want.size and bool(np.all(close(got.reshape(-1), want.reshape(-1), dtype))):
        return "v_shape_squeeze"                      # [10] for 10, [[1, 2]] for [1, 2]
    extra = got.ndim - want.ndim
    if extra > 0 and got.shape[extra:] == want.shape:
        summed = got.sum(axis=tuple(range(extra)))
        if bool(np.all(close(summed, want, dtype))):
            return "v_shape_batch"                    # per sample, where PyTorch sums over the batch
    if got.ndim == 2 and got.T.shape == want.shape and bool(np.all(close(got.T, want, dtype))):
        return "v_shape_transpose"
    return "v_shape"
