"""``torch.optim.optimizer``: Optimizer, SGD, Adam, AdamW, RMSprop and Adagrad, each step computed exactly as PyTorch computes it.

PyTorch runs these on CPU one parameter at a time (its ``foreach`` kernels are for GPUs), with
in-place kernels (``lerp_``, ``addcmul_``...: the same kernels as ``Tensor.lerp_``, in ``gradviz.kernels``):
a fused multiply-add where PyTorch's compiled kernel has one, Python floats where it computes in
Python (the bias corrections), and the scalar rounded to the tensor's dtype where the kernel does so.

>>> import gradviz as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0]))
>>> opt = torch.optim.SGD([w], lr=0.1)
>>> (w * 3).sum().backward(); opt.step(); w
Parameter containing:
tensor([0.7000], requires_grad=True)
"""

import copy
import warnings
from collections import defaultdict

import numpy as np

from .. import kernels
from ..autograd import enable_grad, no_grad
from ..nn.module import forget_grads
from ..tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]


class _RequiredParameter:
    """The default of an option every parameter group must give."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


class Optimizer:
    """Holds the parameters to train, in groups with their options (``param_groups``), and
    per-parameter memory such as momentum (``state``); ``step()`` updates the parameters."""

    __module__ = "gradviz.optim.optimizer"

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or "
                            "dicts, but got " + _typename(params))
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the "
                            "ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        # model.named_parameters() gives (name, parameter) pairs: the names go under "param_names"
        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in param_group["params"]]
        if names:
            if len(names) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                raise ValueError("all optimizer param groups should be with/without names. cannot add param group "
                                 f"{'with' if 'param_names' in param_group else 'without'} names to the optimizer")
        if not seen.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Forget the last gradients before the next backward: ``.grad`` becomes None (PyTorch 2's default)."""
        forget_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure=None):
        raise NotImplementedError

    def _step(self, closure):
        """Run ``closure`` (with gradients on) for its loss, then update each parameter that has a
        gradient, under no_grad (``_update`` is each optimizer's own rule: Adam, RMSprop, Adagrad)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, group)
        return loss

    def state_dict(self):
        """The options and state, parameters named by their position (as PyTorch saves them)."""
        index, groups = {}, []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Take the options and state of ``state_dict`` (from :meth:`state_dict`, perhaps through
        ``torch.load``) for this optimizer's parameters, matched by position."""
        groups, saved_groups = self.param_groups, copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip((i for s in saved_groups for i in s["params"]), (p for g in groups for p in g["params"])))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = {key: _cast(param, value, key) for key, value in v.items()}
            else:
                state[k] = v
        for group, new_group in zip(groups, saved_groups):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
        self.state, self.param_groups = state, saved_groups

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _cast(param, value, key):
    """A loaded state value for ``param``: a tensor in the parameter's dtype (the step counter as it is)."""
    if isinstance(value, Tensor) and key != "step" and param.is_floating_point() and value.dtype != param.dtype:
        return value.to(param.dtype)
    if isinstance(value, dict):
        return {k: _cast(param, v, k) for k, v in value.items()}
    return value


class _ParameterWise(Optimizer):
    """An optimizer whose step updates each parameter on its own (``_update``), as PyTorch's
    single-tensor code paths do on CPU."""

    def step(self, closure=None):
        """One step for every parameter that has a gradient; returns the closure's loss, if given."""
        return self._step(closure)


class SGD(_ParameterWise):
    """Stochastic gradient descent: p ← p − lr·g, with optional weight decay and momentum.

    With momentum μ the step follows a running buffer b ← μ·b + (1 − dampening)·g
    (on the first step, b = g); ``nesterov=True`` steps along g + μ·b instead.
    """

    __module__ = "gradviz.optim.sgd"

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _update(self, p, group):
        # PyTorch's own steps and order: each add with alpha is one fused multiply-add
        lr, momentum, wd = group["lr"], group["momentum"], group["weight_decay"]
        g = p.grad if not group["maximize"] else -p.grad
        if wd != 0:
            g = g.add(p, alpha=wd)
        if momentum != 0:
            buf = self.state[p].get("momentum_buffer")
            if buf is None:
                buf = self.state[p]["momentum_buffer"] = g.detach().clone()
            else:
                buf.mul_(momentum).add_(g, alpha=1 - group["dampening"])
            g = g.add(buf, alpha=momentum) if group["nesterov"] else buf
        _add_(p, g, -lr)


def _add_(t, other, alpha):
    """``t.add_(other, alpha=alpha)`` under no_grad.  Where nothing but the arithmetic can happen
    (float32 or float64 alike, one shape, ``t`` contiguous and writable, no memory shared, a
    number for alpha), the kernel writes straight into ``t``'s storage (MKL's axpy, in place:
    no result to allocate and copy back); otherwise the tensor method, with its checks."""
    a, b = t._data, other._data
    if type(alpha) in (int, float) and a.dtype == b.dtype and a.dtype.char in "fd" and a.shape == b.shape \
            and a.flags.writeable and (a.flags.c_contiguous or a.flags.f_contiguous) and not np.may_share_memory(a, b):
        kernels.add(a, b, alpha, out=a)
        t._vbox[0] += 1
    else:
        t.add_(other, alpha=alpha)


# --- PyTorch's in-place CPU kernels, float by float ------------------------------------------------
# Each takes and returns numpy arrays; ``_write`` stores the result into a tensor as an in-place op
# does (same storage, version counter up). Scalars are rounded to the tensor's dtype first, as the
# kernels do (``value.to<scalar_t>()``).

def _write(t, array):
    t._data[...] = array
    t._vbox[0] += 1


