"""The dims (and indices, slice bounds) a node keeps, as ``grad_fn._saved_dim`` shows them.

PyTorch keeps a dim as the user wrote it, an int64 read through an unsigned getter: after
``x.softmax(-1)`` the node shows 18446744073709551615 (2**64 - 1), after ``x.softmax(1)`` it shows 1,
while the op itself (and its gradient) works along dim 1 either way.  gradviz's ops work with the
dim wrapped into range, which remembers how it was written (``gradviz._types.Wrapped``).

Every expression below is built in both libraries and every node of its graph compared: the
same ``_saved_*`` attributes of that kind, with the same reprs.  The golden cases at the end say a
few of them literally, so they run where torch is not installed.
"""

import numpy as np
import pytest

import gradviz

# (the same source in both libraries: ``torch`` is either one, x a 2x3 leaf that requires grad)
EXPRESSIONS = [
    # softmax and log_softmax, cumulative ops
    "x.softmax(-1)", "x.softmax(1)", "x.softmax(-2)", "x.log_softmax(-1)", "x.log_softmax(dim=0)",
    "torch.nn.functional.softmax(x, dim=-1)", "torch.nn.Softmax(dim=-1)(x)", "torch.nn.LogSoftmax(-1)(x)",
    "x.cumsum(-1)", "x.cumprod(-2)", "x.cumsum(1)", "x.sum().cumsum(-1)",
    # reductions over dims: one, a tuple, none, every one, and a 0-d input
    "x.sum(-1)", "x.sum(1)", "x.sum((-1, 0))", "x.sum(dim=-1, keepdim=True)", "x.sum([-2])", "x.sum(dim=None)",
    "x.sum(dim=())", "x.mean(-1)", "x.mean((-2, -1))", "x.mean(dim=None)", "x.sum().sum(-1)", "x.sum().mean(0)",
    "x.amax(-1)", "x.amin((-1, 0), keepdim=True)", "x.amax()", "x.amax(dim=None)", "x.sum().amax(-1)",
    "x.max(-1).values", "x.min(dim=-2, keepdim=True).values", "x.max(1)[0]", "x.median(-1).values",
    "x.median(0, keepdim=True).values", "x.prod(-1)", "x.prod(1, keepdim=True)", "x.sum().prod(-1)",
    "x.logsumexp(-1)", "x.logsumexp((0, -1))", "x.logsumexp(1, keepdim=True)",
    "x.norm(dim=-1)", "x.norm(dim=(-1, 0))", "x.norm()", "torch.linalg.vector_norm(x, 2, -1)",
    "torch.linalg.matrix_norm(x.unsqueeze(0), dim=(-2, -1))",
    "x.var(-1)", "x.var((-1,), keepdim=True)", "x.var()", "x.std(-1)", "x.std(dim=(0, -1))", "x.std()",
    "torch.nn.functional.cosine_similarity(x, x + 1, dim=-1)", "torch.nn.functional.normalize(x, dim=-1)",
    # views along dims
    "x.unsqueeze(-1)", "x.unsqueeze(-3)", "x.unsqueeze(2)", "x.clone().unsqueeze_(-1)",
    "x.transpose(-1, 0)", "x.transpose(0, -2)", "x.transpose(1, 0)", "x.swapaxes(-1, 0)", "x.mT", "x.T",
    "x.t()", "x.clone().t_()", "x.clone().transpose_(-1, 0)", "x.permute(-1, 0)", "x.permute(1, -2)",
    "x.movedim(-1, 0)", "x.matmul(x.mT)",
    "x.unsqueeze(0).squeeze(-3)", "x.unsqueeze(0).squeeze(0)", "x.squeeze(-1)", "x.squeeze(1)",
    "x.unsqueeze(0).squeeze((0, -1))", "x.unsqueeze(0).squeeze((-3,))", "x.squeeze((0,))", "x.unsqueeze(0).squeeze()",
    "x.unsqueeze(0).squeeze(())", "x.sum().squeeze(-1)", "x.clone().unsqueeze(0).squeeze_(-3)", "x[0] @ x.T",
    "x.clone().unsqueeze(0).unsqueeze(-1).squeeze_((0, -1))", "x.clone().unsqueeze(0).squeeze_(())",
    "x.flip(-1)", "x.flip((-1, 0))", "x.flip(0)", "x.fliplr()",
    # select, slices, gather and friends
    "x.select(-1, 1)", "x.select(-1, -1)", "x.select(0, -2)", "x[:, -1]", "x[-1]", "x[:, 1]", "x[1, -1]",
    "x[..., -1]", "x[None, -1]", "x.T[-1]",
    "x.narrow(-1, 0, 2)", "x.narrow(1, 1, 2)", "x.narrow(-1, -2, 2)", "x[:, 1:3]", "x[:, ::2]", "x[-1:]",
    "x[:, -2:]", "x[:, 5:]", "x[:, :-1]", "x[:, 1:-1:2]", "x[:, -100:]", "x[1:]", "x[:, 2:1]", "x[None, :, 1:]",
    "x.diff(dim=-1)",
    "x.gather(-1, torch.tensor([[0], [1]]))", "x.gather(1, torch.tensor([[0], [2]]))",
    "x.take_along_dim(torch.tensor([[0], [1]]), -1)", "x.log_softmax(-1).gather(-1, torch.tensor([[0], [1]]))",
    "x.index_select(-1, torch.tensor([0, 2]))", "x.index_select(0, torch.tensor([1]))",
    "x.sort(-1).values", "x.sort().values", "x.sort(0).values", "x.sum().sort().values",
    "x.topk(2, -1).values",
    # pieces and joins
    "x.unbind(-1)[0]", "torch.unbind(x, 1)[1]", "x.split(1, -1)[0]", "x.split([1, 2], -1)[1]", "x.chunk(3, -1)[0]",
    "x.split(2, -1)[1]", "x.split(5, 1)[0]", "x.chunk(2)[0]",
    "torch.cat([x, x], -1)", "torch.cat([x, x], 1)", "torch.cat([x, x], -2)",
    "torch.stack([x, x], -1)", "torch.stack([x, x], -3)",
    # an int64 parameter that is not a dim, shown the same way
    "torch.nn.functional.cross_entropy(x, torch.tensor([0, 1]))",
]


