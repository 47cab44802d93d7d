"""The op table, entry by entry: forward against a numpy reference, every vjp against finite differences.

The tests are generated from :data:`gradviz.ops.OPS`, so a new primitive is tested as soon as it
is declared (and fails loudly here until tests/strategies.py knows what inputs it takes).
"""

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradviz
from gradviz import autograd
from gradviz._broadcast import unbroadcast
from gradviz.autograd.multi_output import apply_outputs
from gradviz.gradcheck import numerical_grad
from gradviz.ops import OPS
from gradviz.tensor import Tensor, apply

from strategies import SETTINGS, op_case

KEYS = sorted(OPS)


def _vec(f):
    """An elementwise reference built from Python's math module, one element at a time."""
    return lambda a: np.vectorize(f, otypes=[np.float64])(a)


def _pieces_flat(a, dim, sizes):
    """split's outputs, each flattened, one after another (np.take of the indices of each piece)."""
    starts = [sum(sizes[:k]) for k in range(len(sizes))]
    return np.concatenate([np.take(a, list(range(b, b + k)), axis=dim).ravel() for b, k in zip(starts, sizes)]
                          or [np.zeros(0)])


def _vec2(f):
    return lambda a, b: np.vectorize(f, otypes=[np.float64])(a, b)


def _extreme_along(a, dim, keepdim, pick):
    out = np.apply_along_axis(lambda v: pick(v.tolist()), dim, a)
    return np.expand_dims(out, dim) if keepdim else out


def _var(a, dim, correction, keepdim):
    n = a.size if dim is None else math.prod(a.shape[d] for d in dim)
    mean = a.sum(axis=dim, keepdims=True) / n
    return ((a - mean) ** 2).sum(axis=dim, keepdims=keepdim) / (n - correction)


def _reduced(loss, reduction):
    total = math.fsum(np.ravel(loss).tolist())
    return loss if reduction == "none" else total / np.size(loss) if reduction == "mean" else total


def _bn(x, w, b, running_mean, running_var, training, eps):
    """(x − mean) / √(var + eps) · w + b per channel (axis 1), one channel at a time."""
    out = np.empty_like(x)
    for c in range(x.shape[1]):
        v = x[:, c]
        mean = math.fsum(v.ravel().tolist()) / v.size if training else running_mean[c]
        var = math.fsum(((v - mean) ** 2).ravel().tolist()) / v.size if training else running_var[c]
        out[:, c] = (v - mean) / math.sqrt(var + eps) * w[c] + b[c]
    return out


def _ln(x, w, b, normalized_shape, eps, has_weight, has_bias):
    """(x − mean) / √(var + eps) · w + b over each row of the last dimensions, one row at a time."""
    n = math.prod(normalized_shape)
    rows = x.reshape(-1, n)
    out = np.empty_like(rows)
    for i, v in enumerate(rows):
        mean = math.fsum(v.tolist()) / n
        var = math.fsum(((v - mean) ** 2).tolist()) / n
        out[i] = (v - mean) / math.sqrt(var + eps) * (w.ravel() if has_weight else 1) + (b.ravel() if has_bias else 0)
    return out.reshape(x.shape)


def _nll(a, target, weight, reduction, ignore_index):
    """−Σ w·x[b, t_b] / Σ w, one row at a time."""
    rows, t = (a[None], [int(target)]) if a.ndim == 1 else (a, np.asarray(target).tolist())
    kept = [(b, c) for b, c in enumerate(t) if c != ignore_index]
    w = [1.0 if weight is None else float(weight[c]) for _, c in kept]
    terms = [-float(rows[b, c]) * wi for (b, c), wi in zip(kept, w)]
    if reduction == "none" and a.ndim == 2:
        out = np.zeros(len(t))
        for (b, _), term in zip(kept, terms):
            out[b] = term
        return out
    return math.fsum(terms) / math.fsum(w) if reduction == "mean" else math.fsum(terms)


def _nll_grad(g, shape, target, weight=None, reduction="mean", ignore_index=-100):
    """∂ nll_loss / ∂ scores applied to g, one row at a time."""
    rows = np.zeros((1, shape[0]) if len(shape) == 1 else shape)
    t = [int(target)] if len(shape) == 1 else np.asarray(target).tolist()
    w = [1.0 if weight is None else float(weight[c]) for c in t]
    total = math.fsum(wi for wi, c in zip(w, t) if c != ignore_index)
    gs = np.reshape(g, -1) if reduction == "none" and len(shape) != 1 else [float(np.reshape(g, -1)[0])] * len(t)
    for b, (c, wi, gb) in enumerate(zip(t, w, gs)):
        if c != ignore_index:
            rows[b, c] = -wi * gb / (total if reduction == "mean" else 1)
    return rows.reshape(shape)


