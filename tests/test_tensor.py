"""Tensor: construction (modern and legacy), dtypes and PyTorch's promotion rules, shapes, indexing,
and the random numbers PyTorch's generator gives."""

import warnings

import numpy as np
import pytest

import gradviz as torch
from gradviz import _cpu_generator


# --- construction -------------------------------------------------------------------------------

@pytest.mark.parametrize("expr, dtype", [
    ("torch.full((2, 3), 3)", "int64"),
    ("torch.full((2, 3), 3.)", "float32"),
    ("torch.full((2,), True)", "bool"),
    ("torch.tensor([1, 2])", "int64"),
    ("torch.tensor([1, 2.])", "float32"),
    ("torch.tensor([True, False])", "bool"),
    ("torch.tensor(np.array([1., 2.]))", "float64"),
    ("torch.tensor(np.array([1, 2], np.int32))", "int32"),
    ("torch.from_numpy(np.array([1., 2.]))", "float64"),
    ("torch.arange(3)", "int64"),
    ("torch.arange(3.)", "float32"),
    ("torch.arange(0, 1, 0.25)", "float32"),
    ("torch.ones(2)", "float32"),
    ("torch.zeros(2, dtype=torch.float64)", "float64"),
    ("torch.eye(2)", "float32"),
    ("torch.linspace(0, 1, 5)", "float32"),
    ("torch.randint(0, 5, (2,))", "int64"),
    ("torch.randperm(4)", "int64"),
    ("torch.Tensor(2, 3)", "float32"),
    ("torch.Tensor([1, 2])", "float32"),
    ("torch.FloatTensor([1, 2])", "float32"),
    ("torch.DoubleTensor([1, 2])", "float64"),
    ("torch.LongTensor([1, 2])", "int64"),
    ("torch.IntTensor([1, 2])", "int32"),
    ("torch.ones(2).long()", "int64"),
    ("torch.ones(2).double()", "float64"),
    ("torch.ones(2).to(torch.int32)", "int32"),
    ("torch.tensor([1, 2], dtype=torch.int16)", "int16"),
    ("torch.CharTensor([1, 2])", "int8"),
    ("torch.ShortTensor([1, 2])", "int16"),
    ("torch.tensor([1], dtype=torch.int8) + torch.tensor([1], dtype=torch.uint8)", "int16"),
])
def test_dtype_of_new_tensors(expr, dtype):
    assert eval(expr, {"torch": torch, "np": np}).dtype is getattr(torch, dtype)


def test_legacy_constructors():
    t = torch.Tensor(2, 3)
    assert t.shape == (2, 3) and t.dtype is torch.float32
    assert torch.Tensor().shape == (0,)
    assert torch.LongTensor(2).shape == (2,)
    assert repr(torch.FloatTensor([[0, 1], [1, 0]])) == "tensor([[0., 1.],\n        [1., 0.]])"
    assert repr(torch.LongTensor([1, 2])) == "tensor([1, 2])"
    assert repr(torch.IntTensor([1.7])) == "tensor([1], dtype=gradviz.int32)"
    assert isinstance(torch.ones(2), torch.FloatTensor) and not isinstance(torch.ones(2), torch.LongTensor)
    assert torch.ones(2).type() == "gradviz.FloatTensor"
    assert repr(torch.FloatTensor) == "<class 'gradviz.FloatTensor'>"


def test_tensor_copies_and_from_numpy_shares():
    a = np.array([1.0, 2.0])
    t, s = torch.tensor(a), torch.from_numpy(a)
    a[0] = 9
    assert t.tolist() == [1.0, 2.0] and s.tolist() == [9.0, 2.0]


def test_type_names_print_like_torch():
    assert repr(type(torch.ones(2))) == "<class 'gradviz.Tensor'>"
    assert repr(type(torch.ones(2).shape)) == "<class 'gradviz.Size'>"
    assert repr(torch.ones(2, 3).shape) == "gradviz.Size([2, 3])"
    assert repr(torch.float32) == "gradviz.float32"
    assert repr(torch.ones(1).device) == "device(type='cpu')" and str(torch.ones(1).device) == "cpu"
    assert not torch.cuda.is_available()


