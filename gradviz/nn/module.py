"""Module: the base class of layers and models -- parameters found by attribute assignment, printed as PyTorch prints them."""

import warnings
from collections import OrderedDict

from .. import _dtype
from .._hooks import RemovableHandle
from ..autograd import no_grad
from ..tensor import Tensor
from ..utils.hooks import BackwardHook
from .parameter import Parameter

__all__ = ["Module", "forget_grads", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
           "register_module_backward_hook"]

# Hooks for every module (torch.nn.modules.module.register_module_forward_hook...)
_GLOBAL = {"forward_pre": OrderedDict(), "forward": OrderedDict(), "forward_with_kwargs": OrderedDict(),
           "backward": OrderedDict(), "backward_pre": OrderedDict()}
_GLOBAL_IS_FULL = [None]    # the global backward hooks are full ones (True) or old ones (False)


def _has_global_hooks():
    return bool(_GLOBAL["forward_pre"] or _GLOBAL["forward"] or _GLOBAL["backward"] or _GLOBAL["backward_pre"])


def _add_hook(hooks, hook, prepend, flags):
    """``hook`` into ``hooks`` (first with ``prepend``), its id into each dict of ``flags`` (pairs
    of a dict and a flag) whose flag is set."""
    handle = RemovableHandle(hooks, extra_dict=[extra for extra, _ in flags])
    hooks[handle.id] = hook
    for extra, flag in flags:
        if flag:
            extra[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_module_forward_pre_hook(hook):
    """``hook(module, args)`` before every module's forward."""
    return _add_hook(_GLOBAL["forward_pre"], hook, False, [])


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """``hook(module, args, output)`` after every module's forward."""
    return _add_hook(_GLOBAL["forward"], hook, False, [(_GLOBAL["forward_with_kwargs"], with_kwargs)])


def register_module_full_backward_pre_hook(hook):
    return _add_hook(_GLOBAL["backward_pre"], hook, False, [])


def register_module_full_backward_hook(hook):
    _global_kind(True)
    return _add_hook(_GLOBAL["backward"], hook, False, [])


def register_module_backward_hook(hook):
    """The old backward hook for every module (see :meth:`Module.register_backward_hook`)."""
    _global_kind(False)
    return _add_hook(_GLOBAL["backward"], hook, False, [])


def _global_kind(full):
    if _GLOBAL_IS_FULL[0] is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _GLOBAL_IS_FULL[0] = full


def _bound(hook, module):
    """``hook`` with the module as its first argument (PyTorch's _WrappedHook)."""
    def wrapped(*args):
        return hook(module, *args)
    return wrapped


def forget_grads(params, set_to_none=True):
    """What ``zero_grad()`` does, for a model and for an optimizer: each ``.grad`` becomes None
    (PyTorch 2's default), or is filled with zeros in place with ``set_to_none=False``."""
    for p in params:
        if p.grad is not None:
            if set_to_none:
                p.grad = None
            else:
                p.grad.requires_grad_(False)
                p.grad.zero_()


def _typename(obj):
    """``torch.typename``: 'torch.FloatTensor' for a tensor, the qualified class name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _addindent(text, spaces):
    """Indent every line but the first: how a child's repr nests inside its parent's."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


class _IncompatibleKeys(tuple):
    """What ``load_state_dict`` returns: the keys it missed and the keys it did not expect."""

    def __new__(cls, missing_keys, unexpected_keys):
        self = super().__new__(cls, (missing_keys, unexpected_keys))
        self.missing_keys, self.unexpected_keys = missing_keys, unexpected_keys
        return self

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"

    __str__ = __repr__


class Module:
    """A model or a layer: ``forward`` says what it computes, and every Parameter (or Module)
    assigned as an attribute in ``__init__`` is registered, so ``parameters()`` finds it.

    >>> import gradviz as torch
    >>> class Net(torch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = torch.nn.Parameter(torch.ones(2))
    ...     def forward(self, x):
    ...         return (self.w * x).sum()
    >>> Net()(torch.tensor([1., 2.]))
    tensor(3., grad_fn=<SumBackward0>)
    """

    __module__ = "gradviz.nn.modules.module"

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'" if kwargs else
                            f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        # object.__setattr__: our own __setattr__ looks these dictionaries up
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_backward_hooks",
                     "_backward_pre_hooks"):
            object.__setattr__(self, name, OrderedDict())
        object.__setattr__(self, "_is_full_backward_hook", None)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if not (d.get("_forward_pre_hooks") or d.get("_forward_hooks") or d.get("_backward_hooks")
                or d.get("_backward_pre_hooks") or _has_global_hooks()):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        """``module(x)`` with hooks, in PyTorch's order: forward pre-hooks (global ones first), the
        inputs set up for the full backward hooks, forward, forward hooks, the outputs set up."""
        for key, hook in (*_GLOBAL["forward_pre"].items(), *self._forward_pre_hooks.items()):
            if key in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        full, global_full = self._is_full_backward_hook is not False, _GLOBAL_IS_FULL[0] is not False
        backward_hooks = [*(_GLOBAL["backward"].values() if global_full else ()),
                          *(self._backward_hooks.values() if full else ())]
        legacy_hooks = [*(() if global_full else _GLOBAL["backward"].values()),
                        *(() if full else self._backward_hooks.values())]
        backward_pre_hooks = [*_GLOBAL["backward_pre"].values(), *self._backward_pre_hooks.values()]
        bw_hook = None
        if backward_hooks or backward_pre_hooks:
            bw_hook = BackwardHook(self, backward_hooks, backward_pre_hooks)
            args = bw_hook.setup_input_hook(args)
        result = self.forward(*args, **kwargs)
        for key, hook in (*_GLOBAL["forward"].items(), *self._forward_hooks.items()):
            with_kwargs = key in self._forward_hooks_with_kwargs or key in _GLOBAL["forward_with_kwargs"]
            out = hook(self, args, kwargs, result) if with_kwargs else hook(self, args, result)
            if out is not None:
                result = out
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(result)}", stacklevel=2)
            result = bw_hook.setup_output_hook(result)
        if legacy_hooks:
            self._hook_output_node(args, result, legacy_hooks)
        return result

    def _hook_output_node(self, args, result, hooks):
        """The old ``register_backward_hook``: each hook becomes a post-hook of the node that made
        the (first) output, called as ``hook(module, grad_input, grad_output)`` of that one node --
        which is all of the module only when its forward is one op; PyTorch warns otherwise."""
        var = result
        while not isinstance(var, Tensor):
            var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
        grad_fn = var.grad_fn
        if grad_fn is None:
            return
        for hook in hooks:
            grad_fn.register_hook(_bound(hook, self))
        self._warn_legacy_hook(args, result, grad_fn)

    def _warn_legacy_hook(self, inputs, result, grad_fn):
        """PyTorch's FutureWarnings for an old backward hook that will miss some gradients."""
        def warn(message):
            warnings.warn(message, FutureWarning, stacklevel=6)   # (the line that called the module)
        if not isinstance(result, Tensor):
            if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
                return warn("Using non-full backward hooks on a Module that does not return a single Tensor or a "
                            "tuple of Tensors is deprecated and will be removed in future versions. This hook will "
                            "be missing some of the grad_output. Please use register_full_backward_hook to get the "
                            "documented behavior.")
        else:
            result = (result,)
        if not isinstance(inputs, Tensor):
            if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
                return warn("Using non-full backward hooks on a Module that does not take as input a single Tensor "
                            "or a tuple of Tensors is deprecated and will be removed in future versions. This hook "
                            "will be missing some of the grad_input. Please use register_full_backward_hook to get "
                            "the documented behavior.")
        else:
            inputs = (inputs,)
        out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
        if not out_grad_fn or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
            warn("Using a non-full backward hook when outputs are nested in python data structure is deprecated "
                 "and will be removed in future versions. This hook will be missing some grad_output.")
        elif len(out_grad_fn) > 1:
            warn("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                 "deprecated and will be removed in future versions. This hook will be missing some grad_output. "
                 "Please use register_full_backward_hook to get the documented behavior.")
        elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {fn for fn, _ in grad_fn.next_functions}:
            warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated "
                 "and will be removed in future versions. This hook will be missing some grad_input. Please use "
                 "register_full_backward_hook to get the documented behavior.")

    # -- hooks -----------------------------------------------------------------------------------

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` before each forward; what it returns replaces the arguments."""
        return _add_hook(self._forward_pre_hooks, hook, prepend,
                         [(self._forward_pre_hooks_with_kwargs, with_kwargs)])

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output)`` after each forward; what it returns replaces the output."""
        return _add_hook(self._forward_hooks, hook, prepend, [(self._forward_hooks_with_kwargs, with_kwargs),
                                                              (self._forward_hooks_always_called, always_call)])

    def register_backward_hook(self, hook):
        """The old backward hook (deprecated in PyTorch for ``register_full_backward_hook``):
        ``hook(module, grad_input, grad_output)`` on the node that made the module's output, its
        grad_input being that node's (a Linear's: bias, input and weightᵀ gradients)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` when the gradients of the module's outputs are known."""
        return _add_hook(self._backward_pre_hooks, hook, prepend, [])

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` when the gradients of its inputs are computed;
        a tuple it returns replaces grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = True
        return _add_hook(self._backward_hooks, hook, prepend, [])

    # -- registration by attribute assignment ----------------------------------------------------

    def __setattr__(self, name, value):
        d = self.__dict__
        params, modules, buffers = d.get("_parameters"), d.get("_modules"), d.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name, keep=None):
        """Remove ``name`` from wherever it was registered but ``keep`` (replaced there, it keeps its place)."""
        for kind in ("__dict__", "_parameters", "_buffers", "_modules"):
            if kind != keep:
                getattr(self, kind).pop(name, None)

    def __getattr__(self, name):
        # only called when normal lookup fails: the registered things live in the dictionaries
        d = self.__dict__
        for kind in ("_parameters", "_buffers", "_modules"):
            if kind in d and name in d[kind]:
                return d[kind][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for kind in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(kind, ()):
                del self.__dict__[kind][name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor the module keeps (and saves in ``state_dict``) but does not train."""
        self._forget(name)
        self._buffers[name] = tensor

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    # -- walking the tree ------------------------------------------------------------------------

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """This module and every module below it, depth first, with dotted names ('' for itself)."""
        memo = set() if memo is None else memo
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named(self, kind, prefix, recurse, remove_duplicate):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, kind).items():
                if value is None or (remove_duplicate and value in seen):
                    continue
                seen.add(value)
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """``(name, parameter)`` pairs: this module's own first, then each child's, depth first."""
        return self._named("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """Every parameter to train (a generator, as in PyTorch: ``list(model.parameters())``)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def apply(self, fn):
        """Call ``fn`` on every child (recursively), then on this module; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes and gradients ---------------------------------------------------------------------

    def train(self, mode=True):
        """Training mode (the default); it only matters to layers like dropout and batch norm."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Forget the gradients of the last backward: ``.grad`` becomes None (PyTorch 2's default)."""
        forget_grads(self.parameters(), set_to_none)

    # -- moving and saving -----------------------------------------------------------------------

    def to(self, *args, **kwargs):
        """``model.to(device)`` is the model itself (CPU only); a floating dtype converts every parameter."""
        dtype = kwargs.get("dtype")
        for a in args:
            if isinstance(a, _dtype.dtype):
                dtype = a
        if dtype is not None:
            if not dtype.is_floating_point:
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got "
                                f"desired dtype={dtype}")
            for t in list(self.parameters()) + list(self.buffers()):
                if t.dtype.is_floating_point:
                    t.data = t.data.to(dtype)
        device = kwargs.get("device", next((a for a in args if not isinstance(a, _dtype.dtype)), None))
        if device is not None and str(device).split(":")[0] != "cpu":
            raise AssertionError("Torch not compiled with CUDA enabled")
        return self

    def cpu(self):
        return self

    def float(self):
        return self.to(_dtype.float32)

    def double(self):
        return self.to(_dtype.float64)

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Every parameter and buffer by dotted name, detached (``keep_vars=True`` keeps them)."""
        out = OrderedDict() if destination is None else destination
        for kind in ("_parameters", "_buffers"):
            for name, t in self._named(kind, prefix, True, True):
                out[name] = t if keep_vars else t.detach()
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy the values of ``state_dict`` into this module's parameters and buffers, as PyTorch
        does: each one whose shape matches is copied; missing and unexpected keys (with ``strict``)
        and shape mismatches are then reported together."""
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        with no_grad():
            for k, t in own.items():
                if k not in state_dict:
                    continue
                value = state_dict[k]
                if not isinstance(value, Tensor):
                    errors.append(f'While copying the parameter named "{k}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                elif value.shape != t.shape:
                    errors.append(f"size mismatch for {k}: copying a param with shape {value.shape!r} from "
                                  f"checkpoint, the shape in current model is {t.shape!r}.")
                else:
                    t.copy_(value)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    # -- printing --------------------------------------------------------------------------------

    def extra_repr(self):
        """What goes inside the parentheses, e.g. ``in_features=3, out_features=2, bias=True``."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        # PyTorch's layout: the extra repr, then one "(name): child" line per child, indented
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(module), 2) for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return self._get_name() + "(" + body + ")"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._modules) | set(self._buffers))
