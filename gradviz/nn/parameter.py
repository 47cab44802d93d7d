"""Parameter: a tensor that a Module registers as something to train."""

from .._creation import _filled
from .._operands import _finish
from ..tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf tensor that requires grad by default and that a Module, holding it as an
    attribute, lists in ``parameters()``.  It shares storage with the tensor it wraps.

    >>> import gradviz as torch
    >>> torch.nn.Parameter(torch.ones(2))
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    """

    __module__ = "gradviz.nn.parameter"   # type(p) prints <class 'torch.nn.parameter.Parameter'>
    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _filled((0,), 0.0, None, False)
        t = data.detach()    # same storage and version counter, no history
        t.__class__ = cls
        t.__dict__.pop("_cut", None)   # not a cut in the graph: a new leaf to train
        return _finish(t, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    # PyTorch formats only a plain Tensor as its number: f"{p}" shows the repr above
    __format__ = object.__format__

    def __deepcopy__(self, memo):
        """A new Parameter with a copy of the numbers and ``requires_grad`` (no ``.grad``, as in PyTorch)."""
        if id(self) not in memo:
            memo[id(self)] = Parameter(self.detach().clone(), self.requires_grad)
        return memo[id(self)]

    def __reduce_ex__(self, proto):   # pickling keeps Parameters Parameters
        return (Parameter, (self.detach().clone(), self.requires_grad))