# --- promotion ----------------------------------------------------------------------------------

@pytest.mark.parametrize("expr, dtype", [
    ("torch.tensor([1, 2]) / torch.tensor([2, 2])", "float32"),   # int / int is true division
    ("torch.tensor([1, 2]) / 2", "float32"),
    ("torch.tensor([1, 2]) // 2", "int64"),
    ("torch.tensor([1, 2]) * 2.5", "float32"),
    ("torch.tensor([1, 2], dtype=torch.int32) + 1", "int32"),      # Python ints do not widen
    ("torch.tensor([1, 2], dtype=torch.int32) + torch.tensor(1)", "int32"),  # nor do 0-d tensors
    ("torch.tensor([1, 2], dtype=torch.int32) + torch.tensor([1])", "int64"),
    ("torch.tensor([1., 2.]) + torch.tensor(1., dtype=torch.float64)", "float32"),
    ("torch.tensor([1., 2.]) + torch.tensor([1.], dtype=torch.float64)", "float64"),
    ("torch.tensor([1, 2]) + torch.tensor(1.5, dtype=torch.float64)", "float64"),  # category wins
    ("torch.tensor([1, 2]) + torch.tensor([1., 2.])", "float32"),
    ("torch.tensor([True]) + True", "bool"),
    ("torch.tensor([True]) + 1", "int64"),
    ("torch.tensor([1], dtype=torch.uint8) + torch.tensor([1], dtype=torch.int32)", "int32"),
    ("torch.tensor([1.], dtype=torch.float16) + 1.5", "float16"),
    ("torch.tensor([1.], dtype=torch.float16) + torch.tensor(1.5)", "float16"),
    ("torch.tensor(1) + 1.5", "float32"),
    ("torch.tensor([1, 2]).sum()", "int64"),
    ("torch.tensor([True, False]).sum()", "int64"),
    ("torch.tensor([1, 2]).exp()", "float32"),
    ("torch.tensor([1, 2]) ** 2", "int64"),
    ("torch.tensor([1, 2]) ** 0.5", "float32"),
    ("2 ** torch.tensor([1, 2])", "int64"),
    ("2. ** torch.tensor([1, 2])", "float32"),
    ("torch.tensor([1., 2.]) > 1", "bool"),
])
def test_promotion(expr, dtype):
    assert eval(expr, {"torch": torch}).dtype is getattr(torch, dtype)


def test_in_place_cannot_narrow_the_type():
    x = torch.tensor([1, 2])
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        x.add_(1.5)


def test_mean_of_integers_is_an_error():
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype. Input dtype must be "
                                           "either a floating point or complex dtype. Got: Long"):
        torch.tensor([1, 2]).mean()


# --- shapes and indexing ------------------------------------------------------------------------

def test_shapes():
    x = torch.arange(24.).reshape(2, 3, 4)
    assert x.shape == (2, 3, 4) and x.size() == (2, 3, 4) and x.size(-1) == 4
    assert x.dim() == 3 and x.ndim == 3 and x.numel() == 24 and len(x) == 2
    assert x.view(-1, 4).shape == (6, 4) and x.flatten().shape == (24,)
    assert x.permute(2, 0, 1).shape == (4, 2, 3) and x.transpose(0, 2).shape == (4, 3, 2)
    assert x.unsqueeze(1).shape == (2, 1, 3, 4) and torch.ones(1, 2, 1).squeeze().shape == (2,)
    assert torch.ones(2, 3).expand(4, 2, 3).shape == (4, 2, 3)
    assert x[..., None].shape == (2, 3, 4, 1)
    with pytest.raises(RuntimeError, match=r"^shape '\[5\]' is invalid for input of size 24$"):
        x.view(5)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-3, 2\], "
                                         r"but got 3\)"):
        x.sum(3)
    with pytest.raises(IndexError, match="^index 5 is out of bounds for dimension 0 with size 2$"):
        x[5]
    with pytest.raises(RuntimeError, match="^The size of tensor a \\(3\\) must match the size of tensor b "
                                           "\\(4\\) at non-singleton dimension 1$"):
        torch.ones(2, 3) + torch.ones(4)
    with pytest.raises(RuntimeError, match=r"^mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)$"):
        torch.ones(2, 3) @ torch.ones(2, 3)
    for size, dim in (((3, 3), 1), ((-1, 3), 1), ((4, 2, 3), 2)):   # checked from the last dimension
        with pytest.raises(RuntimeError, match=rf"^The expanded size of the tensor \(3\) must match the existing "
                                               rf"size \(2\) at non-singleton dimension {dim}.  Target sizes: "
                                               rf"\[{', '.join(map(str, size))}\].  Tensor sizes: \[2, 2\]$"):
            torch.ones(2, 2).expand(*size)


