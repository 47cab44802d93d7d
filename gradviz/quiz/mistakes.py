"""Wrong answers worth offering beside the right one: each a slip students really make, never the answer itself.

The caller knows the graph and hands in what each slip would give (the widget's practice mode
does: :mod:`gradviz.widget.practice`); this module keeps the plausible ones (finite, not the answer
within the checker's tolerance, not each other) and fills up with slips any number allows.

Kinds (each has its own feedback words, ``mk_<kind>`` in ``gradviz.widget.i18n``):

``forward``          the forward value where a gradient or factor is asked
``derivative``       the derivative where the forward value is asked
``input``            the other operand's place mixed up (∂(a·b)/∂a is b, not a)
``missing_factor``   a constant factor left out (the 2 of x², the 5 of 5·y, 1/n of a mean)
``incoming``         the gradient that arrived, not yet multiplied by the local factor
``local_only``       the local factor alone, the incoming gradient forgotten
``transpose``        a matrix product's transpose on the wrong side
``no_batch_sum``     one gradient per sample, where PyTorch sums over the batch
``not_accumulated``  one path's share, or this pass alone: the sum (or the earlier .grad) forgotten
``sign``             the sign flipped
``double``           twice the answer
``arith``            an arithmetic slip (one more, one less)

>>> [k for k, v in distractors(10.0, [("forward", 2.0), ("incoming", 10.0)])]
['forward', 'sign', 'double']
"""

import numpy as np

from .checking import close

__all__ = ["distractors", "KINDS"]

KINDS = ("forward", "derivative", "input", "missing_factor", "incoming", "local_only", "transpose", "no_batch_sum",
         "not_accumulated", "sign", "double", "arith")


def _differs(a, b, dtype):
    return np.shape(a) != np.shape(b) or not bool(np.all(close(a, b, dtype)))


def distractors(answer, candidates, dtype="float32", k=3):
    """Up to ``k`` ``(kind, value)`` pairs: ``candidates`` first (in their order), then generic slips.

    A candidate is kept when it is finite, differs from ``answer`` (and from the ones kept) beyond
    the checker's tolerance, and has at most as many numbers as a student could type (256).
    """
    answer = np.asarray(answer, dtype=np.float64)
    kept = []

    def offer(kind, value):
        if len(kept) >= k or value is None:
            return
        value = np.asarray(value, dtype=np.float64)
        if value.size == 0 or value.size > 256 or not np.all(np.isfinite(value)):
            return
        if _differs(value, answer, dtype) and all(_differs(value, v, dtype) for _, v in kept):
            kept.append((kind, value))

    for kind, value in candidates:
        if kind not in KINDS:
            raise ValueError(f"distractors(): unknown kind {kind!r}; kinds are {', '.join(KINDS)}")
        offer(kind, value)
    if np.all(np.isfinite(answer)):
        offer("sign", -answer)
        offer("double", 2 * answer)
        if answer.ndim == 2 and answer.shape[0] != answer.shape[1]:
            offer("transpose", answer.T)
        for slip in (answer + 1, answer - 1, answer / 2 + 0.5):    # (0: neither -0 nor 2·0 differs from it)
            offer("arith", slip)
    return kept