def _put(g, shape, key):
    """zeros of ``shape`` with ``g`` written at ``key`` (a select's or slice's gradient put back)"""
    out = np.zeros(shape)
    out[key] = g
    return out


# Independent ways to compute each op's forward (no call into the table).
REFERENCE = {
    "add": lambda a, b, alpha=1: a + b * alpha,
    "sub": lambda a, b, alpha=1: a + (-b * alpha),
    "rsub": lambda a, c: c - a,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a * (1.0 / b),
    "neg": lambda a: 0.0 - a,
    "reciprocal": _vec(lambda v: 1.0 / v),
    "pow": lambda a, n: _vec(lambda v: math.pow(v, n))(a),
    "pow_tt": lambda a, b: np.exp(b * np.log(a)),
    "rpow": lambda a, c: _vec(lambda v: c ** v)(a),
    "abs": _vec(abs),
    "sigmoid": _vec(lambda v: math.exp(v) / (1.0 + math.exp(v))),
    "relu": _vec(lambda v: v if v > 0 else 0.0),
    "clamp": lambda a, lo, hi: _vec(lambda v: min(hi, v if lo is None else max(lo, v)))(a),
    "sum": lambda a: math.fsum(a.ravel().tolist()),
    "mean": lambda a: math.fsum(a.ravel().tolist()) / a.size,
    "amax": lambda a: max(a.ravel().tolist()),
    "median": lambda a: sorted(a.ravel().tolist())[(a.size - 1) // 2],
    "median_dim": lambda a, dim, keepdim=False, index=None: _extreme_along(a, dim, keepdim, lambda v: sorted(v)[(len(v) - 1) // 2]),
    "amin": lambda a: min(a.ravel().tolist()),
    "zero": lambda a: a * 0.0,
    "fill": lambda a, value: a * 0.0 + value,
    "fill_tensor": lambda a, v: a * 0.0 + v,
    "copy": lambda a, b: a * 0.0 + b,
    "amax_dims": lambda a, dim, keepdim=False: np.max(a, axis=dim, keepdims=keepdim) if not dim else
    _extreme_along(a, dim[0], keepdim, max) if len(dim) == 1 else a.max(axis=dim, keepdims=keepdim),
    "amin_dims": lambda a, dim, keepdim=False: np.min(a, axis=dim, keepdims=keepdim) if not dim else
    _extreme_along(a, dim[0], keepdim, min) if len(dim) == 1 else a.min(axis=dim, keepdims=keepdim),
    "norm": lambda a, ord=2, dim=None, keepdim=False: (
        np.abs(a).max(axis=dim, keepdims=keepdim) if ord == np.inf else np.abs(a).min(axis=dim, keepdims=keepdim)
        if ord == -np.inf else (np.abs(a) ** ord).sum(axis=dim, keepdims=keepdim) ** (1 / ord)),
    "sum_dim": lambda a, dim, keepdim=False: a.sum(axis=dim, keepdims=keepdim),
    "mean_dim": lambda a, dim, keepdim=False: a.sum(axis=dim, keepdims=keepdim) / math.prod(a.shape[d] for d in dim),
    "max_dim": lambda a, dim, keepdim=False, index=None: _extreme_along(a, dim, keepdim, max),
    "min_dim": lambda a, dim, keepdim=False, index=None: _extreme_along(a, dim, keepdim, min),
    "var": lambda a, dim=None, correction=1, keepdim=False: _var(a, dim, correction, keepdim),
    "std": lambda a, dim=None, correction=1, keepdim=False: np.sqrt(_var(a, dim, correction, keepdim)),
    "prod": lambda a: math.prod(a.ravel().tolist()),
    "prod_dim": lambda a, dim, keepdim=False: _extreme_along(a, dim, keepdim, math.prod),
    "softmax": lambda a, dim: np.exp(a) / np.exp(a).sum(axis=dim, keepdims=True),
    "log_softmax": lambda a, dim: np.log(np.exp(a) / np.exp(a).sum(axis=dim, keepdims=True)),
    "repeat": lambda a, sizes: np.block([[a] * sizes[-1]] * sizes[-2]) if len(sizes) == 2 and a.ndim == 2
    else np.tile(a, sizes),
    "mm": lambda a, b: np.einsum("ik,kj->ij", a, b),
    "mv": lambda a, b: np.einsum("ik,k->i", a, b),
    "dot": lambda a, b: math.fsum((a * b).tolist()),
    "bmm": lambda a, b: np.einsum("bik,bkj->bij", a, b),
    "addmm": lambda c, a, b: np.einsum("ik,kj->ij", a, b) + c,
    "mse_loss": lambda a, b, reduction: {"none": lambda e: e, "sum": lambda e: math.fsum(e.ravel().tolist()),
                                         "mean": lambda e: math.fsum(e.ravel().tolist()) / e.size}[reduction](
        np.vectorize(lambda u, v: (u - v) ** 2, otypes=[np.float64])(a, b)),
    "smooth_l1_loss": lambda a, b, reduction, beta=1.0: _reduced(np.vectorize(
        lambda u, v: 0.5 * (u - v) ** 2 / beta if abs(u - v) < beta else abs(u - v) - 0.5 * beta,
        otypes=[np.float64])(a, b), reduction),
    "huber_loss": lambda a, b, reduction, delta=1.0: _reduced(np.vectorize(
        lambda u, v: 0.5 * (u - v) ** 2 if abs(u - v) < delta else delta * (abs(u - v) - 0.5 * delta),
        otypes=[np.float64])(a, b), reduction),
    "xlogy": lambda a, b: _vec2(lambda u, v: 0.0 if u == 0 else u * math.log(v))(a, b),
    "div_scalar": lambda a, c: a * (1.0 / c),
    "mul_scalar": lambda a, c: a * c,
    "masked_select": lambda a, mask: np.broadcast_to(a, np.broadcast_shapes(a.shape, mask.shape))[
        np.broadcast_to(mask, np.broadcast_shapes(a.shape, mask.shape))],
    "bernoulli": lambda p, sample: sample * 1.0,
    "floor_divide": lambda a, b: _vec2(lambda u, v: math.floor(u / v))(a, b),
    "floor_divide_scalar": lambda a, c, reverse=False: _vec(lambda u: math.floor((c / u) if reverse else (u / c)))(a),
    "remainder": lambda a, b: _vec2(lambda u, v: u - math.floor(u / v) * v)(a, b),
    "remainder_scalar": lambda a, c: _vec(lambda u: u - math.floor(u / c) * c)(a),
    "rremainder": lambda a, c: _vec(lambda u: c - math.floor(c / u) * u)(a),
    "fmod": lambda a, b: _vec2(math.fmod)(a, b),
    "fmod_scalar": lambda a, c: _vec(lambda u: math.fmod(u, c))(a),
    "div_rounding": lambda a, b, rounding_mode: _vec2(lambda u, v: math.floor(u / v) if rounding_mode == "floor"
                                                      else math.trunc(u / v))(a, b),
    "embedding": lambda w, indices, padding_idx=None: np.array([[w[i, j] for j in range(w.shape[1])]
                                                                for i in np.ravel(indices)]).reshape(
        np.shape(indices) + (w.shape[1],)),
    "native_batch_norm": lambda x, w, b, running_mean=None, running_var=None, training=True, eps=1e-5: _bn(
        x, w, b, running_mean, running_var, training, eps),
    "native_layer_norm": lambda x, w, b, normalized_shape, eps=1e-5, has_weight=True, has_bias=True: _ln(
        x, w, b, normalized_shape, eps, has_weight, has_bias),
    "nll_loss": lambda a, target, weight=None, reduction="mean", ignore_index=-100: _nll(a, target, weight,
                                                                                         reduction, ignore_index),
    # an image batch: each pixel (n, h, w) is a row of class scores
    "nll_loss2d": lambda a, target, weight=None, reduction="mean", ignore_index=-100: np.reshape(_nll(
        np.moveaxis(a, 1, -1).reshape(-1, a.shape[1]), np.ravel(target), weight, reduction, ignore_index),
        np.shape(target) if reduction == "none" else ()),
    "binary_cross_entropy": lambda a, t, weight=None, reduction="mean": _reduced(
        np.vectorize(lambda x, y: -(y * math.log(x) + (1 - y) * math.log(1 - x)), otypes=[float])(a, t) * (1 if weight is None else weight),
        reduction),
    "binary_cross_entropy_with_logits": lambda a, t, weight=None, pos_weight=None, reduction="mean": _reduced(
        np.vectorize(lambda x, y, p: -(p * y * math.log(1 / (1 + math.exp(-x)))
                                       + (1 - y) * math.log(1 / (1 + math.exp(x)))), otypes=[float])(
            a, t, 1.0 if pos_weight is None else pos_weight) * (1 if weight is None else weight), reduction),
    "view": lambda a, shape: a.ravel().reshape(shape),
    "reshape_copy": lambda a, shape: a.ravel().reshape(shape),
    "reshape_alias": lambda a, shape: a.ravel().reshape(shape),
    "expand": lambda a, shape: a + np.zeros(shape),
    "permute": lambda a, dims: np.einsum(a, list(range(a.ndim)), list(dims)) if a.ndim else a,
    "transpose": lambda a, d0, d1: np.moveaxis(np.moveaxis(a, d0, d1), d1 - 1 if d1 > d0 else d1 + 1, d0)
    if d0 != d1 else a,
    "t": lambda a, d0, d1: a.T,
    "unsqueeze": lambda a, dim: a.reshape(a.shape[:dim] + (1,) + a.shape[dim:]),
    "squeeze": lambda a: a.reshape(tuple(n for n in a.shape if n != 1)),
    "squeeze_dim": lambda a, dim: a.reshape(a.shape[:dim] + a.shape[dim + 1:]),
    "squeeze_dims": lambda a, dim: a.reshape(tuple(n for i, n in enumerate(a.shape) if i not in dim or n != 1)),
    "squeeze_dims_": lambda a, dim: a.reshape(tuple(n for i, n in enumerate(a.shape) if i not in dim or n != 1)),
    "squeeze_mm": lambda a, dim: a.reshape(a.shape[:dim] + a.shape[dim + 1:]),
    "squeeze_": lambda a: a.reshape(tuple(n for n in a.shape if n != 1)),
    "unsqueeze_": lambda a, dim: a.reshape(a.shape[:dim] + (1,) + a.shape[dim:]),
    "t_": lambda a, d0, d1: a.T,
    "transpose_": lambda a, d0, d1: np.swapaxes(a, d0, d1),
    "select": lambda a, dim, index: np.moveaxis(a, dim, 0)[index],
    "slice": lambda a, dim, s: np.moveaxis(np.moveaxis(a, dim, 0)[s], 0, dim),
    "split": lambda a, dim, sizes: _pieces_flat(a, dim, sizes),
    "split_sizes": lambda a, dim, sizes: _pieces_flat(a, dim, sizes),
    "unbind": lambda a, dim, index=None: np.concatenate([np.take(a, i, axis=dim).ravel() for i in range(a.shape[dim])]),
    "index": lambda a, key: np.stack([a[i] for i in key[0].tolist()]),
    "cat": lambda *xs, dim: np.moveaxis(np.array([v for x in xs for v in np.moveaxis(x, dim, 0)]), 0, dim),
    "stack": lambda *xs, dim: np.moveaxis(np.array(xs), 0, dim),
    "where": lambda a, b, cond: cond * a + (~cond) * b,
    "clone": lambda a: a + 0.0,
    "rsqrt": _vec(lambda v: v ** -0.5),
    "maximum": lambda a, b: np.where(a > b, a, b),
    "minimum": lambda a, b: np.where(a < b, a, b),
    "logsumexp": lambda a, dim, keepdim=False: np.log(np.exp(a).sum(axis=dim, keepdims=keepdim)),
    "cumsum": lambda a, dim: np.apply_along_axis(lambda v: np.array([math.fsum(v[:i + 1]) for i in range(len(v))]),
                                                 dim, a),
    "linalg_det": lambda a: np.linalg.det(a),
    "linalg_inv": lambda a: np.linalg.inv(a),
    "linalg_solve": lambda a, b: np.linalg.solve(a, b),
    "cumprod": lambda a, dim: np.apply_along_axis(lambda v: np.array([math.prod(v[:i + 1]) for i in range(len(v))]),
                                                  dim, a),
    "masked_fill": lambda a, mask, value: np.where(np.broadcast_to(mask, a.shape), value, a),
    "flip": lambda a, dims: a[tuple(slice(None, None, -1) if d in dims else slice(None) for d in range(a.ndim))],
    "tril": lambda a, diagonal=0: np.array([[v if j - i <= diagonal else 0.0 for j, v in enumerate(row)]
                                            for i, row in enumerate(a.tolist())]),
    "triu": lambda a, diagonal=0: np.array([[v if j - i >= diagonal else 0.0 for j, v in enumerate(row)]
                                            for i, row in enumerate(a.tolist())]),
    "gather": lambda a, dim, index: np.take_along_axis(a, index, dim),
    "index_select": lambda a, dim, index: np.stack([np.take(a, i, axis=dim) for i in index.tolist()], axis=dim),
    "sort": lambda a, dim=-1, descending=False: np.flip(np.sort(a, axis=dim), dim) if descending
    else np.sort(a, axis=dim),
    "topk": lambda a, dim, index: np.take_along_axis(a, index, dim),
    "clamp_min": lambda a, min: np.maximum(a, min),
    "clamp_max": lambda a, max: np.minimum(a, max),
    "round": _vec(lambda v: float(round(v))),
    "sign": _vec(lambda v: (v > 0) - (v < 0)),
    "diagonal": lambda a, offset=0: np.array([a[i, i + offset] for i in range(a.shape[0])
                                              if 0 <= i + offset < a.shape[1]]),
    "diag_embed": lambda a, offset=0: np.array([[a[i] if j - i == offset else 0.0 for j in
                                                 range(len(a) + abs(offset))] for i in range(len(a) + abs(offset))])
    if offset >= 0 else np.array([[a[j] if i - j == -offset else 0.0 for j in range(len(a) + abs(offset))]
                                  for i in range(len(a) + abs(offset))]),
    "alias": lambda a: a.copy(),
    "add_scalar": lambda a, c: a + c,
    "softmax_backward": lambda g, y, dim: y * (g - (g * y).sum(axis=dim, keepdims=True)),
    "log_softmax_backward": lambda g, y, dim: g - np.exp(y) * g.sum(axis=dim, keepdims=True),
    "nll_loss_backward": lambda g, a, **p: _nll_grad(g, a.shape, **p),
    "sub_scalar": lambda a, c: a - c,
    "select_backward": lambda g, shape, dim, index: _put(g, shape, (slice(None),) * dim + (index,)),
    "slice_backward": lambda g, shape, dim, s: _put(g, shape, (slice(None),) * dim + (s,)),
    "tanh_backward": lambda g, y: g * (1 - y * y),
    "sigmoid_backward": lambda g, y: g * (1 - y) * y,
    "addcmul": lambda a, b, c, value=1: a + value * b * c,
    "addcdiv": lambda a, b, c, value=1: a + value * b / c,
    "lerp": lambda a, b, weight: a + weight * (b - a),
    "lerp_tensor": lambda a, b, w: a + w * (b - a),
    "clamp_tensor": lambda a, lo, hi: np.minimum(np.maximum(a, lo), hi),
    "clamp_min_tensor": np.maximum,
    "clamp_max_tensor": np.minimum,
    "threshold_backward": lambda g, y: np.where(y > 0, g, 0.0),
    "mse_loss_backward": lambda g, a, b, reduction: 2 * (a - b) * g / (a.size if reduction == "mean" else 1),
    "to": lambda a, dtype: np.array(a.tolist(), dtype=dtype),
    "index_put": lambda a, b, key: np.concatenate([a[:key[0]], b[None], a[key[0] + 1:]]),
    "as_strided": lambda a, size, stride, storage_offset=0: np.lib.stride_tricks.as_strided(
        a.copy().reshape(-1)[storage_offset:], size, [s * a.itemsize for s in stride]).copy(),
    "as_strided_": lambda a, size, stride, storage_offset=0: REFERENCE["as_strided"](a, size, stride, storage_offset),
    "copy_slices": lambda a, *others, inner, inner_params, size, stride, storage_offset: _written(
        a, others, REFERENCE[inner.key], inner_params, size, stride, storage_offset),
}

# the activations (gradviz._activation_ops), one number at a time with Python's math module
_LEAKY = lambda a, negative_slope: _vec(lambda v: v if v > 0 else v * negative_slope)(a)  # noqa: E731
_ELU = lambda a, alpha, scale, input_scale: _vec(  # noqa: E731
    lambda v: scale * v if v > 0 else scale * alpha * math.expm1(v * input_scale))(a)
_CELU = lambda a, alpha: _vec(lambda v: max(0.0, v) + min(0.0, alpha * math.expm1(v / alpha)))(a)  # noqa: E731
REFERENCE.update({
    "leaky_relu": _LEAKY, "leaky_relu_": _LEAKY, "elu": _ELU, "elu_": _ELU, "celu": _CELU, "celu_": _CELU,
    "softplus": lambda a, beta, threshold: _vec(
        lambda v: v if v * beta > threshold else math.log1p(math.exp(v * beta)) / beta)(a),
    "silu": _vec(lambda v: v / (1 + math.exp(-v))),
    "mish": _vec(lambda v: v * math.tanh(math.log1p(math.exp(v)))),
    "log_sigmoid": _vec(lambda v: -math.log1p(math.exp(-v))),
    "hardtanh": lambda a, min_val, max_val: _vec(lambda v: min(max(v, min_val), max_val))(a),
    "hardsigmoid": _vec(lambda v: min(max(v + 3, 0.0), 6.0) / 6),
    "leaky_relu_backward": lambda g, a, negative_slope, self_is_result=False: g * np.where(a > 0, 1.0, negative_slope),
    "hardtanh_backward": lambda g, a, min_val, max_val: g * ((a > min_val) & (a < max_val)),
    # (1/6 rounded to float32 even for doubles, as the kernel's ``scalar_t one_sixth(1.0f / 6.0f)``)
    "hardsigmoid_backward": lambda g, a: g * ((a > -3) & (a < 3)) * float(np.float32(1) / np.float32(6)),
    "gelu": lambda a, approximate: _vec(lambda v: v * 0.5 * (1 + math.erf(v / math.sqrt(2))))(a),
    "gelu_tanh": lambda a, approximate: _vec(
        lambda v: 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))))(a),
})