def _step_counter():
    """``state["step"]``: a float32 scalar tensor, as PyTorch keeps it."""
    return Tensor._wrap(np.array(0.0, np.float32))


def _step_state(state):
    """The step counter: a float32 tensor in PyTorch's state, incremented in place."""
    step = state["step"]
    _write(step, step._data + 1)
    return float(step._data)


def _grad(p, maximize, weight_decay):
    """The gradient to step along: negated to maximize, plus wd·p (one fused multiply-add)."""
    g = p.grad._data
    g = -g if maximize else g
    if weight_decay != 0:
        g = kernels.fma(p._data, g.dtype.type(weight_decay), g, g.dtype)
    return g


def _zeros_like(p, value=0):
    return Tensor._wrap(np.full_like(p._data, value))


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    _check(lr, "learning rate")


def _check(value, what, low=0.0):
    if not low <= value:
        raise ValueError(f"Invalid {what}: {value}")


class Adam(_ParameterWise):
    """Adam: steps along a running mean of the gradients (m), scaled by the root of a running mean
    of their squares (v), both corrected for starting at zero:
    p ← p − lr · m̂ / (√v̂ + eps), m̂ = m / (1 − β₁ᵗ), v̂ = v / (1 − β₂ᵗ).

    >>> import gradviz as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    >>> opt = torch.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); w
    Parameter containing:
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    __module__ = "gradviz.optim.adam"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_lr(lr)
        _check(eps, "epsilon value")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        _check(weight_decay, "weight_decay value")
        if not (isinstance(betas[0], float) and isinstance(betas[1], float)):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _update(self, p, group):
        state = self.state[p]
        if not state:
            state["step"] = _step_counter()
            state["exp_avg"], state["exp_avg_sq"] = _zeros_like(p), _zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = _zeros_like(p)
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        step = _step_state(state)
        decoupled = group["decoupled_weight_decay"]
        if decoupled and wd != 0:                          # AdamW: p ← p·(1 − lr·wd) first
            _write(p, p._data * p._data.dtype.type(1 - lr * wd))
        g = _grad(p, group["maximize"], 0 if decoupled else wd)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        _write(m, kernels.lerp(m._data, g, 1 - beta1))
        _write(v, kernels.addcmul(v._data * v._data.dtype.type(beta2), g, g, 1 - beta2))
        bias_correction1 = 1 - beta1 ** step              # Python floats, as PyTorch computes them
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if group["amsgrad"]:
            vmax = state["max_exp_avg_sq"]
            _write(vmax, np.maximum(vmax._data, v._data))
            v = vmax
        dt = v._data.dtype.type
        denom = kernels.sqrt(v._data) / dt(bias_correction2_sqrt) + dt(eps)
        _write(p, kernels.addcdiv(p._data, m._data, denom, -step_size))


class AdamW(Adam):
    """Adam with decoupled weight decay: the parameters shrink by lr·weight_decay each step,
    apart from the gradient's running means (default weight_decay=0.01)."""

    __module__ = "gradviz.optim.adamw"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class RMSprop(_ParameterWise):
    """RMSprop: each parameter's step is its gradient divided by the root of a running mean of the
    gradient's squares, v ← α·v + (1 − α)·g², p ← p − lr · g / (√v + eps)
    (``centered=True`` subtracts the squared running mean of g from v; ``momentum`` as in SGD)."""

    __module__ = "gradviz.optim.rmsprop"

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        _check(eps, "epsilon value")
        _check(momentum, "momentum value")
        _check(weight_decay, "weight_decay value")
        _check(alpha, "alpha value")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, p, group):
        state = self.state[p]
        if not state:
            state["step"] = _step_counter()
            state["square_avg"] = _zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = _zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = _zeros_like(p)
        lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
        _step_state(state)
        g = _grad(p, group["maximize"], group["weight_decay"])
        sq = state["square_avg"]
        dt = sq._data.dtype.type
        _write(sq, kernels.addcmul(sq._data * dt(alpha), g, g, 1 - alpha))
        if group["centered"]:
            ga = state["grad_avg"]
            _write(ga, kernels.lerp(ga._data, g, 1 - alpha))
            avg = kernels.sqrt(kernels.addcmul(sq._data, ga._data, ga._data, -1))
        else:
            avg = kernels.sqrt(sq._data)
        avg = avg + dt(eps)
        if momentum > 0:
            buf = state["momentum_buffer"]
            _write(buf, kernels.addcdiv(buf._data * dt(momentum), g, avg, 1))
            _write(p, kernels.fma(buf._data, dt(-lr), p._data, p._data.dtype))
        else:
            _write(p, kernels.addcdiv(p._data, g, avg, -lr))


class Adagrad(_ParameterWise):
    """Adagrad: each parameter's step is its gradient divided by the root of the sum of all its
    squared gradients so far, s ← s + g², p ← p − lr · g / (√s + eps)."""

    __module__ = "gradviz.optim.adagrad"

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check(lr_decay, "lr_decay value")
        _check(weight_decay, "weight_decay value")
        _check(initial_accumulator_value, "initial_accumulator_value value")
        _check(eps, "epsilon value")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:     # Adagrad's state exists from the start
            for p in group["params"]:
                self.state[p]["step"] = _step_counter()
                self.state[p]["sum"] = _zeros_like(p, initial_accumulator_value)

    def _update(self, p, group):
        state = self.state[p]
        step = _step_state(state)
        g = _grad(p, group["maximize"], group["weight_decay"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        s = state["sum"]
        _write(s, kernels.addcmul(s._data, g, g, 1))
        std = kernels.sqrt(s._data) + s._data.dtype.type(group["eps"])
        _write(p, kernels.addcdiv(p._data, g, std, -clr))
