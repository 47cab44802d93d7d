"""nn.BatchNorm1d/2d/3d as modules: the inputs each takes (PyTorch's errors), the running statistics
(momentum, momentum=None's cumulative average, track_running_stats=False), affine=False, and
several steps of training then eval mode bit for bit against torch on 1 and 2 threads.  Their
reprs are golden (tests/golden/repr/norms.txt); F.batch_norm's own sums are
tests/nn/test_batch_norm_images.py's."""

import numpy as np
import pytest

import gradviz
from parity import same_threads
from gradviz import nn


@pytest.mark.parametrize("cls, ok, bad, message", [
    (nn.BatchNorm1d, [(4, 3), (4, 3, 5)], (4, 3, 2, 2), "expected 2D or 3D input (got 4D input)"),
    (nn.BatchNorm2d, [(4, 3, 2, 2)], (4, 3, 5), "expected 4D input (got 3D input)"),
    (nn.BatchNorm2d, [(4, 3, 2, 2)], (4, 3, 2, 2, 2), "expected 4D input (got 5D input)"),
    (nn.BatchNorm3d, [(2, 3, 2, 2, 2)], (4, 3, 2, 2), "expected 5D input (got 4D input)"),
])
def test_each_layer_takes_its_inputs_and_says_which(cls, ok, bad, message):
    bn = cls(3)
    for shape in ok:
        assert bn(gradviz.randn(*shape)).shape == shape
    with pytest.raises(ValueError) as e:
        bn(gradviz.randn(*bad))
    assert str(e.value) == message


def test_momentum_none_is_the_cumulative_average():
    """The k-th batch weighs 1/k: after three batches the running mean is their statistics' mean."""
    bn = nn.BatchNorm2d(2, momentum=None)
    xs = [gradviz.randn(4, 2, 3, 3) * (k + 1) + k for k in range(3)]
    for x in xs:
        bn(x)
    means = np.mean([x.numpy().mean(axis=(0, 2, 3)) for x in xs], axis=0)
    np.testing.assert_allclose(bn.running_mean.numpy(), means, rtol=1e-5)
    assert bn.num_batches_tracked.item() == 3


def test_without_running_stats_eval_uses_the_batch():
    bn = nn.BatchNorm2d(2, track_running_stats=False)
    assert bn.running_mean is None and bn.running_var is None and bn.num_batches_tracked is None
    assert list(bn.state_dict()) == ["weight", "bias"]
    x = gradviz.randn(3, 2, 2, 2)
    assert bn.eval()(x).tolist() == bn.train()(x).tolist()


def test_affine_false_has_no_parameters_and_eval_uses_running_stats():
    bn = nn.BatchNorm3d(2, affine=False)
    assert bn.weight is None and bn.bias is None and list(bn.parameters()) == []
    y = bn(gradviz.randn(2, 2, 2, 2, 2, requires_grad=True))
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    bn.eval()
    x = gradviz.ones(1, 2, 1, 1, 3)
    expected = (1 - bn.running_mean) / (bn.running_var + bn.eps).sqrt()
    np.testing.assert_allclose(bn(x).numpy()[0, :, 0, 0, 0], expected.numpy(), rtol=1e-6)


def _steps(lib, cls, x, g, **options):
    """Three training steps (inputs x, 2x, 3x), then one in eval mode: every output, gradient and
    running statistic, as numpy arrays."""
    bn = getattr(lib.nn, cls)(x.shape[1], **options)
    if bn.weight is not None:
        with lib.no_grad():
            bn.weight.copy_(lib.tensor(np.linspace(0.5, 1.5, x.shape[1]).astype(np.float32)))
            if bn.bias is not None:
                bn.bias.copy_(lib.tensor(np.linspace(-1, 1, x.shape[1]).astype(np.float32)))
    out = []
    for k in (1, 2, 3, None):
        if k is None:
            bn.eval()
        xt = lib.tensor(x * (k or 1), requires_grad=True)
        y = bn(xt)
        y.backward(lib.tensor(g))
        out += [y.detach().numpy(), xt.grad.numpy()]
        out += [t.detach().numpy() for t in (bn.weight.grad if bn.weight is not None else None, bn.running_mean,
                                             bn.running_var) if t is not None]
    return [np.array(a) for a in out], repr(bn)


@pytest.mark.torch
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("options", [{}, {"momentum": None}, {"affine": False}, {"track_running_stats": False},
                                     {"bias": False, "eps": 1e-3}])
@pytest.mark.parametrize("cls, shape", [("BatchNorm2d", (2, 3, 4, 5)), ("BatchNorm2d", (8, 4, 16, 16)),
                                        ("BatchNorm2d", (3, 2, 1, 7)), ("BatchNorm2d", (16, 8, 7, 7)),
                                        ("BatchNorm3d", (2, 3, 2, 3, 4)), ("BatchNorm3d", (2, 3, 1, 1, 9)),
                                        ("BatchNorm1d", (66, 33))])
def test_training_then_eval_is_bit_identical(cls, shape, options, threads):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(sum(shape) + threads)
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    with same_threads(torch, threads):
        want, want_repr = _steps(torch, cls, x, g, **options)
        got, got_repr = _steps(gradviz, cls, x, g, **options)
    assert got_repr == want_repr
    assert len(got) == len(want)
    for i, (a, e) in enumerate(zip(got, want)):
        assert a.dtype == e.dtype and np.array_equal(a.view(np.uint32), e.view(np.uint32)), i
