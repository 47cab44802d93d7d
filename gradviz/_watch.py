"""``with gradviz.watch():`` -- remember the values a real PyTorch forward pass computes, for the widget.

PyTorch keeps only what backward needs, so the value of ``x + 1`` or the ``1`` in it is often gone
by the time ``gradviz.animate(loss)`` is called.  Inside ``watch()`` (a ``TorchFunctionMode``)
every torch function that makes a tensor with a ``grad_fn`` is noted: its output's numbers and the
numbers it was called with.  The widget then shows those instead of working them out.

>>> import torch, gradviz                                   # doctest: +SKIP
>>> with gradviz.watch():                                   # doctest: +SKIP
...     loss = model(x).sum()
>>> gradviz.animate(loss)                                   # doctest: +SKIP

Only the most recent :data:`KEEP` results are kept (a training loop under watch() stays bounded);
torch is imported when ``watch()`` is called, not before.
"""

import itertools
import weakref
from collections import OrderedDict

__all__ = ["watch", "watched", "born", "module_calls", "KEEP"]

KEEP = 20_000
_SEEN = OrderedDict()       # id(grad_fn) -> (grad_fn, {"out": array, "args": [array or number, ...]})
_CALLS = {}                 # id(module) -> (output grad_fn, {input grad_fns}): its last call
_BORN = {}                  # id(tensor) -> (weakref, count): tensors made without a graph, and when
_CLOCK = itertools.count()  # one count for tensors and nodes: the order things were made


def watch():
    """A context manager recording the values of the torch operations run inside it."""
    import torch
    from torch.overrides import TorchFunctionMode

    class Watch(TorchFunctionMode):
        """Notes each result that has a grad_fn, and each module's call, then returns them unchanged."""

        def __enter__(self):
            self._hook = torch.nn.modules.module.register_module_forward_hook(_module_called)
            return super().__enter__()

        def __exit__(self, *exc):
            self._hook.remove()
            return super().__exit__(*exc)

        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            try:
                _note(torch, args, out)
            except Exception:  # watching must never change what the user's code does
                pass
            return out

    return Watch()


def _note(torch, args, out):
    if not isinstance(out, torch.Tensor):
        return
    n = next(_CLOCK)
    if out.grad_fn is None:            # a tensor made without a graph (data, a parameter): when
        _BORN[id(out)] = (weakref.ref(out), n)
        while len(_BORN) > KEEP:
            _BORN.pop(next(iter(_BORN)))
        return
    fn = out.grad_fn
    operands = []
    for a in args:
        if isinstance(a, torch.Tensor):
            operands.append(a.detach().cpu().numpy().copy())
        elif isinstance(a, (bool, int, float)):
            operands.append(a)
    _SEEN[id(fn)] = (fn, {"out": out.detach().cpu().numpy().copy(), "args": operands, "n": n})
    _SEEN.move_to_end(id(fn))
    while len(_SEEN) > KEEP:
        _SEEN.popitem(last=False)


def _module_called(module, inputs, output):
    fn = getattr(output, "grad_fn", None)
    if fn is None:
        return
    ins = {getattr(t, "grad_fn", None) for t in inputs} - {None}
    _CALLS[id(module)] = (fn, ins)


def module_calls():
    """``{id(module): (output grad_fn, input grad_fns)}``: each module's last call seen by watch()."""
    return dict(_CALLS)


def born(t):
    """When watch() saw the tensor ``t`` made (a count shared with the nodes' ``"n"``), or None."""
    entry = _BORN.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


def watched(fn):
    """What watch() saw of the node ``fn`` made (``{"out", "args"}``), or None."""
    entry = _SEEN.get(id(fn))
    return entry[1] if entry is not None and entry[0] is fn else None