def _kept(name):
    """The saved attributes compared: dims, indices, slice bounds, split sizes, and the int64 ignore_index."""
    return "dim" in name or name in ("_saved_index", "_saved_start", "_saved_end", "_saved_step",
                                     "_saved_ignore_index", "_saved_split_size", "_saved_split_sizes")


def saved_dims(L, expression):
    """``[(node name, {attribute: repr}), ...]`` for every node of the graph ``expression`` makes."""
    x = L.ones(2, 3, requires_grad=True)
    root = eval(expression, {"torch": L, "x": x}).grad_fn
    nodes, todo, seen = [], [root], set()
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        nodes.append((type(fn).__name__, {n: repr(getattr(fn, n)) for n in dir(fn)
                                          if n.startswith("_saved_") and _kept(n)}))
        todo += [nxt for nxt, _ in fn.next_functions]
    return nodes


@pytest.mark.torch
@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_every_saved_dim_is_what_pytorch_shows(expression):
    torch = pytest.importorskip("torch")
    assert saved_dims(gradviz, expression) == saved_dims(torch, expression)


# --- without torch: what PyTorch 2.13 showed, written out ------------------------------------------

MINUS = {-1: 2 ** 64 - 1, -2: 2 ** 64 - 2, -3: 2 ** 64 - 3}

