"""Backward hooks: the user's functions the engine calls as gradients arrive, in PyTorch's order.

At each node of a backward pass PyTorch runs, in this order::

    1. tensor hooks  (``t.register_hook``) of the tensor whose gradient this is -- for a non-leaf,
       the hooks its grad_fn had when they were registered (after ``t.cos_()`` a new one does);
       for a leaf, its own, on its AccumulateGrad node; then ``retain_grad()``'s copy
    2. node pre-hooks (``grad_fn.register_prehook(f)``): ``f(grad_outputs)``
    3. the node itself (at a leaf: ``.grad += g``, then ``register_post_accumulate_grad_hook``'s)
    4. node hooks (``grad_fn.register_hook(f)``): ``f(grad_inputs, grad_outputs)``

Each may return a replacement for what it was given (the post-accumulate hooks return nothing).
This module holds the hooks and calls them; the engine decides when, and calls none of them in
the widget's own passes (:func:`gradviz.autograd.grad_mode.observing`).
"""

import itertools

from ._types import TensorBase

__all__ = ["RemovableHandle", "NodeHooks", "add_hook", "call_tensor_hooks", "call_pre_hooks", "call_post_hooks"]

_ids = itertools.count()


class RemovableHandle:
    """What registering a hook returns: ``handle.remove()`` takes the hook out again (also as a
    context manager: ``with t.register_hook(f): ...``)."""

    __module__ = "gradviz.utils.hooks"

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict = hooks_dict
        self.id = next(_ids)
        self.extra_dicts = [] if extra_dict is None else list(extra_dict) if isinstance(extra_dict, list) \
            else [extra_dict]

    def remove(self):
        for d in [self.hooks_dict, *self.extra_dicts]:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks, fn):
    """Put ``fn`` last in the ordered dict ``hooks``; its handle removes it."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class NodeHooks:
    """A node's hooks: tensor hooks per output, pre-hooks, and hooks run after it."""

    __slots__ = ("tensor", "pre", "post")

    def __init__(self):
        self.tensor, self.pre, self.post = {}, {}, {}

    def for_output(self, k):
        return self.tensor.setdefault(k, {})


def call_tensor_hooks(hooks, g, wrap):
    """``g`` through each tensor hook: a recorded gradient (create_graph=True) as it is, an
    array wrapped as a tensor (``wrap``); a hook's result replaces it."""
    if isinstance(g, TensorBase):
        for hook in list(hooks.values()):
            r = hook(g)
            if r is not None:
                g = r
        return g
    for hook in list(hooks.values()):
        r = hook(wrap(g))
        if r is not None:
            g = r._data
    return g


def _as_tensors(grads, wrap):
    return tuple(g if g is None or isinstance(g, TensorBase) else wrap(g) for g in grads)


def _as_given(grads, like):
    """Results of a hook back in the pass's own form: arrays, or tensors under create_graph=True."""
    if isinstance(like, TensorBase):
        return list(grads)
    return [None if g is None else g._data if isinstance(g, TensorBase) else g for g in grads]


def _counted(hook, r, expected):
    """What a node hook returned, refused in PyTorch's words unless it holds one value per gradient."""
    if not isinstance(r, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
    if len(r) != expected:
        raise RuntimeError(f"hook '{getattr(hook, '__name__', hook)}' has returned an incorrect number of "
                           f"values (got {len(r)}, but expected {expected})")
    return r


def call_pre_hooks(hooks, grad_outputs, wrap):
    """``f(grad_outputs)`` for each node pre-hook; a tuple it returns replaces the gradients."""
    like = next((g for g in grad_outputs if g is not None), None)
    for hook in list(hooks.values()):
        r = hook(_as_tensors(grad_outputs, wrap))
        if r is not None:
            grad_outputs = _as_given(_counted(hook, r, len(grad_outputs)), like)
    return grad_outputs


def call_post_hooks(hooks, grad_inputs, grad_outputs, wrap):
    """``f(grad_inputs, grad_outputs)`` for each node hook; a tuple it returns replaces grad_inputs."""
    like = next((g for g in [*grad_inputs, *grad_outputs] if g is not None), None)
    outs = _as_tensors(grad_outputs, wrap)
    for hook in list(hooks.values()):
        r = hook(_as_tensors(grad_inputs, wrap), outs)
        if r is not None:
            grad_inputs = _as_given(_counted(hook, r, len(grad_inputs)), like)
    return grad_inputs


# --- what a hook may ask of the pass running it (register_multi_grad_hook asks) ----------------

tasks, task_ids = [], itertools.count()    # (number, the nodes it runs, whether autograd.grad's) per pass


def current_graph_task_id():
    """A number for the backward pass now running (-1 outside one)."""
    return tasks[-1][0] if tasks else -1


def will_engine_execute_node(node):
    """Whether the running pass will reach ``node`` (a grad_fn or AccumulateGrad)."""
    if not tasks:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    if tasks[-1][2] and hasattr(node, "variable"):
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                           "autograd.grad(). This is currently not supported.")
    return node in tasks[-1][1]


# --- saved tensors: pack when a node saves one, unpack when backward needs it -----------------------

saved_hooks = []     # (pack, unpack) of each saved_tensors_hooks() block open now, innermost last
disabled = []        # the messages of the disable_saved_tensors_hooks() blocks open now


def pack_saved(node, order, pack, unpack):
    """Each value ``node`` saved (input positions in ``order``, -1 for its result) through ``pack``;
    backward will use ``unpack`` of what pack returned instead."""
    node._packed = {}
    for k in order:
        entry = node._saved[k]
        if entry is not None:
            node._packed[k] = (pack(entry[3] if k != -1 else node._out()), unpack)


def unpacked(node, saved, only=None):
    """The saved values as the unpack hooks give them back (just value ``only``'s hook, if given)."""
    saved = list(saved)
    for k, (packed, unpack) in node._packed.items():
        if only is not None and k != only:
            continue
        t = unpack(packed)
        if not isinstance(t, TensorBase):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        entry = saved[k]
        saved[k] = (t._data, entry[1], entry[2], entry[3] if k == -1 else t)
    return saved


class SavedTensor:
    """``grad_fn._raw_saved_self``: one value a node saved, whose pack/unpack hooks can be set."""

    __module__ = "gradviz._C._autograd"

    def __init__(self, node, k):
        self.node, self.k = node, k

    def register_hooks(self, pack_hook, unpack_hook):
        node = self.node
        if node._freed:
            raise RuntimeError("Trying to backward through the graph a second time (or directly access saved "
                               "tensors after they have already been freed). Saved intermediate values of the "
                               "graph are freed when you call .backward() or autograd.grad(). Specify "
                               "retain_graph=True if you need to backward through the graph a second time or if "
                               "you need to access saved tensors after calling backward.")
        if node._packed is not None and self.k in node._packed:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. "
                               "Hint: only one pair of hooks is allowed at a time.")
        entry = node._saved[self.k]
        if node._packed is None:
            node._packed = {}
        # (this pack hook sees the saved values as data, without their history, as PyTorch's does)
        node._packed[self.k] = (pack_hook((entry[3] if self.k != -1 else node._out()).detach()), unpack_hook)