def test_size_slices_and_sums_are_sizes():
    s = torch.Size([2, 3])
    assert repr(s[1:]) == "gradviz.Size([3])" and s[0] == 2
    assert repr(s + (4,)) == "gradviz.Size([2, 3, 4])" and repr((4,) + s) == "gradviz.Size([4, 2, 3])"
    assert repr(s * 2) == "gradviz.Size([2, 3, 2, 3])"
    assert repr(torch.ones(2, 3, 4).size()[::-1]) == "gradviz.Size([4, 3, 2])"
    with pytest.raises(TypeError, match=r"^can only concatenate tuple \(not list\) to gradviz.Size$"):
        s + [1]


def test_python_numbers_from_tensors():
    assert int(torch.tensor([2.7])) == 2 and float(torch.tensor(3)) == 3.0
    for convert in (int, float):
        with pytest.raises(ValueError, match="^only one element tensors can be converted to Python scalars$"):
            convert(torch.ones(2))


def test_indexing_values():
    x = torch.tensor([[1, 2, 3], [4, 5, 6]])
    assert x[0].tolist() == [1, 2, 3] and x[:, 1].tolist() == [2, 5] and x[1, -1].item() == 6
    assert x[x > 3].tolist() == [4, 5, 6] and x[[1, 0]].tolist() == [[4, 5, 6], [1, 2, 3]]
    assert x[:, ::2].tolist() == [[1, 3], [4, 6]]
    y = x.clone()
    y[0, 0] = 100
    assert x[0, 0].item() == 1 and y[0, 0].item() == 100


def test_views_share_storage_and_version():
    x = torch.zeros(2, 3)
    v = x.view(6)
    v[0] = 1
    assert x[0, 0].item() == 1 and x._version == v._version == 1
    assert v._base is x and x.t()._base is x


def test_max_min_with_dim_return_named_pairs():
    x = torch.tensor([[1., 5.], [3., 2.]])
    values, indices = x.max(dim=1)
    assert values.tolist() == [5.0, 3.0] and indices.tolist() == [1, 0]
    assert x.min(0).indices.tolist() == [0, 1]
    assert repr(x.max(0)) == ("gradviz.return_types.max(\nvalues=tensor([3., 5.]),\n"
                              "indices=tensor([1, 0]))")


def test_cat_stack_where_clamp():
    a, b = torch.ones(2), torch.zeros(3)
    assert torch.cat([a, b]).tolist() == [1, 1, 0, 0, 0]
    assert torch.stack([a, a], dim=1).shape == (2, 2)
    assert torch.where(torch.tensor([True, False]), 1., 0.).tolist() == [1.0, 0.0]
    assert torch.tensor([1., -2., 3.]).clamp(min=0).tolist() == [1.0, 0.0, 3.0]
    with pytest.raises(RuntimeError, match="^torch.clamp: At least one of 'min' or 'max' must not be None$"):
        torch.ones(2).clamp()


def test_std_and_var():
    x = torch.tensor([[1., 2., 4.], [3., 5., 9.]])
    assert x.var(0).tolist() == [2.0, 4.5, 12.5]
    assert x.std(unbiased=False).item() == pytest.approx(np.std(x.numpy()))
    assert x.std(1, keepdim=True).shape == (2, 1)


