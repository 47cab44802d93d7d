"""Ops with several outputs (split, chunk, unbind, a custom Function returning a tuple): one
grad_fn node for all of them, as PyTorch records it.

Output ``k`` leads to ``(node, k)``; :func:`gradviz.autograd.engine.run_backward` waits for every
output's gradient and counts the ones none reached as zeros.
"""

import weakref

from .engine import record
from .grad_mode import _GradMode
from .views import made_view, requires_grad, view_meta

__all__ = ["apply_outputs", "record_outputs"]


def apply_outputs(op, t, **params):
    """An op with several outputs (split, unbind): views of ``t`` that share one grad_fn node."""
    pieces = [t._wrap(a) for a in op.forward(t._data, **params)]
    how = "multi" if _GradMode.enabled and not _GradMode.inference else view_meta(t)
    for p in pieces:
        made_view(p, t, "inference" if t._view is not None and t._view[0] == "inference" else how)
    if _GradMode.enabled and requires_grad(t) and t._data.dtype.kind == "f" and pieces:
        record_outputs(op, (t,), [t._data], pieces, params)
    return tuple(pieces)


def record_outputs(op, inputs, arrays, results, params):
    """One node for several outputs (split, chunk, unbind), as PyTorch records them: output ``k``
    leads to ``(node, k)``, and backward waits for every output's gradient (zeros where none came)."""
    node = record(op, inputs, arrays, results[0], params)
    node._outs = tuple((weakref.ref(r), (r._data.shape, r._data.dtype)) for r in results)
    for k, r in enumerate(results):
        r._grad_fn, r._requires_grad, r._output_nr = node, True, k
    return node
