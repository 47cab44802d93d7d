"""``torch.autograd.functional``: Jacobians, Hessians and their products with a vector, built on ``grad``.

>>> import gradviz as torch
>>> torch.autograd.functional.jacobian(lambda x: x ** 2, torch.tensor([1., 2., 3.]))
tensor([[2., 0., 0.],
        [0., 4., 0.],
        [0., 0., 6.]])
>>> torch.autograd.functional.hessian(lambda x: x.pow(3).sum(), torch.tensor([1., 2.]))
tensor([[ 6.,  0.],
        [ 0., 12.]])

Everything here is :func:`gradviz.autograd.grad`, as in PyTorch's own module: row ``j`` of a
Jacobian is the gradient of output element ``j``; a Hessian is the Jacobian of the gradient,
which is why the gradient is computed with ``create_graph=True`` (recorded, so it can be
differentiated again); ``vjp``, ``jvp``, ``vhp`` and ``hvp`` are one or two ``grad`` calls
(``jvp`` and ``hvp`` by the double-backward trick).  The arguments, results and error
messages are PyTorch's; ``vectorize=True`` gives the same numbers, one row at a time.
"""

from .._creation import zeros, zeros_like
from ._backward_grad import grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from .._matmul_and_joins import stack
from ..tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


# --- arguments and results, as PyTorch reads and returns them -----------------------------------

def _as_tuple(inp, arg_name, fn_name):
    """(whether it was a tuple, the tensors as a tuple), with PyTorch's message for a non-tensor."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where} has type {type(el)}.")
    return is_tuple, items


def _unpack(res, to_unpack):
    """A tuple back to what the caller gave: ``(outputs_were_tuple, inputs_were_tuple)`` for nested results."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        return res if to_unpack[0] else res[0]
    return res if to_unpack else res[0]


def _preprocess(inputs, create_graph, need_graph):
    """Fresh tensors to differentiate with respect to: a view (keeping the caller's graph) under
    create_graph, else a detached copy that requires grad (or not, for ``v``)."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad else inp.detach().requires_grad_(need_graph)
                 for inp in inputs)


def _postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


_INDEPENDENT = {
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. "
               "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
               "and that the hessian depends on the inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {i} is independent of the input. This is not allowed in strict mode. You should ensure that "
                "your function is twice differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed in "
               "a differentiable manner from the input when running in strict mode.",
}


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_INDEPENDENT[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` of the outputs that require grad (None for every input if none does)."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, grads = zip(*pairs)
    return grad(outs, inputs, grads, allow_unused=True, create_graph=create_graph, retain_graph=retain_graph)


_ZERO_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Zeros where a gradient is None (an error in strict mode), as PyTorch fills them."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_MESSAGES[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare(func, inputs, v, create_graph, strict, name):
    """jvp's, vhp's and hvp's first step: inputs made differentiable, ``v`` (one per input) checked,
    ``func`` run."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _preprocess(inputs, create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _preprocess(v, create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                           "Tensor with a single element.")
    is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs


def _last_pass(grad_args, refs, refs_tuple, outputs, is_outputs_tuple, create_graph, strict, stage):
    """The last ``grad`` call (recorded only under create_graph; zeros where a gradient is None, shaped
    like ``refs``) and ``(outputs, result)`` as PyTorch returns them."""
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(_grad(*grad_args, create_graph=create_graph), refs, strict, create_graph, stage)
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(res, create_graph), refs_tuple))


def _gradient(func, inputs, v, create_graph, strict, name):
    """vhp's and hvp's first half: ``func`` run (one element out) and its gradient, recorded."""
    is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _prepare(func, inputs, v, create_graph, strict, name)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")
    jac = _grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


# --- the public functions -----------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), vᵀ · ∂func/∂inputs)``: one reverse pass seeded with ``v``."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _preprocess(v, create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
    return _last_pass((outputs, inputs, v), inputs, is_inputs_tuple, outputs, is_outputs_tuple, create_graph, strict,
                      "back")


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), ∂func/∂inputs · v)`` by the double-backward trick: the vjp is linear in its
    seed ``u``, so differentiating it with respect to ``u`` along ``v`` gives the Jacobian times ``v``."""
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _prepare(func, inputs, v, create_graph, strict, "jvp")
        seeds = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _grad(outputs, inputs, seeds, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    return _last_pass((grad_inputs, seeds, v), outputs, is_outputs_tuple, outputs, is_outputs_tuple, create_graph,
                      strict, "back_trick")


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """∂ func(inputs) / ∂ inputs, of shape ``output.shape + input.shape`` (tuples of them for tuples).

    One reverse pass per output element; with ``create_graph=True`` the result is recorded
    (a ``grad_fn``), which is how :func:`hessian` differentiates it again.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        raise NotImplementedError("gradviz computes Jacobians in reverse mode only (no forward-mode AD)")
    if strict and vectorize:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        result = tuple(_jacobian_of(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
        result = _postprocess(result, create_graph)
    return _unpack(result, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_of(i, out, inputs, create_graph, strict):
    """One output's Jacobian with respect to each input: the gradient of each of its elements, stacked."""
    rows = [[] for _ in inputs]
    for j in range(out.nelement()):
        grads = _grad((out.reshape(-1)[j],), inputs, retain_graph=True, create_graph=create_graph)
        for k, (g, inp) in enumerate(zip(grads, inputs)):
            if g is not None:
                if strict and create_graph and not g.requires_grad:
                    raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode when create_graph=True.")
                rows[k].append(g)
            else:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {k}. This "
                                       "is not allowed in strict mode.")
                rows[k].append(zeros_like(inp))
    return tuple(stack(r, dim=0).view(out.size() + inp.size()) if r else zeros(out.size() + inp.size(), dtype=inp.dtype)
                 for r, inp in zip(rows, inputs))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """∂² func / ∂inputs² of a function with one output element: the Jacobian of its gradient.

    For tuple inputs, a tuple of tuples: ``H[i][j]`` of shape ``inputs[i].shape + inputs[j].shape``.
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, (is_inputs_tuple, is_inputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), vᵀ · H)``: the gradient (recorded), then its vjp with ``v``."""
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _gradient(func, inputs, v, create_graph, strict,
                                                                             "vhp")
    return _last_pass((jac, inputs, v), inputs, is_inputs_tuple, outputs, is_outputs_tuple, create_graph, strict,
                      "double_back")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H · v)`` by the double-backward trick (as ``jvp`` does with the gradient)."""
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _gradient(func, inputs, v, create_graph, strict,
                                                                             "hvp")
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    return _last_pass((double_back, grad_jac, v), inputs, is_inputs_tuple, outputs, is_outputs_tuple, create_graph,
                      strict, "double_back_trick")