# --- random numbers -----------------------------------------------------------------------------

def test_manual_seed_gives_pytorchs_numbers():
    torch.manual_seed(0)
    assert torch.rand(3).tolist() == pytest.approx([0.49625658988952637, 0.7682217955589294,
                                                    0.08847743272781372], abs=0)
    torch.manual_seed(0)
    assert repr(torch.randn(3, requires_grad=True)) == "tensor([ 1.5410, -0.2934, -2.1788], requires_grad=True)"
    torch.manual_seed(0)
    assert torch.randint(0, 10, (5,)).tolist() == [4, 9, 3, 0, 3]
    torch.manual_seed(0)
    assert torch.randperm(5).tolist() == [4, 0, 1, 3, 2]


def test_generators_are_independent_and_restartable():
    g = torch.Generator().manual_seed(5)
    torch.manual_seed(5)
    a = torch.randn(20)
    assert torch.randn(20, generator=g).equal(a)
    state = torch.get_rng_state()
    b = torch.randn(7)
    torch.set_rng_state(state)
    assert torch.randn(7).equal(b)
    assert torch.initial_seed() == 5
    assert repr(torch.manual_seed(1)).startswith("<gradviz._C.Generator object at 0x")


def test_normal_in_blocks_of_16_redraws_the_tail():
    """PyTorch's randn(n >= 16) fills uniforms, Box-Muller in blocks of 16, then redraws the last 16."""
    torch.manual_seed(3)
    x = torch.randn(17)
    torch.manual_seed(3)
    y = torch.randn(16)
    assert not x[:16].equal(y)
    g = _cpu_generator.Mt19937().manual_seed(3)
    u = _cpu_generator._uniform01(17, np.float32, g)
    assert x[:1].tolist() == _cpu_generator._box_muller_16_avx2(u[:16].reshape(1, 16))[0, :1].tolist()


def test_uniform_and_normal_in_place():
    torch.manual_seed(0)
    w = torch.empty(3, 3).uniform_(-1, 1)
    assert w.min().item() >= -1 and w.max().item() < 1
    w.requires_grad_()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.normal_()
    with torch.no_grad():
        w.normal_(0, 0.01)
    assert w.abs().max().item() < 0.1
    with pytest.raises(NotImplementedError, match="\"check_uniform_bounds\" not implemented for 'Long'"):
        torch.rand(2, dtype=torch.int64)


def test_submodules_do_not_hide_functions():
    """Loading the drawing layer (which writes DOT text) and gradviz.gradcheck leave the functions in place."""
    import importlib
    import types
    importlib.import_module("gradviz.drawing.dot_text")
    importlib.import_module("gradviz.gradcheck")
    importlib.import_module("gradviz.drawing")
    assert torch.dot(torch.tensor([1., 2.]), torch.tensor([3., 4.])).item() == 11.0
    assert callable(torch.gradcheck) and not isinstance(torch.gradcheck, types.ModuleType)
    assert torch.gradcheck(lambda x: (x * x).sum(), (torch.ones(2, dtype=torch.float64, requires_grad=True),))
    assert type(torch) is types.ModuleType     # a plain module: no class swap guards the names


def test_views_follow_strides_as_in_pytorch():
    x = torch.ones(2, 3, requires_grad=True)
    names = lambda t: (t.grad_fn.name(), [f.name() for f, _ in t.grad_fn.next_functions if f is not None])
    assert names(x.t().reshape(-1)) == ("UnsafeViewBackward0", ["CloneBackward0"])   # not viewable
    assert names(x[:, 0].reshape(-1, 1)) == ("ReshapeAliasBackward0", ["SelectBackward0"])
    assert names(x[:, 0].view(-1, 1)) == ("ViewBackward0", ["SelectBackward0"])
    assert names(x.t().contiguous()) == ("CloneBackward0", ["TBackward0"])
    assert x.contiguous() is x and x.t().contiguous().is_contiguous()
    with pytest.raises(RuntimeError, match="^view size is not compatible with input tensor's size and stride"):
        x.t().view(-1)