def _written(a, others, f, params, size, stride, offset):
    """``a`` with the strided view (size, stride, offset) replaced by ``f`` of it, written through numpy."""
    out = a.copy()
    view = np.lib.stride_tricks.as_strided(out.reshape(-1)[offset:], size, [s * a.itemsize for s in stride])
    view[...] = f(view.copy(), *others, **params)
    return out

# Python's math module computes the elementwise functions one number at a time: it is the reference
# for every table entry named after one of them (a new one, such as erf, needs no line here).
REFERENCE.update({key: _vec(getattr(math, key)) for key in OPS
                  if key not in REFERENCE and callable(getattr(math, key, None))})


def _forward(op, arrays, params):
    """One array: a multi-output op's pieces flattened one after another."""
    out = op.forward(*arrays, **params)
    return np.concatenate([np.ravel(p) for p in out] or [np.zeros(0)]) if op.multi_output else out


def _pieces(op, g, arrays, params):
    """The flat gradient ``g`` cut back into one gradient per output of a multi-output op."""
    if not op.multi_output:
        return g
    shapes = [p.shape for p in op.forward(*arrays, **params)]
    ends = np.cumsum([int(np.prod(sh)) for sh in shapes])
    return [piece.reshape(sh) for piece, sh in zip(np.split(g, ends[:-1]), shapes)]


