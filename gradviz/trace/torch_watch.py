"""``with gradviz.watch():`` -- remember the values a real PyTorch forward pass computes, for the widget.

PyTorch keeps only what backward needs, so the value of ``x + 1`` or the ``1`` in it is often gone
by the time ``gradviz.animate(loss)`` is called.  Inside ``watch()`` (a ``TorchFunctionMode``)
every torch function that makes a tensor with a ``grad_fn`` is noted: its output's numbers and the
numbers it was called with.  The widget then shows those instead of working them out.

>>> import torch, gradviz                                   # doctest: +SKIP
>>> with gradviz.watch():                                   # doctest: +SKIP
...     loss = model(x).sum()
>>> gradviz.animate(loss)                                   # doctest: +SKIP

Bounded by the graphs themselves: what watch() notes about a node is kept in that node's own
``metadata`` (and each module's call on its output node), so it lives exactly as long as the graph
does -- a training loop's old graphs take their notes with them when they are freed, and nothing
outlives the last graph once the block has ended.  An optimiser's ``step()`` makes no graph, so
the mode steps aside while it runs (most of a training step's torch calls are the optimiser's).
torch is imported when ``watch()`` is called, not before.
"""

import itertools
import weakref

__all__ = ["watch", "watched", "born", "module_calls", "KEY"]

KEY = "gradviz.watch"            # a node's metadata entry: {"out": array, "args": [...], "n": count}
CALLS = "gradviz.watch.modules"  # an output node's metadata entry: [(weakref to module, {input grad_fns})]
_BORN = {}                  # id(tensor) -> (weakref, count): live tensors made without a graph, and when
_CLOCK = itertools.count()  # one count for tensors and nodes: the order things were made
_ATTRIBUTES = ("__get__", "__set__", "__delete__")


def watch():
    """A context manager recording the values of the torch operations run inside it."""
    import torch
    import torch.optim.optimizer as optimizer
    from torch.overrides import TorchFunctionMode

    class Watch(TorchFunctionMode):
        """Notes each result that has a grad_fn, and each module's call, then returns them unchanged."""

        def __enter__(self):
            self._paused = 0
            self._hooks = [torch.nn.modules.module.register_module_forward_hook(self._module_called),
                           optimizer.register_optimizer_step_pre_hook(self._pause),
                           optimizer.register_optimizer_step_post_hook(self._resume)]
            return super().__enter__()

        def __exit__(self, *exc):
            for h in self._hooks:
                h.remove()
            while self._paused:      # a step() that raised never resumed: back on the stack to leave it
                self._resume()
            return super().__exit__(*exc)

        def _pause(self, *_):
            n = torch._C._len_torch_function_stack()
            if n and torch._C._get_function_stack_at(n - 1) is self:
                torch._C._pop_torch_function_stack()
                self._paused += 1

        def _resume(self, *_):
            if self._paused:
                self._paused -= 1
                torch._C._push_on_torch_function_stack(self)

        def _module_called(self, module, inputs, output):
            with torch._C.DisableTorchFunction():     # (reading grad_fn is no op of the user's)
                _module_called(module, inputs, output)

        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if getattr(func, "__name__", None) in _ATTRIBUTES:     # reading .grad makes no tensor
                return out
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
    fn = out.grad_fn
    if fn is None:            # a tensor made without a graph (data, a parameter): when, while it lives
        key = id(out)
        _BORN[key] = (weakref.ref(out, lambda ref, key=key: _forget(key, ref)), n)
        return
    operands = []
    for a in args:
        if isinstance(a, torch.Tensor):      # a data tensor's numbers (what an op's own input is, its node says)
            operands.append(None if a.requires_grad else _kept(a))
        elif isinstance(a, (bool, int, float)):
            operands.append(a)
    fn.metadata[KEY] = {"out": _kept(out), "args": operands, "n": n}


def _kept(t):
    """The tensor's numbers as they are now, cheaply: an alias and its version (the numbers are
    read, and trusted, only if nothing has written into it since)."""
    return _Kept(t.detach(), t._version)


class _Kept:
    __slots__ = ("t", "version")

    def __init__(self, t, version):
        self.t, self.version = t, version

    def array(self):
        """A copy of the numbers, or None if they were written into since (or cannot be read)."""
        try:
            if self.t._version != self.version:
                return None
            return self.t.cpu().numpy().copy()
        except Exception:  # bfloat16, sparse...: the adapter reads those from elsewhere
            return None


def _forget(key, ref):
    entry = _BORN.get(key)
    if entry is not None and entry[0] is ref:
        del _BORN[key]


def _module_called(module, inputs, output):
    fn = getattr(output, "grad_fn", None)
    if fn is None:
        return
    ins = {getattr(t, "grad_fn", None) for t in inputs} - {None}
    fn.metadata.setdefault(CALLS, []).append((weakref.ref(module), ins))


def module_calls(fns=()):
    """``{id(module): (output grad_fn, input grad_fns)}``: each module's last call seen by watch()
    among the nodes ``fns`` (a graph's, in forward order)."""
    calls = {}
    for fn in fns:
        for ref, ins in _metadata(fn).get(CALLS, ()):
            module = ref()
            if module is not None:
                calls[id(module)] = (fn, ins)
    return calls


def born(t):
    """When watch() saw the tensor ``t`` made (a count shared with the nodes' ``"n"``), or None."""
    entry = _BORN.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


def watched(fn):
    """What watch() saw of the node ``fn`` made (``{"out", "args", "n"}``; an array is None where
    it was written into since), or None."""
    seen = _metadata(fn).get(KEY)
    if seen is None:
        return None
    return {"out": seen["out"].array(), "n": seen["n"],
            "args": [a.array() if isinstance(a, _Kept) else a for a in seen["args"]]}


def _metadata(fn):
    try:
        return fn.metadata
    except Exception:  # a node without metadata (not one of torch's): nothing was noted
        return {}