def test_nan_and_inf_come_silently_as_in_pytorch():
    import warnings
    x = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as log:
        y = torch.log(x) + torch.sqrt(x) + x / 0 + torch.exp(x * 1000) + x ** -1
        y.sum().backward()
    assert [str(w.message) for w in log] == []
    assert str(torch.log(x).detach()) == "tensor([nan, -inf, 0.])"
    assert str(x.grad) == "tensor([nan, nan, inf])"
    with pytest.warns(RuntimeWarning):      # numpy code of the user's own still warns
        np.log(np.array(-1.0))


def test_a_diverging_training_run_warns_nothing():
    """lr too big: the numbers overflow to inf and nan, silently as in PyTorch (a fresh
    interpreter, as in a notebook: pytest's own warning filters do not hide anything here)."""
    import subprocess
    import sys
    code = """if True:
        import gradviz as torch
        X = torch.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]]); Y = torch.tensor([[0.], [1.], [1.], [0.]])
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=3.0)
        W = torch.randn(2, 2, requires_grad=True)
        for step in range(300):
            loss = torch.nn.MSELoss()(model(X), Y) + ((W * 1e10) @ W).sum()
            opt.zero_grad(); W.grad = None; loss.backward(); opt.step()
            with torch.no_grad():
                W -= 10 * W.grad
        print(loss)
    """
    out = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "tensor(nan, grad_fn=<AddBackward0>)", out.stderr
    assert "Warning" not in out.stderr, out.stderr


def test_zero_dim_tensors_have_a_dim_0_as_in_pytorch():
    """A 0-d tensor is one element along dim 0 (or -1): transposed, reduced or sorted it stays 0-d."""
    for f, node in [(lambda x: x.t(), "TBackward0"), (lambda x: x.transpose(0, -1), "TransposeBackward0"),
                    (lambda x: x.max(0).values, "MaxBackward0"), (lambda x: x.min(-1).values, "MinBackward0"),
                    (lambda x: x.sort(0).values, "SortBackward0"), (lambda x: x.softmax(0), "SoftmaxBackward0"),
                    (lambda x: x.logsumexp(0), "LogsumexpBackward0"), (lambda x: x.prod(0), "ProdBackward1"),
                    (lambda x: x.flip(0), "FlipBackward0"), (lambda x: x.amax(0), "AmaxBackward0"),
                    (lambda x: x.norm(dim=0), "LinalgVectorNormBackward0")]:
        x = torch.tensor(1.5, requires_grad=True)
        y = f(x)
        assert y.shape == () and y.grad_fn.name() == node
        y.backward()
        assert x.grad.shape == () and x.grad.item() in (1.0, 0.0)
    x = torch.tensor(1.5)
    assert x.max(0).indices.item() == 0 and x.sort(0).indices.shape == () and x.argmax(0).item() == 0
    with pytest.raises(IndexError, match=r"^select\(\) cannot be applied to a 0-dim tensor\.$"):
        x.select(0, 0)


def test_reductions_over_an_empty_dim_say_so_as_in_pytorch():
    for f, msg in [(lambda: torch.ones(0).min(0), "min(): Expected reduction dim 0 to have non-zero size."),
                   (lambda: torch.ones(2, 0).max(-1), "max(): Expected reduction dim 1 to have non-zero size."),
                   (lambda: torch.ones(0).argmax(0), "argmax(): Expected reduction dim 0 to have non-zero size."),
                   (lambda: torch.ones(0).median(0), "median(): Expected reduction dim 0 to have non-zero size."),
                   (lambda: torch.ones(2, 0).amin(-1), "amin(): Expected reduction dim -1 to have non-zero size.")]:
        with pytest.raises(IndexError) as e:
            f()
        assert str(e.value) == msg
    assert torch.ones(0).logsumexp(0).item() == float("-inf")


