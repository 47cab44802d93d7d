"""Writing into views in place, as PyTorch records it: the base's CopySlices, views described
anew as AsStridedBackward0, the gradients through both, and PyTorch's refusals in its words.

Each case is a small program run in gradviz and in torch 2.13 (when installed): the same values,
grad_fn graphs (names and ``next_functions``), leaf gradients and error messages.
"""

import warnings

import numpy as np
import pytest

import gradviz
from gradviz import _strided

# the start of two programs below: a view made in no_grad()
NO_GRAD_VIEW = """
x = a * 1
with torch.no_grad():
    v = x[:2]
"""


# (name, program): the program sees ``torch`` (either library) and leaves a, b (requiring grad),
# and sets ``out`` (what backward starts from, summed) and optionally ``show`` (tensors compared).
CASES = {
    "view written, base read": """
x = a * 1
v = x[1:]
v.mul_(b[1:])
out = x""",
    "base written, old view read": """
x = a * 1
v = x[0]
x.mul_(2)
out = v * x""",
    "view of a view written": """
x = (a * 1).view(2, 2)
v = x[:, 1]
w = v[1:]
w.exp_()
show = [v, w]
out = x""",
    "two writes through views": """
x = a.view(2, 2) * 1
x[0].add_(b[:2])
x.t()[1].mul_(3)
show = [x.t()]
out = x""",
    "setitem of a slice": """
x = a * 1
x[1:3] = b[:2] * 2
out = x""",
    "setitem of a number": """
x = a.view(2, 2) * 1
x[:, 0] = 1.5
out = x""",
    "setitem broadcasts": """
x = a.view(2, 2) * 1
x[1] = b[:1].view(1, 1)
out = x""",
    "base without grad written through a view": """
z = torch.zeros(4)
v1, v2 = z[:2], z[1:]
v1.mul_(b[:2])
show = [v1, v2]
out = z + v2.sum()""",
    "a leaf written under no_grad, its view read": """
v = a[1:]
with torch.no_grad():
    a.mul_(2)
out = v""",
    "expanded view read after the base was written": """
x = a[:2] * 1
e = x.expand(3, 2)
x.add_(1)
out = e""",
    "in-place op saving its result": """
x = a.view(2, 2) * 1
x[0].sigmoid_()
out = x * 2""",
    "the written base then changed again": """
x = a * 1
x[1:].exp_()
x.mul_(3)
out = x""",
    "transposed base": """
x = a.view(2, 2).t() * 1
x[0].mul_(b[:2])
out = x""",
    "view of a leaf": """
a[0].mul_(2)
out = a""",
    # a view made in no_grad(), then the view or its base written
    "view made in no_grad": NO_GRAD_VIEW + "v.mul_(2)\nout = x",
    "base written after a no_grad view": NO_GRAD_VIEW + "x.mul_(2)\nout = v",
    "unbind's piece written": """
p = (a * 1).unbind()[0]
p.mul_(2)
out = p""",
    "a view of unbind's piece written": """
p = (a.view(2, 2) * 1).unbind()[1]
p[0].mul_(2)
out = p""",
    "unbind's piece read after its base was written": """
x = a * 1
p = x.unbind()[0]
x.mul_(2)
out = p""",
    "split's piece read after its base was written": """
x = a * 1
p = x.split(2)[1]
x.add_(2)
out = x + p.sum()""",
    "view made in inference mode": """
x = a * 1
with torch.inference_mode():
    v = x[:2]
v.mul_(b[:2])
out = x""",
    "exp_ of a view, the result needed twice": """
x = a * 1
v = x[::2]
v.exp_()
v.add_(1)
out = x""",
}


def run(torch, program):
    a = torch.tensor([0.5, -1.0, 2.0, 0.25], requires_grad=True)
    b = torch.tensor([1.5, 0.5, -2.0, 3.0], requires_grad=True)
    scope = {"torch": torch, "a": a, "b": b, "show": []}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(program, scope)   # noqa: S102 -- the fixed programs above
            out = scope["out"]
            seen = [(t.detach().numpy().copy(), graph(t.grad_fn)) for t in scope["show"] + [out]]
            out.sum().backward()
    except RuntimeError as e:    # (gradviz names its own tensor types: gradviz.FloatTensor)
        return ("error", str(e).replace("gradviz.", "torch."))
    return seen, [None if t.grad is None else t.grad.numpy().copy() for t in (a, b)]


def graph(fn, depth=0):
    """The graph below ``fn`` as nested (name, inputs) tuples."""
    if fn is None:
        return None
    return (fn.name(), tuple(graph(n, depth + 1) for n, _ in fn.next_functions))