def _differentiable(op):
    if op.name == "NotImplemented":
        pytest.skip("no derivative, as in PyTorch: backward through it raises (tests/test_torch_parity.py)")
    return op


def _vjp_case(op, case, seed):
    """One drawn case for a gradient test: the inputs, the parameters, a random upstream gradient
    ``g`` of the (flattened) output's shape, and ``numeric(i)``, the central difference of <f(x), g>
    for input i."""
    arrays, params = case
    g = np.random.default_rng(seed).standard_normal(np.shape(_forward(op, arrays, params)))

    def numeric(i):
        return numerical_grad(lambda xs: np.asarray(_forward(op, xs, params)), [a.copy() for a in arrays], i, g)
    return arrays, params, g, numeric


def test_every_op_has_a_reference():
    assert set(KEYS) == set(REFERENCE), "REFERENCE must compute every op"


@pytest.mark.parametrize("key", KEYS)
def test_table_entry_is_well_formed(key):
    op = OPS[key]
    assert op.key == key
    assert re.fullmatch(r"[A-Z]\w*Backward\d(_copy)?|CopySlices|CopyBackwards|NotImplemented", op.name)
    assert len(op.uses) == len(op.vjps) == len(op.dlatex)
    assert all(set(u) <= set("012o") for u in op.uses)
    assert op.domain[0] < op.domain[1]
    assert op.symbol and op.latex