def test_where_that_does_not_broadcast_and_shapeless_reshapes_raise_pytorchs_errors():
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(2\) must match the size of tensor b \(3\) "
                                           r"at non-singleton dimension 0$"):
        torch.where(torch.ones(2) > 0, torch.ones(3), torch.ones(2))
    with pytest.raises(TypeError, match='^reshape\\(\\) missing 1 required positional arguments: "shape"$'):
        torch.ones(1).reshape()
    with pytest.raises(TypeError, match=r"^view\(\) received an invalid combination of arguments - got \(\)"):
        torch.ones(1).view()


def test_joining_transposed_tensors_gives_a_contiguous_result():
    x = torch.ones(2, 3)
    for y in (torch.stack([x.t(), x.t()]), torch.cat([x.t(), x.t()]), torch.cat([x.t(), x.t()], 1)):
        assert y.is_contiguous() and y.view(-1).shape == (12,)


def test_batched_matmul_records_pytorchs_graph():
    """Folded into one mm (or mv) where PyTorch folds, else both sides expanded into one bmm."""
    def tree(fn):
        return [fn.name(), [tree(f) for f, _ in fn.next_functions if f is not None]]
    acc = ["torch::autograd::AccumulateGrad", []]
    a, b = torch.ones(2, 2, 3, requires_grad=True), torch.ones(2, 3, 4, requires_grad=True)
    view_of_expand = ["ViewBackward0", [["ExpandBackward0", [acc]]]]
    assert tree((a @ b).grad_fn) == ["UnsafeViewBackward0", [["BmmBackward0", [view_of_expand, view_of_expand]]]]
    a4 = torch.ones(2, 2, 2, 3, requires_grad=True)
    assert tree((a4 @ b).grad_fn)[1][0][1][1] == ["UnsafeViewBackward0", [["CloneBackward0", [["ExpandBackward0", [acc]]]]]]
    a1 = torch.ones(1, 2, 3, requires_grad=True)      # a batch of one that requires grad is squeezed and folded
    y = a1 @ b
    assert y.grad_fn.name() == "CloneBackward0" and y.shape == (2, 2, 4)
    y.sum().backward()
    assert a1.grad.tolist() == [[[8.0] * 3] * 2]
    v = torch.tensor([1., 2.], requires_grad=True)    # 1-D @ 3-D: the gradient of each batch, summed once
    m = torch.stack([torch.eye(2), 2 * torch.eye(2)]).requires_grad_()
    (v @ m).sum().backward()
    assert v.grad.tolist() == [3.0, 3.0] and m.grad.tolist() == [[[1., 1.], [2., 2.]]] * 2


def test_what_the_fuzzer_found():
    """Each a difference tests/test_fuzz_torch.py found against torch 2.13, now agreeing."""
    x = torch.tensor([float("nan"), -0.0, 2.0])
    assert x.sign().tolist() == [0.0, 0.0, 1.0]                            # sign(nan) is 0
    assert str(torch.tensor([-0.0, 1.0]).cumsum(0)) == "tensor([0., 1.])"  # sums from +0
    with pytest.raises(RuntimeError, match="^unsupported operation: more than one element of the written-to"):
        torch.ones(2, 1).expand(2, 3).exp_()
    a = torch.tensor([float("nan"), 1.0], requires_grad=True)
    b = torch.tensor([0.0, 2.0], requires_grad=True)
    torch.maximum(a, b).sum().backward()                                   # beside a nan both keep the gradient
    assert a.grad.tolist() == [1.0, 0.0] and b.grad.tolist() == [1.0, 1.0]
    w = torch.ones(2, 2, requires_grad=True)
    assert (w.t() * 1).log_softmax(0).is_contiguous()
    assert (w @ torch.ones(1, 2, 2)).grad_fn.name() == "CloneBackward0"    # mm's result is row-major
    z = torch.ones(2, 0, requires_grad=True)
    assert z[:, 1:].grad_fn.name() == "SliceBackward0" and z[:, 0:].grad_fn.name() == "AliasBackward0"
    assert torch.ones(0).softmax(0).shape == (0,)
    y = w * 1
    assert y.zero_().grad_fn.name() == "ZeroBackward0"
    assert (w * 1).fill_(2.0).grad_fn.name() == "FillBackward2"
    y = w * 1
    y[...] = 1.5
    assert y.grad_fn.name() == "FillBackward3"
    y.copy_(torch.ones(2))
    assert y.grad_fn.name() == "torch::autograd::CopyBackwards"


