"""``torch.utils.hooks``: hook handles, and how a Module's full backward hooks see its gradients.

A module with ``register_full_backward_hook`` (or ``register_full_backward_pre_hook``) passes its
tensor inputs and outputs through an identity Function, ``BackwardHookFunction``, as PyTorch does
(so its outputs print ``grad_fn=<BackwardHookFunctionBackward>``): a hook on the outputs' node
catches the gradients coming out of the module, and a hook on the inputs' node the gradients
going into it, which is when the module's hooks run.
"""

import warnings

from .._hooks import RemovableHandle
from ..autograd import Function, is_grad_enabled
from ..tensor import Tensor

__all__ = ["RemovableHandle", "BackwardHook", "BackwardHookFunction"]


class BackwardHookFunction(Function):
    """The identity, recorded: its node is where a module's backward hooks listen."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


def _pack_with_none(indices, values, size):
    res = [None] * size
    for idx, val in zip(indices, values):
        res[idx] = val
    return tuple(res)


class BackwardHook:
    """One call of a module with full backward hooks: wraps its inputs and outputs, and calls
    ``hook(module, grad_input, grad_output)`` (and the pre-hooks ``hook(module, grad_output)``)."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module, self.user_hooks, self.user_pre_hooks = module, user_hooks, user_pre_hooks
        self.grad_outputs = self.n_outputs = self.output_tensors_index = None
        self.n_inputs, self.input_tensors_index = 0, None

    def _apply(self, args, on_node):
        indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in indices]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        on_node(next(t for t in new if t.grad_fn is not None).grad_fn)
        out = list(args)
        for i, t in zip(indices, new):
            out[i] = t
        return tuple(out), indices

    def setup_input_hook(self, args):
        def on_node(grad_fn):
            grad_fn.register_hook(self._input_hook)
        self.n_inputs = len(args)
        args, self.input_tensors_index = self._apply(args, on_node)
        return args

    def setup_output_hook(self, result):
        def on_node(grad_fn):     # (a hook after the node: the identity's grad_inputs are its grad_outputs)
            grad_fn.register_hook(self._output_hook)
        is_tuple = isinstance(result, tuple)
        outs = result if is_tuple else (result,)
        self.n_outputs = len(outs)
        outs, self.output_tensors_index = self._apply(outs, on_node)
        return outs if is_tuple else outs[0]

    def _output_hook(self, _, grad_output):
        self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
        for hook in self.user_pre_hooks:
            result = hook(self.module, self.grad_outputs)
            if result is not None:
                if len(result) != len(self.grad_outputs):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                       f"{len(result)}, but expected {len(self.grad_outputs)}")
                self.grad_outputs = tuple(result)
        local = self.grad_outputs
        if self.input_tensors_index is None:     # no input requires grad: the hooks run now
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                          "outputs since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module."
                          "register_full_backward_hook for more details.", stacklevel=5)
            grad_inputs = _pack_with_none([], [], self.n_inputs)
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_tensors_index)

    def _input_hook(self, grad_input, _):
        if self.grad_outputs is None:      # no gradient came out of the module's outputs
            return None
        res = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, but "
                                   f"expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)
