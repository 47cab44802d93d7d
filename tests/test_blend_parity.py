"""addcmul, addcdiv and lerp against PyTorch: values and gradients to the bit (float32 and float64,
broadcast, both of lerp's branches), node names, saved values, errors and version counters."""

import numpy as np
import pytest

import gradviz

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")
pytestmark = pytest.mark.torch

SHAPES = [((5,), (5,), (5,)), ((3, 1), (4,), (1, 4)), ((17,), (), (17,)), ((2, 37), (2, 37), (37,))]


def _both(arrays, requires_grad=True):
    return ([gradviz.tensor(a, requires_grad=requires_grad) for a in arrays],
            [torch.tensor(a, requires_grad=requires_grad) for a in arrays])


def _same(ours, theirs):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] and list(ours.shape) == list(theirs.shape)
    a, b = ours.detach().numpy(), theirs.detach().numpy()
    assert np.array_equal(a, b, equal_nan=True), (ours, theirs)
    assert np.array_equal(np.signbit(a) & ~np.isnan(a), np.signbit(b) & ~np.isnan(b)), (ours, theirs)   # -0 prints


def _check(call, arrays, seed):
    (ours, theirs) = _both(arrays)
    y, yt = call(gradviz, *ours), call(torch, *theirs)
    _same(y, yt)
    assert y.grad_fn.name() == yt.grad_fn.name()
    g = np.random.default_rng(seed).standard_normal(yt.shape).astype(arrays[0].dtype)
    y.backward(gradviz.tensor(g))
    yt.backward(torch.tensor(g))
    for t, tt in zip(ours, theirs):
        if tt.grad is None:      # (a bound not given is not used)
            assert t.grad is None
        else:
            _same(t.grad, tt.grad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", SHAPES)
def test_values_and_gradients_to_the_bit(dtype, shapes):
    rng = np.random.default_rng(len(shapes[0]) * 7 + (dtype == np.float32))
    for seed in range(3):
        a, b, c = (rng.standard_normal(s).astype(dtype) for s in shapes)
        c = np.where(np.abs(c) < 0.1, c + 1, c).astype(dtype)
        w = rng.uniform(-1, 2, shapes[2]).astype(dtype)
        for value in (1, 2, 0.3, -0.7):
            _check(lambda lib, x, y, z: lib.addcmul(x, y, z, value=value), [a, b, c], seed)
            _check(lambda lib, x, y, z: x.addcdiv(y, z, value=value), [a, b, c], seed)
        for weight in (0.3, 0.7, -0.2, 1.5):
            _check(lambda lib, x, y: lib.lerp(x, y, weight), [a, b], seed)
        _check(lambda lib, x, y, z: x.lerp(y, z), [a, b, w], seed)


def test_saved_values_and_default_value():
    for lib in (gradviz, torch):
        a, b, c = (lib.tensor([1.0, -2.0, 3.0], requires_grad=True) for _ in range(3))
        assert lib.addcmul(a, b, c).grad_fn._saved_value == 1
        node = lib.addcdiv(a, b, c, value=0.5).grad_fn
        assert node._saved_value == 0.5 and node._saved_tensor2.tolist() == [1.0, -2.0, 3.0]
        assert lib.lerp(a, b, 0.25).grad_fn._saved_weight == 0.25
        node = lib.lerp(a, b, c).grad_fn
        assert [n for n in ("_saved_self", "_saved_end", "_saved_weight") if getattr(node, n) is not None] == \
            ["_saved_self", "_saved_end", "_saved_weight"]


def test_integers_and_promotion():
    for dtypes in [("int64", "int64", "int64"), ("int64", "float32", "int64"), ("float32", "float64", "int64")]:
        arrays = [np.arange(1, 4).astype(d) for d in dtypes]
        ours, theirs = _both(arrays, requires_grad=False)
        _same(gradviz.addcmul(*ours, value=2), torch.addcmul(*theirs, value=2))
    ours, theirs = _both([np.arange(1, 4)] * 3, requires_grad=False)
    _same(gradviz.addcmul(*ours, value=2.5), torch.addcmul(*theirs, value=2.5))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- the type and the message are what is compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", [
    lambda lib: lib.addcmul(lib.ones(3), lib.ones(2), lib.ones(3)),
    lambda lib: lib.addcdiv(lib.ones(3, 1), lib.ones(3), lib.ones(2, 1, 4)),
    lambda lib: lib.addcdiv(lib.arange(3), lib.arange(3), lib.arange(3)),
    lambda lib: lib.lerp(lib.ones(3), lib.ones(3, dtype=lib.float64), 0.5),
    lambda lib: lib.lerp(lib.ones(3), lib.ones(3), lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.lerp(lib.arange(3), lib.arange(3), 0.5),
    lambda lib: lib.ones(3).addcmul_(lib.ones(2, 3), lib.ones(3)),
    lambda lib: lib.ones(3).lerp_(lib.ones(2, 3), 0.5),
    lambda lib: lib.ones(3, requires_grad=True).addcdiv_(lib.ones(3), lib.ones(3)),
    lambda lib: lib.ones(3, dtype=lib.int64).addcmul_(lib.ones(3), lib.ones(3)),
])
def test_errors_as_pytorch(case):
    assert _error(lambda: case(gradviz)) == _error(lambda: case(torch))