def test_more_that_the_fuzzer_found():
    x = torch.tensor([0.0, 2.0], requires_grad=True)
    e = torch.tensor([0.0, 1.0], requires_grad=True)
    (x ** e).sum().backward()                   # 0 ** 0: no nan from 0 · log 0 nor 0 · 0^-1, as PyTorch masks them
    assert x.grad.tolist() == [0.0, 1.0] and e.grad.tolist()[0] == 0.0
    y = torch.tensor([-1.0, 2.0], requires_grad=True)
    y.relu().log2().sum().backward()             # relu's gradient is a choice, not a product (inf · 0 is nan)
    assert y.grad.tolist()[0] == 0.0
    m = torch.tensor([[1.0, float("nan"), 0.0], [3.0, 1.0, 2.0]])
    r = m.median(1)
    assert str(r.values) == "tensor([nan, 2.])" and r.indices.tolist() == [1, 2]
    assert str(m.median()) == "tensor(nan)"
    p = torch.tensor([2.0, 3.0], requires_grad=True)
    q = p.prod(0)
    q.relu_()                                   # prod saves its result, as PyTorch: writing it in place is caught
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        q.backward()


def test_extremes_and_products_beside_nan_as_pytorch():
    x = torch.tensor([float("nan"), 1.0, 2.0], requires_grad=True)
    x.min().backward()                           # the nan is the minimum: only it gets the gradient
    assert x.grad.tolist()[1:] == [0.0, 0.0]
    y = torch.tensor([2.0, float("inf")], requires_grad=True)
    y.prod().backward()                          # g · Π / x_i, as PyTorch: inf / inf is nan
    assert str(y.grad) == "tensor([inf, nan])"


def test_writes_and_views_the_fuzzer_checked():
    x = torch.tensor([1.0, 2.0])
    v = x[0]                                     # a 0-d view, not a copy: writing into x shows in it
    x.mul_(3)
    assert v.item() == 3.0
    p = torch.ones(2, 2)
    pieces = p.unbind(0)
    p.add_(1)
    assert pieces[1].tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match=r"^start \(0\) \+ length \(1\) exceeds dimension size \(0\)\.$"):
        torch.ones(0).narrow(0, 0, 1)
    y = torch.ones(1, 1)
    with pytest.raises(RuntimeError, match="^unsupported operation: some elements of the input tensor and the "
                                           "written-to tensor refer to a single memory location"):
        y.sub_(y.reshape(1))
    assert y.add_(y).tolist() == [[2.0]]         # the very same tensor is fine


def test_nans_and_overlaps_the_fuzzer_found():
    """Fuzz seeds 4757 (amin of a nan gradient), 1598 (abs of nan), 9082 and 9708 (overlaps)."""
    x = torch.tensor([[1.0, 3.0, 2.0]], requires_grad=True)
    x.amin(-1).backward(torch.tensor([float("nan")]))   # (g / ties) · mask, as PyTorch: nan · 0 is nan
    assert str(x.grad) == "tensor([[nan, nan, nan]])"
    y = torch.tensor([float("nan"), 1.0], requires_grad=True)
    y.amax(0).backward()                         # a nan maximum equals no element: 1 / 0 · 0
    assert str(y.grad) == "tensor([nan, nan])"
    z = torch.tensor([-0.5], requires_grad=True)
    z.log2().abs().sum().backward()              # abs's gradient is g · sgn(x), and sgn(nan) is 0
    assert str(z.grad) == "tensor([-0.])"
    w = torch.ones(3, 3)
    with pytest.raises(RuntimeError, match="^unsupported operation: some elements of the input tensor and the "
                                           "written-to tensor refer to a single memory location"):
        w.mul_(w.transpose(0, 1))                # dense in another order: the same bytes, other strides
    e = torch.ones(2, 0)
    assert e.tanh_().shape == (2, 0)             # nothing to write: no overlap to refuse


