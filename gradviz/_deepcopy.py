"""``copy.deepcopy`` of a tensor, as PyTorch copies one: only a leaf, as a new leaf.

>>> import copy, gradviz
>>> x = gradviz.ones(2, requires_grad=True)
>>> x.register_hook(lambda g: g * 0) and None
>>> y = copy.deepcopy(x)
>>> (y * 3).sum().backward(); y.grad, y.is_leaf          # the copy has no hooks
(tensor([3., 3.]), True)
>>> copy.deepcopy(x * 2)
Traceback (most recent call last):
RuntimeError: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001
"""

__all__ = ["deepcopy_leaf"]

NOT_A_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  "
    "If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, "
    "see https://github.com/pytorch/pytorch/pull/103001")


def deepcopy_leaf(t, memo):
    """``Tensor.__deepcopy__``: a new leaf with a copy of the numbers (in their layout), ``requires_grad``,
    a deep copy of ``.grad`` and of the attributes the user set; no hooks, no retained grad.  A result
    of an op (a view included) is refused in PyTorch's words: its graph cannot be copied."""
    if not t.is_leaf:
        raise RuntimeError(NOT_A_LEAF)
    if id(t) in memo:
        return memo[id(t)]
    new = t._wrap(t._data.copy(order="K"))
    if type(new) is not type(t):   # (a user's subclass of Tensor stays one)
        new.__class__ = type(t)
    new._requires_grad = t._requires_grad
    memo[id(t)] = new
    if t._grad is not None:
        new._grad = deepcopy_leaf(t._grad, memo)
    import copy      # (copy.deepcopy is what calls this, so it is loaded; not at import gradviz: issue 16)
    new.__dict__.update(copy.deepcopy(t.__dict__, memo))
    return new