GOLDEN = [
    ("x.softmax(-1)", "_saved_dim", MINUS[-1]),
    ("x.softmax(1)", "_saved_dim", 1),
    ("x.log_softmax(-1)", "_saved_dim", 18446744073709551615),
    ("x.sum(-1)", "_saved_dim", (MINUS[-1],)),
    ("x.mean(-1)", "_saved_dim", (MINUS[-1],)),
    ("x.sum((-1, 0))", "_saved_dim", (MINUS[-1], 0)),
    ("x.sum(dim=None)", "_saved_dim", None),
    ("x.amax()", "_saved_dim", ()),
    ("x.cumsum(-1)", "_saved_dim", MINUS[-1]),
    ("x.unsqueeze(-1)", "_saved_dim", MINUS[-1]),
    ("x.unsqueeze(2)", "_saved_dim", 2),
    ("x.transpose(-1, 0)", "_saved_dim0", MINUS[-1]),
    ("x.transpose(-1, 0)", "_saved_dim1", 0),
    ("x.unsqueeze(0).squeeze(-3)", "_saved_dim", MINUS[-3]),
    ("x.squeeze(-1)", "_saved_dim", MINUS[-1]),
    ("x.unsqueeze(0).squeeze((0, -1))", "_saved_dim", (0, MINUS[-1])),
    ("torch.cat([x, x], -1)", "_saved_dim", MINUS[-1]),
    ("torch.stack([x, x], -3)", "_saved_dim", MINUS[-3]),
    ("x.select(-1, -1)", "_saved_index", MINUS[-1]),
    ("x[:, -1]", "_saved_dim", 1),
    ("x[:, -1]", "_saved_index", MINUS[-1]),
    ("x[:, -2:]", "_saved_start", MINUS[-2]),
    ("x[:, -2:]", "_saved_end", 2 ** 63 - 1),
    ("x.narrow(-1, -2, 2)", "_saved_start", 1),
    ("x.narrow(-1, -2, 2)", "_saved_dim", MINUS[-1]),
    ("x.logsumexp(-1)", "_saved_dim", (MINUS[-1],)),
    ("x.flip(-1)", "_saved_dims", (MINUS[-1],)),
    ("x.permute(-1, 0)", "_saved_dims", (MINUS[-1], 0)),
    ("x.var(-1)", "_saved_dim", (MINUS[-1],)),
    ("x.take_along_dim(torch.tensor([[0], [1]]), -1)", "_saved_dim", 1),     # PyTorch's gather gets it wrapped
    ("torch.nn.functional.cross_entropy(x, torch.tensor([0, 1]))", "_saved_ignore_index", 2 ** 64 - 100),
    ("x.split(5, -1)[0]", "_saved_split_size", 5),
    ("x.chunk(3, -1)[0]", "_saved_split_size", 1),
]


@pytest.mark.parametrize("expression, name, expected", GOLDEN)
def test_a_saved_dim_is_shown_as_pytorch_shows_it(expression, name, expected):
    x = gradviz.ones(2, 3, requires_grad=True)
    value = getattr(eval(expression, {"torch": gradviz, "x": x}).grad_fn, name)
    assert value == expected and type(value) is type(expected)
    assert all(type(v) is int for v in (value if isinstance(value, tuple) else ()))


def test_a_node_of_t_keeps_no_dims():
    """``x.t()``'s TBackward0 keeps nothing, in PyTorch as here (its dims are always 0 and 1)."""
    fn = gradviz.ones(2, 3, requires_grad=True).t().grad_fn
    assert not [n for n in dir(fn) if n.startswith("_saved_")]
    with pytest.raises(AttributeError, match="'TBackward0' object has no attribute '_saved_dim0'"):
        fn._saved_dim0


@pytest.mark.parametrize("expression, twin", [
    ("x.softmax(-1)", "x.softmax(1)"), ("x.sum((-1, 0))", "x.sum((1, 0))"), ("x.logsumexp(-2)", "x.logsumexp(0)"),
    ("x.unsqueeze(0).squeeze((0, -1))", "x.unsqueeze(0).squeeze((0, 2))"), ("x[:, -2:]", "x[:, 1:]"),
    ("x.select(-1, -1)", "x.select(1, 2)"), ("x.flip(-1)", "x.flip(1)"), ("x.transpose(-1, 0)", "x.transpose(1, 0)"),
    ("torch.cat([x, x * 2], -1)", "torch.cat([x, x * 2], 1)"), ("x.cumprod(-1)", "x.cumprod(1)"),
    ("x.amax(-2)", "x.amax(0)"), ("x.var(-1)", "x.var(1)"), ("x.unsqueeze(-1)", "x.unsqueeze(2)")])