def test_more_nans_and_saves_the_fuzzer_found():
    """Fuzz seeds 106588, 105145, 107036, 108585, 101705 and 103748 (from 100,000 on)."""
    x = torch.tensor([float("nan"), -1.0, 2.0], requires_grad=True)
    x.relu().sum().backward()                    # threshold_backward: 0 where y <= 0, so a nan passes g on
    assert str(x.grad) == "tensor([1., 0., 1.])"
    v = torch.tensor([0.5, 0.5], requires_grad=True)
    v.std().backward(torch.tensor(float("nan")))  # 0 where σ = 0, whatever arrives
    assert v.grad.tolist() == [0.0, 0.0]
    e = torch.tensor([1.0, 0.0, -1.0], requires_grad=True)
    (0 ** e).backward(torch.ones(3))             # 0 where the base is 0 and x >= 0
    assert str(e.grad) == "tensor([0., 0., -inf])"
    p = 2 ** e
    with torch.no_grad():
        e.clamp_(0, 1)                           # c ** x keeps x: the write is caught
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        p.sum().backward()
    m = torch.ones(2, requires_grad=True) @ torch.ones(2, 3)
    assert m._base is None                       # vector @ matrix ends in squeeze_: no view
    a = torch.ones(1, requires_grad=True)
    with torch.no_grad():
        n = a.view(1)                            # requires grad through its base, but has no edge
    b = torch.ones(1)
    q = b / n
    b.sub_(q)                                    # so q's node kept nothing of b: no version error
    (a / b).sum().backward()
    with pytest.raises(RuntimeError, match=r"^amin\(\): Expected reduction dim to be specified for input.numel\(\)"):
        torch.ones(0).amin()
    assert [p.shape for p in torch.ones(0).split(1)] == [(0,)]   # an empty dim splits into one empty piece
    assert torch.tensor(0.5).pow(torch.ones(0)).shape == (0,)   # a 0-d base to an empty exponent (seed 108112)


def test_max_along_a_dim_keeps_its_indices_not_its_input():
    """PyTorch's MaxBackward0 (and Min, Median) keep the indices: writing into the input after is
    fine (fuzz seed 109325)."""
    x = torch.tensor([1.0, 3.0, 2.0], requires_grad=True)
    y = x * 1
    for values in (y.max(0).values, y.min(0).values, y.median(0).values):
        values.backward(retain_graph=True)
    y.exp_()
    z = torch.tensor([[1.0, 5.0], [4.0, 2.0]], requires_grad=True)
    w = z * 1
    m = w.max(1, keepdim=True)
    w.mul_(2)
    m.values.sum().backward()
    assert z.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]] and m.indices.tolist() == [[1], [0]]
    big = torch.tensor([1.418151329792e12] * 16)
    assert (2 ** big).tolist() == [float("inf")] * 16          # SLEEF's overflow test (seed 106915)


def test_results_kept_and_zero_d_products_the_fuzzer_found():
    """Fuzz seeds 204763 and 209767 (from 200,000 on)."""
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    y = x ** torch.tensor([2.0, 0.5])              # PyTorch keeps a ** b's result whenever it records it,
    y.tanh_()                                      # even when only the exponent's rule would read it
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    for reduce in (lambda t: t.prod(), lambda t: t.prod(0), lambda t: t.prod(0, keepdim=True)):
        z = torch.tensor(float("nan"), requires_grad=True)
        reduce(z).backward()                       # prod_backward passes a 0-d input's gradient through
        assert z.grad.item() == 1.0


def test_out_resize_warning_points_at_the_callers_line():
    """``gradviz.exp(x, out=t)`` with ``t`` of another shape warns, as PyTorch does, from the line
    that called it (not from gradviz's own wrappers), for a method's function and a written-out one."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.exp(torch.ones(2), out=torch.zeros(3))
        torch.matmul(torch.ones(2, 2), torch.ones(2), out=torch.zeros(3))
    assert [(w.filename, "was resized" in str(w.message)) for w in caught] == [(__file__, True)] * 2