def same(g, t):
    if isinstance(t, tuple) and t and t[0] == "error":
        return g == t
    (g_seen, g_grads), (t_seen, t_grads) = g, t
    if [s[1] for s in g_seen] != [s[1] for s in t_seen]:
        return False
    arrays = [s[0] for s in g_seen] + g_grads, [s[0] for s in t_seen] + t_grads
    return all((x is None) == (y is None) and (x is None or np.allclose(x, y, rtol=1e-6, atol=1e-7, equal_nan=True))
               for x, y in zip(*arrays))


@pytest.mark.torch
@pytest.mark.parametrize("name", list(CASES))
def test_as_torch(name):
    torch = pytest.importorskip("torch")
    want, got = run(torch, CASES[name]), run(gradviz, CASES[name])
    assert same(got, want), f"\ngradviz: {got}\ntorch:   {want}"


def test_a_write_through_a_view_becomes_the_bases_copy_slices():
    a = gradviz.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = a * 1
    v = x[1:]
    v.mul_(gradviz.tensor([10.0, 100.0]))
    assert x.grad_fn.name() == "torch::autograd::CopySlices"
    assert x.grad_fn.next_functions[0][0].name() == "MulBackward0"
    assert v.grad_fn.name() == "AsStridedBackward0" and v.grad_fn.next_functions[0][0] is x.grad_fn
    assert v.grad_fn._saved_size == (2,) and v.grad_fn._saved_stride == (1,) and v.grad_fn._saved_storage_offset == 1
    x.sum().backward()
    assert a.grad.tolist() == [1.0, 10.0, 100.0]


def test_view_index_follows_the_bases_layout():
    base = np.arange(6.0).reshape(2, 3).T        # a transposed base: column-major storage
    view = base[1]
    g = _strided.geometry(view, base)
    index = _strided.view_index(base.shape, g["size"], g["stride"], g["storage_offset"], g["geometry"])
    assert base.reshape(-1)[index].tolist() == view.tolist()


def test_as_strided_reads_the_storage():
    x = gradviz.arange(6.0, requires_grad=True)
    y = x.as_strided((2, 2), (1, 2), 1)
    assert y.tolist() == [[1.0, 3.0], [2.0, 4.0]] and y._base is x
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 0.0]


def test_printing_a_view_whose_grad_fn_cannot_be_read():
    a = gradviz.tensor([1.0, 2.0], requires_grad=True)
    x = a * 1
    piece = x.unbind()[0]
    x.mul_(2)
    assert repr(piece) == "tensor(2., grad_fn=<Invalid>)"     # as PyTorch prints it
    assert repr(x[1:]) == "tensor([4.], grad_fn=<SliceBackward0>)"
    v = x[1:]
    x.add_(1)
    assert repr(v) == "tensor([5.], grad_fn=<AsStridedBackward0>)"


def test_an_expanded_view_can_be_filled():
    """fill_ and zero_ write one value everywhere, so PyTorch lets them write an expanded tensor
    (fuzz seed 108049); copy_ and the arithmetic ones refuse."""
    a = gradviz.ones(1).expand(3)
    assert a.zero_().tolist() == [0.0, 0.0, 0.0]
    leaf = gradviz.ones(1, requires_grad=True)
    x = leaf * 1
    e = x.expand(3)
    e.fill_(2.0)
    assert x.tolist() == [2.0] and x.grad_fn.name() == "torch::autograd::CopySlices"
    (e * gradviz.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert leaf.grad.tolist() == [0.0]
    with pytest.raises(RuntimeError, match="^unsupported operation: more than one element"):
        gradviz.ones(1).expand(3).copy_(gradviz.ones(3))


def test_pointwise_results_keep_their_inputs_layout():
    """Issue 19: PyTorch's TensorIterator allocates a pointwise result in its input's layout, so
    ``x.T.sin().view(-1)`` fails as ``x.T.view(-1)`` does and ``reshape`` copies; gradviz's kernels
    write row-major arrays and the engine lays them out once for every op of those kinds."""
    x = gradviz.rand(3, 4, requires_grad=True)
    for name in ("exp", "log", "sin", "cos", "tan", "tanh", "sigmoid", "sqrt", "atan", "asin", "acos", "erf",
                 "log2", "log10", "neg", "abs", "clone"):
        y = getattr(x.T, name)()
        assert y.stride() == (1, 4) and not y.is_contiguous(), name
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            y.view(-1)
    y = x.mT.sigmoid().reshape(-1)
    assert y.grad_fn.name() == "UnsafeViewBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "CloneBackward0"
    assert x.T.contiguous().stride() == (3, 1) and x.T.clone(memory_format=gradviz.contiguous_format).is_contiguous()
    assert (2 ** x.T).stride() == (3, 1)                         # torch.pow(c, x) is allocated row-major
    assert x[:, ::2].T.exp().stride() == (1, 2)                  # not dense: dense in the input's order of dims
    assert (x.T + x.T.contiguous()).stride() == (1, 4)           # the first input that tells the dims apart
    assert x.T.flip(0).stride() == (1, 4)
