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
    assert np.array_equal(ours.detach().numpy(), theirs.detach().numpy()), (ours, theirs)


def _check(call, arrays, seed):
    (ours, theirs) = _both(arrays)
    y, yt = call(gradviz, *ours), call(torch, *theirs)
    _same(y, yt)
    assert y.grad_fn.name() == yt.grad_fn.name()
    g = np.random.default_rng(seed).standard_normal(yt.shape).astype(arrays[0].dtype)
    y.backward(gradviz.tensor(g))
    yt.backward(torch.tensor(g))
    for t, tt in zip(ours, theirs):
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
