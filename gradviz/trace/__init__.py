"""``gradviz.trace``: what happened in a pass, built once and read by the drawing and the widget.

* :mod:`.model` -- the plain data: :class:`Value`, :class:`Step`, :class:`Event`, :class:`Run`,
  :class:`Trace`; values replayed and tensors named in one place;
* :mod:`.gradviz_engine` -- gradviz's engine recorded (:func:`record`) and read (:class:`GradvizAdapter`);
* :mod:`.torch_engine` -- PyTorch's graph read (:mod:`.torch_watch` keeps a real forward pass's values);
* :mod:`.folding` -- a model's layers folded into one step each;
* here: :func:`trace_of` and :func:`make_adapter`, which pick the engine.

>>> import gradviz as torch
>>> x = torch.ones(2, requires_grad=True)
>>> t = trace_of((x * 2).sum(), names={"x": x})
>>> t.engine, [s.name for s in t.steps]
('gradviz', ['MulBackward0', 'SumBackward0'])

PyTorch's adapter (:mod:`gradviz.trace.torch_engine`) is imported only when every root is a real
``torch.Tensor``, so ``import gradviz`` never imports torch.
"""

from ..naming import collect_names, tensor_library
from .gradviz_engine import GradvizAdapter, Recording, forward_nodes, record
from .model import (EngineAdapter, Event, Input, Run, Step, Trace, Value, array_of, describe_error, name_values,
                    no_derivation_latex, replay, steps_reached)

__all__ = ["trace_of", "make_adapter", "record", "Recording", "forward_nodes", "Trace", "Step",
           "Value", "Input", "Run", "Event", "replay", "name_values", "no_derivation_latex", "describe_error",
           "array_of", "steps_reached", "EngineAdapter", "GradvizAdapter"]


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
        from .torch_engine import TorchAdapter     # torch is imported only when it is handed over
        return TorchAdapter(roots, found, cuts=cuts)
    return GradvizAdapter(roots, found, cuts=cuts)