def test_a_dim_written_negative_computes_what_its_positive_twin_computes(expression, twin):
    """The op and its gradient run along the dim wrapped into range: -1 and 1 of a 2x3 tensor agree."""
    results = []
    for source in (expression, twin):
        x = gradviz.tensor(np.arange(6.0).reshape(2, 3) / 5, requires_grad=True)
        y = eval(source, {"torch": gradviz, "x": x})
        (y * gradviz.arange(float(y.numel())).view(y.shape)).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_a_squeeze_of_one_dim_listed_twice_is_refused_in_pytorchs_words():
    x = gradviz.ones(1, 2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^dim 0 appears multiple times in the list of dims$"):
        x.squeeze((0, -3))
    with pytest.raises(RuntimeError, match="^dim 0 appears multiple times in the list of dims$"):
        x.clone().squeeze_((0, 0))


def test_squeeze_in_place_of_a_tuple_of_dims_squeezes_each():
    """``x.squeeze_((0, -1))``: both dims gone (SqueezeBackward5), the gradient back in x's shape."""
    x = gradviz.ones(1, 2, 3, 1, requires_grad=True)
    y = x.clone()
    y.squeeze_((0, -1))
    assert y.shape == (2, 3) and y.grad_fn.name() == "SqueezeBackward5" and y.grad_fn._saved_dim == (0, 2 ** 64 - 1)
    (y * gradviz.arange(6.0).view(2, 3)).sum().backward()
    assert x.grad.shape == (1, 2, 3, 1) and x.grad.view(-1).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


# --- the trace: a step read from PyTorch's graph has the dims a gradviz step has ---------------------

TRACED = ["x.softmax(-1)", "x.log_softmax(-2)", "x.sum(-1)", "x.sum(dim=None)", "x.mean((-1, 0), keepdim=True)",
          "x.amax()", "x.amin(-1, keepdim=True)", "x.max(-1).values", "x.sum().sum(-1)", "x.cumsum(-1)",
          "x.unsqueeze(-1)", "x.transpose(-1, 0)", "x.mT", "x.permute(-1, 0)", "x.squeeze(-1)",
          "x.select(-1, -1)", "x[:, -1]", "x[:, -2:]", "x[-1:]", "x.narrow(-1, 1, 2)", "x.flip(-1)",
          "x.gather(-1, torch.tensor([[0], [1]]))", "torch.cat([x, x * 2], -1)", "torch.stack([x, x * 2], -1)",
          "x.logsumexp(-1)", "x.norm(dim=-1)", "x.prod(-1, keepdim=True)", "x.sort(-1).values", "x.sort(0).values",
          "x.var(-1)", "x.std((0, -1), keepdim=True)", "x.var()", "x.std(correction=0)", "x.median(-1).values"]


def traced_dims(L, expression):
    """``[(step name, {param: (value, as written)}, output), ...]`` of the trace of ``expression``."""
    from gradviz._types import as_written
    from gradviz.trace import trace_of
    x = L.tensor(np.arange(6.0).reshape(2, 3) / 5 + 0.1, requires_grad=True)
    y = eval(expression, {"torch": L, "x": x})
    def shown(v):
        return (v.start, v.stop, as_written(v.start), as_written(v.stop)) if isinstance(v, slice) else (v, as_written(v))
    return [(s.name, {k: shown(v) for k, v in s.params.items() if k in ("dim", "d0", "d1", "dims", "index", "s")
                      and not isinstance(v, np.ndarray)},
             None if s.out.data is None else np.round(np.asarray(s.out.data, float), 6).tolist())
            for s in trace_of(y.sum(), names={"x": x}).steps]


@pytest.mark.torch
@pytest.mark.parametrize("expression", TRACED)
def test_a_step_read_from_pytorch_has_the_dims_of_gradviz_s(expression):
    """PyTorch's node keeps -1 as 2**64 - 1: the trace reads it back as gradviz's op keeps it (1 of 2,
    written -1), so the derivation, the captions and a replay see the same dim in both engines."""
    torch = pytest.importorskip("torch")
    assert traced_dims(torch, expression) == traced_dims(gradviz, expression)