def test_in_place_twins_count_versions_and_record():
    for lib in (gradviz, torch):
        x = lib.zeros(3)
        for step in (lambda: x.addcmul_(lib.ones(3), lib.full((3,), 2.0), value=0.5),
                     lambda: x.addcdiv_(lib.ones(3), lib.full((3,), 4.0)),
                     lambda: x.lerp_(lib.full((3,), 2.0), 0.5)):
            before = x._version
            assert step() is x and x._version == before + 1
        assert x.tolist() == [1.625] * 3
        a = lib.ones(3, requires_grad=True)
        y = a * 1
        y.lerp_(lib.zeros(3), lib.full((3,), 0.25))
        assert y.grad_fn.name() == "LerpBackward1"
        y.sum().backward()
        assert a.grad.tolist() == [0.75] * 3


# --- clamp with tensor bounds ------------------------------------------------------------------

CLAMPS = {
    "both": lambda lib, x, lo, hi: lib.clamp(x, min=lo, max=hi),
    "min": lambda lib, x, lo, hi: x.clamp(min=lo),
    "max": lambda lib, x, lo, hi: lib.clamp(x, max=hi),
    "clamp_min": lambda lib, x, lo, hi: x.clamp_min(lo),
    "clamp_max": lambda lib, x, lo, hi: lib.clamp_max(x, hi),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("how", sorted(CLAMPS))
def test_clamp_with_tensor_bounds_as_pytorch(dtype, how):
    """Values, node, gradients to every input (min above max in places: max wins, and gets them),
    ties and nan included, broadcast bounds."""
    rng = np.random.default_rng(3)
    x = np.round(rng.standard_normal((4, 5)) * 2) / 2
    x[0, 0], x[1, :] = np.nan, -0.0   # -0 against 0 bounds: which one a tie keeps shows in the print
    lo, hi = np.round(rng.standard_normal(5) * 2) / 2, np.round(rng.standard_normal((4, 1)) * 2) / 2
    arrays = [a.astype(dtype) for a in (x, lo, hi)]
    _check(CLAMPS[how], arrays, 0)
    ours, theirs = _both(arrays)
    node, tnode = CLAMPS[how](gradviz, *ours).grad_fn, CLAMPS[how](torch, *theirs).grad_fn
    assert [f is None for f, _ in node.next_functions] == [f is None for f, _ in tnode.next_functions]
    for attr in ("_saved_min", "_saved_max", "_saved_self"):
        if hasattr(tnode, attr) and getattr(tnode, attr) is not None:
            assert np.array_equal(getattr(node, attr).detach().numpy(), getattr(tnode, attr).detach().numpy(),
                                  equal_nan=True)


def test_clamp_bounds_promote_and_write_in_place_as_pytorch():
    for lib in (gradviz, torch):
        assert str(lib.clamp(lib.arange(3), min=lib.tensor([0.5, 1, 1])).dtype).endswith("float32")
        assert str(lib.clamp(lib.ones(3), max=lib.tensor(0.5, dtype=lib.float64)).dtype).endswith("float32")
        x = lib.tensor([-1.0, 0.5, 3.0])
        before = x._version
        assert x.clamp_(min=lib.zeros(3), max=lib.ones(3)) is x and x._version == before + 1
        assert x.tolist() == [0.0, 0.5, 1.0]
        x.clamp_min_(lib.full((3,), 0.75))
        assert x.tolist() == [0.75, 0.75, 1.0]


@pytest.mark.parametrize("case", [
    lambda lib: lib.ones(3).clamp(min=lib.zeros(3), max=1.0),
    lambda lib: lib.ones(3).clamp(min=lib.zeros(2)),
    lambda lib: lib.arange(3).clamp_(min=lib.tensor([0.5, 1, 1])),
    lambda lib: lib.ones(3).clamp_(max=lib.ones(2, 3)),
    lambda lib: lib.ones(3, requires_grad=True).clamp_(min=lib.zeros(3)),
    lambda lib: lib.ones(3).clamp_max(lib.ones(4)),
])
def test_clamp_errors_as_pytorch(case):
    assert _error(lambda: case(gradviz)) == _error(lambda: case(torch))


def test_a_0d_weight_of_another_dtype_is_taken_in_the_input_dtype():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 9)).astype(np.float32)
    (x, y), (tx, ty) = _both([a, b])
    w, tw = gradviz.tensor(0.3, dtype=gradviz.float64, requires_grad=True), torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    out, tout = gradviz.lerp(x, y, w), torch.lerp(tx, ty, tw)
    _same(out, tout)
    assert out.grad_fn._saved_weight.dtype == gradviz.float64
    out.sum().backward()
    tout.sum().backward()
    _same(w.grad, tw.grad)
