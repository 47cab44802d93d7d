"""``torch.optim``: Optimizer and SGD, each step computed exactly as PyTorch computes it.

>>> import gradviz as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0]))
>>> opt = torch.optim.SGD([w], lr=0.1)
>>> (w * 3).sum().backward(); opt.step(); w
Parameter containing:
tensor([0.7000], requires_grad=True)
"""

import warnings
from collections import defaultdict

from .autograd import enable_grad, no_grad
from .nn.module import forget_grads
from .tensor import Tensor

__all__ = ["Optimizer", "SGD"]


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
        if not seen.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Forget the last gradients before the next backward: ``.grad`` becomes None (PyTorch 2's default)."""
        forget_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure=None):
        raise NotImplementedError

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

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


class SGD(Optimizer):
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

    def step(self, closure=None):
        """One update of every parameter that has a gradient (parameters without one are skipped)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                lr, momentum, wd = group["lr"], group["momentum"], group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    # PyTorch's own steps and order: each add with alpha is one fused multiply-add
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
                    p.add_(g, alpha=-lr)
        return loss
