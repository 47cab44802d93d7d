"""Which engine's adapter reads the tensors handed over: gradviz's own, or PyTorch's.

>>> import gradviz as torch
>>> x = torch.ones(2, requires_grad=True)
>>> t = trace_of((x * 2).sum(), names={"x": x})
>>> t.engine, [s.name for s in t.steps]
('gradviz', ['MulBackward0', 'SumBackward0'])

PyTorch's adapter (:mod:`gradviz._torch_trace`) is imported only when every root is a real
``torch.Tensor``, so ``import gradviz`` never imports torch.
"""

from .naming import collect_names, tensor_library
from .trace import GradvizAdapter

__all__ = ["make_adapter", "trace_of"]


def trace_of(*roots, names=None, name=None, frame=None, namespace=None, recording=None, cuts=True):
    """The :class:`gradviz.trace.Trace` behind ``roots``: gradviz tensors, or real ``torch.Tensor``s.

    Names come from ``name=`` (the first root), ``names={"w": w}``, then the variables of
    ``frame`` or ``namespace`` (see :func:`gradviz.naming.collect_names`).  ``recording`` (a
    :func:`gradviz.trace.record` result) becomes the trace's runs.
    """
    if len(roots) == 1 and isinstance(roots[0], (list, tuple)):
        roots = tuple(roots[0])
    adapter = make_adapter(roots, names=names, name=name, frame=frame, namespace=namespace, cuts=cuts)
    if recording is not None:
        adapter.add_recording(recording)
    return adapter.trace


def make_adapter(roots, names=None, name=None, frame=None, namespace=None, cuts=True):
    """The adapter for the roots' engine (gradviz's, or PyTorch's when handed torch tensors)."""
    if len({tensor_library(r) for r in roots}) > 1:
        raise TypeError("gradviz draws one engine's graph at a time, and these tensors mix gradviz's and torch's: "
                        "draw each engine's tensors on its own")
    found = collect_names(roots, names, name, frame, namespace)
    if roots and all(tensor_library(r) == "torch" for r in roots):
        from ._torch_trace import TorchAdapter     # torch is imported only when it is handed over
        return TorchAdapter(roots, found, cuts=cuts)
    return GradvizAdapter(roots, found, cuts=cuts)
