"""``torch.autograd.graph``: the graph's nodes and the hooks a backward pass calls.

>>> import gradviz as torch
>>> x = torch.tensor([1., 2.], requires_grad=True)
>>> y = x.exp()
>>> seen = []
>>> _ = y.grad_fn.register_prehook(lambda grad_outputs: seen.append("before ExpBackward0"))
>>> _ = y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append("after ExpBackward0"))
>>> with torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append("pack") or t,
...                                               lambda t: seen.append("unpack") or t):
...     z = (y * y).sum()
>>> z.backward(); seen
['pack', 'pack', 'unpack', 'unpack', 'before ExpBackward0', 'after ExpBackward0']

The order in which a pass calls each kind of hook is written in :mod:`gradviz._hooks`.  Like
every hook, none of these runs in the widget's own passes (:func:`gradviz.autograd.grad_mode.observing`).
"""

import functools
from collections import defaultdict
from typing import NamedTuple

from .. import _hooks
from .engine import edge
from .node import Node, shown

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "register_multi_grad_hook", "saved_tensors_hooks",
           "save_on_cpu", "disable_saved_tensors_hooks"]


class GradientEdge(NamedTuple):
    """``(node, output_nr)``: where a tensor's gradient enters the graph."""

    node: Node
    output_nr: int
    ownership_token: object = None


def get_gradient_edge(tensor):
    """The edge a tensor's gradient flows into: its grad_fn, or a leaf's AccumulateGrad."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    fn, k = edge(tensor)
    return GradientEdge(fn if fn is None else shown(fn), k)


class _MultiHandle:
    """The handle of a multi-grad hook: ``remove()`` takes out each tensor's part."""

    __module__ = "torch.autograd.graph"

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward pass for a group of tensors: with mode "all", after every one
    of them the pass reaches has its gradient, with the list of gradients (None for the others);
    with mode "any", at the first gradient, with that gradient."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    if mode == "all":
        count, buffer, expected = {}, {}, [None]
        nodes = [edge(t)[0] for t in tensors]

        def inner_hook(idx, grad):
            task = _hooks.current_graph_task_id()
            n = count.get(task, 0)
            count[task] = n + 1
            buffer.setdefault(task, [None] * len(tensors))[idx] = grad
            if n == 0:           # on the first call: how many of the tensors this pass reaches
                expected[0] = sum(map(_hooks.will_engine_execute_node, nodes))
            if n == expected[0] - 1:
                fn(buffer.pop(task))
                del count[task]

        handles = tuple(t.register_hook(functools.partial(inner_hook, i)) for i, t in enumerate(tensors))
        return _MultiHandle(handles)
    ran = defaultdict(bool)

    @functools.wraps(fn)
    def wrapped_fn(grad):
        task = _hooks.current_graph_task_id()
        if ran[task]:
            return None
        ran[task] = True
        return fn(grad)

    return _MultiHandle(tuple(t.register_hook(wrapped_fn) for t in tensors if t.requires_grad))


class saved_tensors_hooks:
    """``with saved_tensors_hooks(pack, unpack):`` -- every value an op saves for backward inside
    the block goes through ``pack`` now, and backward uses ``unpack`` of what it returned."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _hooks.disabled:
            raise RuntimeError(_hooks.disabled[-1])
        _hooks.saved_hooks.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *exc):
        _hooks.saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved values kept in CPU memory until backward: on gradviz's CPU tensors they stay where they are."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda tensor: (tensor.device, tensor.cpu()),
                         lambda packed: packed[1].to(packed[0]))


class disable_saved_tensors_hooks:
    """``with disable_saved_tensors_hooks(message):`` -- opening a saved_tensors_hooks block inside
    raises RuntimeError(message)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        _hooks.disabled.append(self.error_message)

    def __exit__(self, *exc):
        _hooks.disabled.pop()