@pytest.mark.parametrize("key", KEYS)
def test_forward_matches_reference(key):
    op = OPS[key]

    @SETTINGS
    @given(op_case(op))
    def check(case):
        arrays, params = case
        got = np.asarray(_forward(op, arrays, params))
        want = np.asarray(REFERENCE[key](*arrays, **params))
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

    check()


@pytest.mark.parametrize("key", KEYS)
def test_each_vjp_matches_central_differences(key):
    """``vjps[i](g, y, *x)`` equals ∂<f(x), g>/∂x_i, computed by central differences in float64."""
    op = _differentiable(OPS[key])

    @SETTINGS
    @given(op_case(op), st.integers(0, 2 ** 32 - 1))
    def check(case, seed):
        arrays, params, g, numeric = _vjp_case(op, case, seed)
        y = np.asarray(_forward(op, arrays, params))
        for i, x in enumerate(arrays):
            extra = {"i": i} if op.variadic else {}
            gp = _pieces(op, g, arrays, params)
            analytic = unbroadcast(np.asarray(op.vjp(i)(gp, y, *arrays, **extra, **params), np.float64), x.shape)
            np.testing.assert_allclose(analytic, numeric(i), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{key}: vjp for input {i}")

    check()


@pytest.mark.parametrize("key", KEYS)
def test_engine_backward_matches_central_differences(key):
    """Through the engine, one input at a time requiring grad (so only what that rule uses is saved)."""
    op = _differentiable(OPS[key])

    @SETTINGS
    @given(op_case(op), st.integers(0, 2 ** 32 - 1))
    def check(case, seed):
        arrays, params, g, numeric = _vjp_case(op, case, seed)
        for i in range(len(arrays)):
            tensors = [Tensor._wrap(a.copy()) for a in arrays]
            tensors[i].requires_grad_()
            if op.multi_output:
                outs = apply_outputs(op, tensors[0], **params)
                assert all(type(o.grad_fn).__name__ == op.name for o in outs)
                (grad,) = autograd.grad(outs, tensors[i], tuple(Tensor._wrap(p) for p in _pieces(op, g, arrays, params)))
            else:
                out = apply(op, tuple(tensors), **params)
                assert type(out.grad_fn).__name__ == op.name
                (grad,) = autograd.grad(out, tensors[i], Tensor._wrap(g))
            np.testing.assert_allclose(grad.numpy(), numeric(i), rtol=1e-5, atol=1e-6)

    check()


# --- the same maths through the public Tensor API -----------------------------------------------

def _leaf(a):
    return gradviz.tensor(a, dtype=gradviz.float64, requires_grad=True)


API = {
    "x * y": (lambda x, y: x * y, "binary"),
    "x + y": (lambda x, y: x + y, "binary"),
    "x - y": (lambda x, y: x - y, "binary"),
    "x / y": (lambda x, y: x / (y * y + 0.5), "binary"),
    "x ** y": (lambda x, y: (x * x + 0.5) ** y, "binary"),
    "2 - x * 3 / 4": (lambda x, y: 2 - x * 3 / 4 + y, "binary"),
    "1 / (x + 4)": (lambda x, y: 1 / (x + 4) * y, "binary"),
    "2 ** x": (lambda x, y: 2 ** x + y, "binary"),
    "sum(dim=-1, keepdim=True)": (lambda x: x.sum(dim=-1, keepdim=True), "unary"),
    "sum(0)": (lambda x: x.sum(0), "unary"),
    "mean()": (lambda x: x.mean(), "unary"),
    "mean(dim=(0, -1))": (lambda x: x.mean(dim=(0, -1)), "unary"),
    "x[0]": (lambda x: x[0], "unary"),
    "x[..., -1]": (lambda x: x[..., -1], "unary"),
    "x[:, None, 1:]": (lambda x: x[:, None, 1:], "matrix"),
    "x[[0, 0, 1]]": (lambda x: x[[0, 0, 1]], "matrix"),
    "x[x > 0]": (lambda x: x[x > 0], "unary"),
    "cat": (lambda x: gradviz.cat([x, x * 2, x[:1]], dim=0), "matrix"),
    "stack": (lambda x: gradviz.stack([x, x.exp()], dim=1), "unary"),
    "where": (lambda x: gradviz.where(x > 0, x ** 2, -x), "unary"),
    "clamp": (lambda x: x.clamp(-0.5, 0.5), "unary"),
    "clamp(min=)": (lambda x: x.clamp(min=0.25), "unary"),
    "max(dim)": (lambda x: x.max(dim=0).values, "distinct"),
    "max()": (lambda x: x.max(), "distinct"),
    "min(dim, keepdim)": (lambda x: x.min(1, keepdim=True)[0], "distinct"),
    "x @ y": (lambda x: x @ x.t(), "matrix"),
    "x @ v": (lambda x: x @ x[0], "matrix"),
    "view/reshape/flatten": (lambda x: x.reshape(-1).view(1, -1).flatten() * 2, "unary"),
    "t/T/transpose/permute": (lambda x: x.t().T.transpose(0, 1).permute(1, 0), "matrix"),
    "unsqueeze/squeeze/expand": (lambda x: x.unsqueeze(0).expand(3, -1, -1).squeeze(), "matrix"),
    "tanh/sigmoid/relu": (lambda x: x.tanh() + x.sigmoid() * x.relu(), "unary"),
    "exp/log/sqrt": (lambda x: (x.exp() + 1).log().sqrt(), "unary"),
    "sin/cos/abs/neg": (lambda x: x.sin() * x.cos() - (-x).abs(), "unary"),
    "norm": (lambda x: x.norm(), "unary"),
    "seed lesson": (lambda x: 0.5 * gradviz.sum(5 * (x + 1) ** 2), "unary"),
}


@st.composite
def _api_inputs(draw, kind):
    from strategies import arrays, broadcastable, shapes
    if kind == "binary":
        return draw(broadcastable(-2.0, 2.0))
    if kind == "matrix":
        return (draw(arrays(draw(shapes(min_dims=2, max_dims=2, min_side=2)), -2.0, 2.0)),)
    if kind == "distinct":
        return (draw(arrays(draw(shapes(min_dims=2, max_dims=2)), -2.0, 2.0, distinct=True)),)
    # away from the kinks of abs, relu, clamp and the x > 0 masks
    a = draw(arrays(draw(shapes(min_dims=2, max_dims=3)), 0.05, 2.0))
    signs = draw(arrays(a.shape, -1.0, 1.0))
    a = np.where(signs < 0, -a, a)
    return (np.where(np.abs(np.abs(a) - 0.5) < 0.02, a * 1.1, np.where(np.abs(a - 0.25) < 0.02, 0.4, a)),)


@pytest.mark.parametrize("name", list(API))
def test_public_api_gradcheck(name):
    fn, kind = API[name]

    @SETTINGS
    @given(_api_inputs(kind))
    def check(inputs):
        leaves = [_leaf(a) for a in inputs]
        assert autograd.gradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-4)

    check()


