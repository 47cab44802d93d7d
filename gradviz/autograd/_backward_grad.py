"""``torch.autograd.backward`` and ``torch.autograd.grad``, the calls a user makes (``loss.backward()``
calls the first): they check what they are given, seed each root, and hand the roots to
:func:`gradviz.autograd.engine.run_backward` (with :mod:`gradviz.autograd.double_backward`'s steps
for ``create_graph=True``).
"""

import warnings

import numpy as np

from .._types import Size, TensorBase
from .engine import edge, run_backward

__all__ = ["backward", "grad"]


def _steps(create_graph):
    """What the engine runs a node and fills a ``.grad`` with: its own steps (None), or the recorded
    ones of :mod:`.double_backward` for ``create_graph=True``, loaded on that first use: they and
    the recorded tensors they compute with are not part of ``import gradviz`` (issue 16)."""
    if not create_graph:
        return None
    from .double_backward import STEPS
    return STEPS


def _make_grads(outputs, grads):
    """Check or create the gradient that seeds each output (PyTorch's ``_make_grads``)."""
    return [_make_grad(out, g, i) for i, (out, g) in enumerate(zip(outputs, grads))]


def _make_grad(out, g, i):
    """The seed of output ``i``: ones where no gradient is given (a one-element output only), else
    the given gradient's values in the output's dtype, checked."""
    if g is None:
        if out._requires_grad and out._data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        return _ones_like(out._data)
    if not isinstance(g, TensorBase):
        raise TypeError("gradients can be either Tensors or None, but got " + type(g).__name__)
    if g._data.shape != out._data.shape:
        raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g.shape)!r} "
                           f"and output[{i}] has a shape of {Size(out.shape)!r}.")
    # (its values as they are, not a copy, as PyTorch hands the engine the tensor given: a hook
    # writing into its gradient writes into that tensor)
    return g._data.astype(out._data.dtype, copy=False)


_ONES = {}    # (shape, dtype) of a one-element output: a 1 to copy (np.ones_like of a 0-d array takes 1.2 µs)


def _ones_like(data):
    """A new array of ones, the shape and dtype of ``data``: ``loss.backward()``'s implicit seed."""
    if data.size != 1:
        return np.ones_like(data)
    one = _ONES.get((data.shape, data.dtype))
    if one is None:
        one = _ONES[data.shape, data.dtype] = np.ones(data.shape, data.dtype)
    return one.copy()


def _as_tuple(x):
    if x is None:
        return ()
    return (x,) if isinstance(x, TensorBase) else tuple(x)


def _grads_for(outputs, grads):
    """One gradient per output (None: implicit); PyTorch zips, so extra gradients are ignored."""
    grads = (None,) * len(outputs) if grads is None else _as_tuple(grads)
    if len(grads) < len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    return grads


def _check_outputs(outputs):
    for i, out in enumerate(outputs):
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


REFERENCE_CYCLE = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
    "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
    "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
    "to None after use to break the cycle and avoid the leak. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)")
_warned = {}


def _seeds(tensors, grad_tensors, create_graph):
    """The gradients that seed the pass: arrays, or under ``create_graph=True`` tensors -- a given
    gradient itself (a graph through it is kept, as hvp needs), ones where none was given."""
    grads = _grads_for(tensors, grad_tensors)
    seeds = _make_grads(tensors, grads)   # types and shapes first, as in PyTorch
    if not create_graph:
        return seeds
    return [g if isinstance(g, TensorBase) and g._data.dtype == s.dtype else t._wrap(s)
            for t, g, s in zip(tensors, grads, seeds)]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Compute the sum of gradients of ``tensors`` w.r.t. graph leaves, into their ``.grad``.

    With ``create_graph=True`` the gradients are recorded (``x.grad`` has a grad_fn), and the
    graph is kept unless ``retain_graph=False`` is given.
    """
    if isinstance(tensors, TensorBase) and inputs is None and not create_graph and (
            grad_tensors is None or isinstance(grad_tensors, TensorBase)):
        # (the usual call, ``loss.backward()`` or ``y.backward(g)``: the steps below for one tensor)
        seed = _make_grad(tensors, grad_tensors, 0)
        _check_outputs((tensors,))
        fn, k = edge(tensors)
        run_backward([fn], [seed], bool(retain_graph), root_outputs=[k] if k else None)
        return
    tensors = _as_tuple(tensors)
    seeds = _seeds(tensors, grad_tensors, create_graph)
    _check_outputs(tensors)
    if create_graph and not _warned.get("cycle"):   # once per process, as PyTorch's TORCH_WARN_ONCE
        _warned["cycle"] = True
        warnings.warn(REFERENCE_CYCLE, UserWarning, stacklevel=3)
    edges = [edge(t) for t in tensors]
    targets = None
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        targets = {edge(t)[0] for t in inputs}
    run_backward([fn for fn, _ in edges], seeds, create_graph if retain_graph is None else bool(retain_graph),
                 targets=targets, root_outputs=[k for _, k in edges], create_graph=bool(create_graph),
                 steps=_steps(create_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` w.r.t. ``inputs``, returned instead of added into ``.grad``.

    With ``create_graph=True`` they are recorded tensors (a grad_fn where they depend on something
    that requires grad), ready to be differentiated again.
    """
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    seeds = _seeds(outputs, grad_outputs, create_graph)
    _check_outputs(outputs)
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    targets = [edge(t)[0] for t in inputs]
    captured = run_backward([edge(t)[0] for t in outputs], seeds,
                            create_graph if retain_graph is None else bool(retain_graph),
                            root_outputs=[edge(t)[1] for t in outputs],
                            targets=set(targets), accumulate=False, create_graph=bool(create_graph),
                            steps=_steps(create_graph))
    result = []
    for i, (t, node) in enumerate(zip(inputs, targets)):
        g = captured.get(node)
        if g is None:
            if not (allow_unused or materialize_grads):
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the desired behavior.")
            result.append(t._wrap(np.zeros_like(t._data)) if materialize_grads else None)
        elif isinstance(g, TensorBase):
            result.append(g)
        else:
            result.append(t._wrap(np.array(g, dtype=t._data.dtype, copy=True)))
    return tuple(result)