def test_gradcheck_reports_a_wrong_rule():
    x = _leaf([0.3, 0.7])
    bad = gradviz.ops.OPS["sin"].renamed("SinBackward0", vjps=(lambda g, y, a: g * a,))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        autograd.gradcheck(lambda t: apply(bad, (t,)), (x,))
    assert autograd.gradcheck(lambda t: apply(bad, (t,)), (x,), raise_exception=False) is False


def test_float_to_double_and_back_carries_the_gradient():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = (x.double() * gradviz.tensor([3.0, 4.0], dtype=gradviz.float64)).float().sum()
    y.backward()
    assert x.grad.dtype is gradviz.float32 and x.grad.tolist() == [3.0, 4.0]
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "ToCopyBackward0"


def test_an_entry_takes_its_fields_and_refuses_others():
    from gradviz._op import Op
    entry = Op("k", "KBackward0", "k", np.negative, (lambda g, y, a: -g,), ("",), "-@0", ("-1",), method="k", precedence=2)
    assert (entry.method, entry.precedence, entry.params, entry.inplace) == ("k", 2, {}, False)
    with pytest.raises(TypeError, match="unexpected keyword argument 'methd'"):
        Op("k", "KBackward0", "k", np.negative, (lambda g, y, a: -g,), ("",), "-@0", ("-1",), methd="k")


def test_an_entry_holds_its_defaults_itself_and_a_subclass_its_own():
    """Every field is in the entry's own dict (the engine's reads of op.is_view... are then fast in
    CPython 3.11); a subclass's defaults, its own fields' and those it changes, are the ones it gets."""
    from gradviz._op import Op

    class Variadic(Op):
        variadic = True
        extra: int = 3

    args = ("k", "KBackward0", "k", np.negative, (lambda g, y, a: -g,), ("",), "-@0", ("-1",))
    entry, sub = Op(*args), Variadic(*args)
    assert {"is_view", "variadic", "column_major", "inputs"} <= set(vars(entry))
    assert (entry.variadic, sub.variadic, sub.extra, sub.is_view) == (False, True, 3, False)
    assert Variadic(*args, variadic=False).variadic is False
