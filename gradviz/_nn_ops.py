"""Op-table entries of the losses and layers that are one node in PyTorch: MseLossBackward0,
NllLossBackward0, BinaryCrossEntropyBackward0, EmbeddingBackward0, NativeBatchNormBackward0,
NativeLayerNormBackward0...
Declared with :func:`gradviz._op.op` into the one table, :data:`gradviz.ops.OPS`; the contract
of an entry is written in :mod:`gradviz.ops`.
"""

import numpy as np

from . import kernels
from ._op import OPS, call, op

__all__ = ["regression_loss_latex", "weighted_nll_latex", "batch_norm_latex", "layer_norm_latex"]


# --- losses -------------------------------------------------------------------------------------

def _mse_loss(a, b, reduction="mean"):
    """ℓ = mean((a − b)²) (or their sum, or each one for reduction='none')"""
    d = a - b
    sq = d * d
    if reduction == "none":
        return sq
    return kernels.sum(sq) / sq.size if reduction == "mean" else kernels.sum(sq)


def _mse_vjp(g, a, b, reduction):
    """(2/n)(a − b)·g, multiplied in the order of PyTorch's kernel: the factor first, then g"""
    norm = a.dtype.type(2.0 / a.size if reduction == "mean" else 2.0)
    return norm * (a - b) * g


def _mse_double(g, a, reduction):
    """∂ mse_loss_backward / ∂a applied to g: 2g (then / n for the mean), as PyTorch's mse_loss_double_backward"""
    g = 2 * g
    return g / a.size if reduction == "mean" else g


def _mse_grad_output(gg, g, a, b, reduction):
    """∂ mse_loss_backward / ∂g applied to gg (PyTorch's mse_loss_double_backward_grad_output)"""
    if reduction == "none":
        return call("mse_loss_backward", gg, a, b, reduction=reduction)
    return (call("mse_loss_backward", np.ones(g.shape, g.dtype), a, b, reduction=reduction) * gg).sum()


op("mse_loss", grad_fn="MseLossBackward0", symbol="MSE", forward=_mse_loss,
   vjps=[lambda g, y, a, b, reduction="mean": call("mse_loss_backward", g, a, b, reduction=reduction),
    lambda g, y, a, b, reduction="mean": call("mse_loss_backward", g, b, a, reduction=reduction)], uses=["01", "01"],
   latex=r"\frac{1}{n}\sum (@0 - @1)^{2}", dlatex=[r"\frac{2}{n}(@0 - @1)", r"-\frac{2}{n}(@0 - @1)"],
   params={"reduction": "mean"}, function="nn.functional.mse_loss", inputs="loss", saved={"self": 0, "target": 1},
   category="reduction")
# the gradient as PyTorch computes it, one op of its own: MseLossBackwardBackward0 under create_graph=True
op("mse_loss_backward", grad_fn="MseLossBackwardBackward0", symbol="∂MSE",
   forward=lambda g, a, b, reduction="mean": _mse_vjp(g, a, b, reduction),
   vjps=[lambda gg, y, g, a, b, reduction="mean": _mse_grad_output(gg, g, a, b, reduction),
         lambda gg, y, g, a, b, reduction="mean": _mse_double(gg * g, a, reduction),
         lambda gg, y, g, a, b, reduction="mean": -_mse_double(gg * g, b, reduction)], uses=["12", "0", "0"],
   latex=r"\frac{2}{n}(@1 - @2) @0", dlatex=[r"\frac{2}{n}(@1 - @2)", r"\frac{2}{n} @0", r"-\frac{2}{n} @0"],
   params={"reduction": "mean"}, inputs="loss_backward", in_rules=True,
   saved={"grad_output": 0, "self": 1, "target": 2})

# The classification losses below are PyTorch's CPU kernels step by step: plain loops over floats
# (no fused multiply-adds), the C library's logf/log1pf where they call std::log, nll_loss's
# cascade of partial sums. ``target`` and ``weight`` are parameters: PyTorch has no gradient for
# class indices, nor for a weight.

def _nll_rows(a, target):
    """(rows of scores, their targets): a 1-D input is one row; an image batch (N, C, H, W) is a row
    per pixel, taken in (n, h, w) order as nll_loss2d's kernel takes them."""
    if a.ndim == 4:
        return np.moveaxis(a, 1, -1).reshape(-1, a.shape[1]), np.asarray(target).reshape(-1)
    return (a.reshape(1, -1), np.reshape(target, (1,))) if a.ndim == 1 else (a, np.asarray(target))


def _nll_unrows(rows, a):
    """The inverse of :func:`_nll_rows` for an array of the rows' shape."""
    if a.ndim == 4:
        n, c, h, w = a.shape
        return np.moveaxis(rows.reshape(n, h, w, c), -1, 1)
    return rows.reshape(a.shape)


def _nll_loss(a, target, weight=None, reduction="mean", ignore_index=-100):
    """ℓ = −Σ w[t_b]·x[b, t_b] / Σ w[t_b] over the rows b (ignore_index skipped)"""
    x, t = _nll_rows(a, target)
    if reduction == "none" and a.ndim != 1:
        out = np.zeros(len(t), x.dtype)
        kept = np.nonzero(t != ignore_index)[0]
        picked = x[kept, t[kept]]
        out[kept] = -picked * np.asarray(weight, x.dtype)[t[kept]] if weight is not None else -picked
        return out.reshape(np.shape(target))
    loss, total = kernels.nll_sums(x, t, weight, ignore_index)
    return np.asarray(loss / total if reduction == "mean" else loss, x.dtype)


def _nll_vjp(g, a, target, weight=None, reduction="mean", ignore_index=-100):
    """−w[t]·g at each row's target (divided by Σ w for the mean), 0 elsewhere."""
    x, t = _nll_rows(np.zeros(a.shape, g.dtype), target)
    x = np.array(x)                                  # (a copy when the rows were a moved view)
    dt = x.dtype.type
    kept = np.nonzero(np.asarray(t) != ignore_index)[0]
    w = np.asarray(weight, x.dtype)[t[kept]] if weight is not None else None
    if reduction == "none" and a.ndim != 1:
        gb = np.reshape(g, -1)[kept].astype(x.dtype, copy=False)
        x[kept, t[kept]] = -(w if w is not None else dt(1)) * gb
        return _nll_unrows(x, a)
    g = dt(g)
    grad = -(dt(g / kernels.nll_sums(x, t, weight, ignore_index)[1]) if reduction == "mean" else g)
    x[kept, t[kept]] = w * grad if w is not None else grad
    return _nll_unrows(x, a)


op("nll_loss", grad_fn="NllLossBackward0", symbol="NLL", forward=_nll_loss,
   vjps=[lambda g, y, a, **p: call("nll_loss_backward", g, a, **p)], uses=["0"],
   latex=r"-\frac{1}{n}\sum_b @0_{b, t_b}", dlatex=[r"-\frac{1}{n}\mathbb{1}[j = t_b]"],
   params={"target": np.array([0, 1]), "reduction": "mean"}, function="nn.functional.nll_loss", inputs="nll",
   elementwise=False, saved={"self": 0, "target": "@target", "weight": "@weight", "ignore_index": "@ignore_index"})
# its gradient, an op of its own in PyTorch (NllLossBackwardBackward0, whose inputs are g and the
# scores): linear in g, so its own gradient is nll_loss of the incoming gradient, and 0 for the scores
op("nll_loss_backward", grad_fn="NllLossBackwardBackward0", symbol="∂NLL", forward=_nll_vjp,
   vjps=[lambda gg, y, g, a, **p: call("nll_loss", gg, **p), lambda gg, y, g, a, **p: np.zeros_like(gg)],
   uses=["", ""], latex=r"-\frac{@0}{n}\mathbb{1}[j = t_b]", dlatex=[r"-\frac{1}{n}\mathbb{1}[j = t_b]", "0"],
   params={"target": np.array([0, 1]), "reduction": "mean"}, inputs="nll_backward",
   elementwise=False, in_rules=True, saved={"target": "@target", "weight": "@weight",
                                            "ignore_index": "@ignore_index"})


def weighted_nll_latex(key, reduction, w):
    """nll_loss's ``latex`` when class weights ``w`` are given: each row's term weighted by its class's w,
    the mean divided by the weights' sum (not by N), as PyTorch computes it."""
    b, t, rest = ("b,h,w", "t_{bhw}", ", h, w") if key == "nll_loss2d" else ("b", "t_b", "")
    at = rf"{w}_{{{t}}}\, @0_{{b, {t}{rest}}}"
    if reduction == "mean":
        return rf"-\frac{{\sum_{{{b}}} {at}}}{{\sum_{{{b}}} {w}_{{{t}}}}}"
    return rf"-\sum_{{{b}}} {at}" if reduction == "sum" else rf"-{at}"


# an image batch (N, C, H, W) with a class per pixel (N, H, W): PyTorch's 2-D kernel, the same sums
OPS["nll_loss2d"] = OPS["nll_loss"].renamed(
    "NllLoss2DBackward0", key="nll_loss2d", latex=r"-\frac{1}{n}\sum_{b,h,w} @0_{b, t_{bhw}, h, w}",
    dlatex=[r"-\frac{1}{n}\mathbb{1}[j = t_{bhw}]"], params={"target": np.array([[[0, 1]]]), "reduction": "mean"})


def _reduce_loss(loss, reduction):
    return loss if reduction == "none" else \
        np.asarray(kernels.sum(loss) / loss.size if reduction == "mean" else kernels.sum(loss), loss.dtype)


# smooth_l1_loss and huber_loss: one node each in PyTorch, quadratic near the target and linear
# beyond β (δ); the numbers are kernels.smooth_l1/huber and their gradients, PyTorch's kernels step by
# step. A target that requires grad gets the same gradient with input and target swapped (x − t → t − x),
# as PyTorch's derivatives.yaml writes it. (smooth_l1_loss with beta=0 is l1_loss, composed: see nn.functional)

def _norm(a, reduction):
    """the kernels' norm: 1/n in double for the mean (rounded to the dtype there), else 1"""
    return 1.0 / a.size if reduction == "mean" else 1.0


# |x − t| in a template, and the two pieces' indicators
_Z = r"|@0 - @1|"
_IN, _OUT = rf"\mathbb{{1}}[{_Z} < @{{p}}]", rf"\mathbb{{1}}[{_Z} \ge @{{p}}]"
# each element's loss and its derivative (for the input; the target's is its negative), without the
# mean's 1/n, as regression_loss_latex writes them for each reduction
SMOOTH_L1_PIECES = (rf"\frac{{(@0 - @1)^{{2}}}}{{2 @beta}} {_IN} + ({_Z} - \frac{{@beta}}{{2}}) {_OUT}".replace("{p}", "beta"),
                    rf"\frac{{@0 - @1}}{{@beta}} {_IN} + \operatorname{{sign}}(@0 - @1) {_OUT}".replace("{p}", "beta"))
HUBER_PIECES = (rf"\frac{{1}}{{2}} (@0 - @1)^{{2}} {_IN} + @delta ({_Z} - \frac{{@delta}}{{2}}) {_OUT}".replace("{p}", "delta"),
                rf"(@0 - @1) {_IN} + @delta \operatorname{{sign}}(@0 - @1) {_OUT}".replace("{p}", "delta"))
# (β = 1, δ = 1: the textbook's ½(x − t)², no parameter written)
_ONE = (r"\frac{1}{2} (@0 - @1)^{2} \mathbb{1}[|@0 - @1| < 1] + (|@0 - @1| - \frac{1}{2}) \mathbb{1}[|@0 - @1| \ge 1]",
        r"(@0 - @1) \mathbb{1}[|@0 - @1| < 1] + \operatorname{sign}(@0 - @1) \mathbb{1}[|@0 - @1| \ge 1]")


def regression_loss_latex(key, reduction="mean", derivative=False, beta=1.0, delta=1.0):
    """smooth_l1_loss's or huber_loss's LaTeX for a reduction: (1/n)Σ(...) for the mean, Σ(...) for
    the sum, the element's own loss for 'none' (``derivative=True``: ∂ℓ/∂x, 1/n kept for the mean)."""
    smooth = key == "smooth_l1_loss"
    pieces = _ONE if (beta if smooth else delta) == 1 else SMOOTH_L1_PIECES if smooth else HUBER_PIECES
    piece = pieces[1 if derivative else 0]
    if derivative:
        return rf"\frac{{1}}{{n}} ({piece})" if reduction == "mean" else piece
    return {"mean": rf"\frac{{1}}{{n}}\sum ({piece})", "sum": rf"\sum ({piece})"}.get(reduction, piece)


op("smooth_l1_loss", grad_fn="SmoothL1LossBackward0", symbol="SmoothL1",
   forward=lambda a, b, reduction="mean", beta=1.0: _reduce_loss(kernels.smooth_l1(a, b, beta), reduction),
   vjps=[lambda g, y, a, b, reduction="mean", beta=1.0: kernels.smooth_l1_backward(g, a, b, _norm(a, reduction), beta),
         lambda g, y, a, b, reduction="mean", beta=1.0: kernels.smooth_l1_backward(g, b, a, _norm(a, reduction), beta)],
   uses=["01", "01"],
   latex=rf"\frac{{1}}{{n}}\sum ({SMOOTH_L1_PIECES[0]})",
   latex_of=lambda reduction="mean", **p: regression_loss_latex("smooth_l1_loss", reduction, **p),
   dlatex=[rf"\frac{{1}}{{n}} ({SMOOTH_L1_PIECES[1]})", rf"-\frac{{1}}{{n}} ({SMOOTH_L1_PIECES[1]})"],
   params={"reduction": "mean", "beta": 1.0}, function="nn.functional.smooth_l1_loss", inputs="loss",
   saved={"self": 0, "target": 1, "beta": "@beta"}, category="reduction")
op("huber_loss", grad_fn="HuberLossBackward0", symbol="Huber",
   forward=lambda a, b, reduction="mean", delta=1.0: _reduce_loss(kernels.huber(a, b, delta), reduction),
   vjps=[lambda g, y, a, b, reduction="mean", delta=1.0: kernels.huber_backward(g, a, b, _norm(a, reduction), delta),
         lambda g, y, a, b, reduction="mean", delta=1.0: kernels.huber_backward(g, b, a, _norm(a, reduction), delta)],
   uses=["01", "01"],
   latex=rf"\frac{{1}}{{n}}\sum ({HUBER_PIECES[0]})",
   latex_of=lambda reduction="mean", **p: regression_loss_latex("huber_loss", reduction, **p),
   dlatex=[rf"\frac{{1}}{{n}} ({HUBER_PIECES[1]})", rf"-\frac{{1}}{{n}} ({HUBER_PIECES[1]})"],
   params={"reduction": "mean", "delta": 1.0}, function="nn.functional.huber_loss", inputs="loss",
   saved={"self": 0, "target": 1, "delta": "@delta"}, category="reduction")


def _bce(a, t, weight=None, reduction="mean"):
    """ℓ = −(t·log x + (1 − t)·log(1 − x)), each log at least −100"""
    if not ((a >= 0) & (a <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not ((t >= 0) & (t <= 1)).all():
        raise RuntimeError("all elements of target should be between 0 and 1")
    dt = a.dtype.type
    loss = (t - dt(1)) * np.maximum(kernels.c_log1p(-a), dt(-100)) - t * np.maximum(kernels.c_log(a), dt(-100))
    return _reduce_loss(loss if weight is None else loss * weight, reduction)


def _bce_vjp(g, a, t, weight=None, reduction="mean"):
    """g·(x − t) / max(x(1 − x), 10⁻¹²) (times the weight, over n for the mean)"""
    dt = a.dtype.type
    grad = g * (a - t) / np.maximum((dt(1) - a) * a, dt(1e-12))
    return _loss_scaled(grad, weight, reduction)


def _loss_scaled(grad, weight, reduction):
    if weight is not None:
        grad = grad * weight
    return grad / grad.dtype.type(grad.size) if reduction == "mean" else grad


def _bce_target_vjp(g, a, t, weight=None, reduction="mean"):
    """−logit(x)·g: the loss is linear in the target"""
    return _loss_scaled(-kernels.log(a / (a.dtype.type(1) - a)) * g, weight, reduction)


op("binary_cross_entropy", grad_fn="BinaryCrossEntropyBackward0", symbol="BCE", forward=_bce,
   vjps=[lambda g, y, a, t, **p: _bce_vjp(g, a, t, **p), lambda g, y, a, t, **p: _bce_target_vjp(g, a, t, **p)],
   uses=["01", "0"],
   latex=r"-\frac{1}{n}\sum \left(@1 \ln @0 + (1 - @1) \ln(1 - @0)\right)",
   dlatex=[r"\frac{1}{n}\frac{@0 - @1}{@0 (1 - @0)}", r"-\frac{1}{n}\ln\frac{@0}{1 - @0}"],
   params={"reduction": "mean"}, function="nn.functional.binary_cross_entropy", inputs="bce", domain=(0.05, 0.95),
   elementwise=False, saved={"self": 0, "target": 1, "weight": "@weight"})


def _log_sigmoid(a):
    """log σ(x) = min(x, 0) − log1p(e^{−|x|}), as PyTorch's kernel computes it (no overflow): every
    element in vectors, part vectors too, so SLEEF's exp and log1p throughout"""
    return np.minimum(a, a.dtype.type(0)) - kernels.sleef_log1p(kernels.sleef_exp(-np.abs(a)))


def _bce_logits(a, t, weight=None, pos_weight=None, reduction="mean"):
    """ℓ = (1 − t)·x − log σ(x) (with pos_weight p: (1 − t)·x − ((p − 1)·t + 1)·log σ(x))"""
    dt = a.dtype.type
    log_sig = _log_sigmoid(a)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight - dt(1)) * t + dt(1))
    loss = (dt(1) - t) * a - log_sig
    return _reduce_loss(loss if weight is None else loss * weight, reduction)


def _bce_logits_vjp(g, a, t, weight=None, pos_weight=None, reduction="mean"):
    """(σ(x) − t)·g (with pos_weight p: ((p·t + 1 − t)·σ(x) − p·t)·g)"""
    if pos_weight is None:
        grad = kernels.sigmoid(a) - t
    else:
        pt = pos_weight * t
        grad = (pt + a.dtype.type(1) - t) * kernels.sigmoid(a) - pt
    return _loss_scaled(grad * g, weight, reduction)


def _bce_logits_target_vjp(g, a, t, weight=None, pos_weight=None, reduction="mean"):
    """−x·g (with pos_weight p: (log σ(−x) − p·log σ(x))·g)"""
    grad = -a if pos_weight is None else _log_sigmoid(-a) - _log_sigmoid(a) * pos_weight
    return _loss_scaled(grad * g, weight, reduction)


op("binary_cross_entropy_with_logits", grad_fn="BinaryCrossEntropyWithLogitsBackward0", symbol="BCE",
   forward=_bce_logits,
   vjps=[lambda g, y, a, t, **p: _bce_logits_vjp(g, a, t, **p),
         lambda g, y, a, t, **p: _bce_logits_target_vjp(g, a, t, **p)],
   uses=["01", "0"],
   latex=r"\frac{1}{n}\sum \left((1 - @1)\,@0 - \ln \sigma(@0)\right)",
   dlatex=[r"\frac{1}{n}(\sigma(@0) - @1)", r"-\frac{1}{n} @0"],
   params={"reduction": "mean"}, function="nn.functional.binary_cross_entropy_with_logits", inputs="bce",
   elementwise=False, saved={"self": 0, "target": 1, "weight": "@weight", "pos_weight": "@pos_weight"})

# --- layers with their own node -------------------------------------------------------------------

def _embedding_vjp(g, weight, indices, padding_idx=None):
    """Each looked-up row's gradient added into its row of the table, in lookup order (0 for padding)."""
    out = np.zeros(weight.shape, g.dtype)
    rows = np.reshape(indices, -1)
    g = g.reshape(len(rows), weight.shape[1])
    kept = rows != padding_idx if padding_idx is not None else np.ones(len(rows), bool)
    np.add.at(out, rows[kept], g[kept])        # unbuffered: repeated rows add up in lookup order
    return out


# torch.bernoulli(p): a sample is drawn from the probabilities (the draw is the parameter, so the
# forward is a pure function); its gradient is 0, as PyTorch's BernoulliBackward0 sends.
op("bernoulli", grad_fn="BernoulliBackward0", forward=lambda p, sample: np.array(sample, p.dtype),
   vjps=[lambda g, y, p, sample: np.zeros_like(g)], uses=[""],
   latex=r"\operatorname{Bernoulli}(@0)", dlatex=["0"], params={"sample": np.array(1.0)},
   function="bernoulli", inputs="bernoulli")


op("embedding", grad_fn="EmbeddingBackward0", symbol="lookup",
   forward=lambda weight, indices, padding_idx=None: np.take(weight, indices, axis=0),
   vjps=[lambda g, y, weight, indices, padding_idx=None: _embedding_vjp(g, weight, indices, padding_idx)],
   uses=[""], latex=r"@0_{\text{indices}}", dlatex=["1"],
   params={"indices": np.array([1, 0, 1])}, function="nn.functional.embedding", inputs="embedding",
   elementwise=False, saved={"indices": "@indices", "padding_idx": "@padding_idx"})


def batch_norm_latex(has_weight=True, has_bias=True):
    """native_batch_norm's ``latex`` with only the weight and bias given written (affine=False: the
    normalised x alone, not · 1 + 0). The ``given`` flags reach the rules too, which ignore them."""
    return r"\frac{@0 - \mu}{\sqrt{\sigma^{2} + \epsilon}}" + (" @1" if has_weight else "") + \
        (" + @2" if has_bias else "")


def _bn_channel(v, x):
    """A per-channel vector, shaped to broadcast along axis 1 of ``x``."""
    return np.reshape(v, (1, -1) + (1,) * (x.ndim - 2))


def _bn_stats(x, training, running_mean, running_var, eps):
    """(mean, 1/√(var + eps), Σ(x − mean)²) per channel: the batch's (biased variance; mean and sum
    of squares stored in x's dtype, as PyTorch's kernel stores them) or the running ones."""
    if not training:
        dt = x.dtype.type
        return running_mean.astype(x.dtype), dt(1) / np.sqrt(running_var.astype(x.dtype) + dt(eps)), None
    n = x.size // x.shape[1]
    mean, var_sum = kernels.batch_norm_sums(x)
    var = var_sum / x.dtype.type(n)                            # the biased variance, in x's dtype,
    return mean, (1 / np.sqrt(var.astype(np.float64) + eps)).astype(x.dtype), var_sum   # then 1/√ in double


def _batch_norm(x, weight, bias, running_mean=None, running_var=None, training=True, eps=1e-5, **given):
    """y = (x − mean) / √(var + eps) · w + b, per channel (axis 1): the batch's statistics while
    training, the running ones in eval mode"""
    mean, invstd, _ = _bn_stats(x, training, running_mean, running_var, eps)
    alpha = invstd * weight                                    # y = x·α + β, as PyTorch's kernel
    beta = kernels.fma(-mean, alpha, bias, x.dtype)                    # b − mean·α, one fused multiply-add
    return kernels.fma(x, _bn_channel(alpha, x), _bn_channel(beta, x), x.dtype)


def _bn_backward_stats(x, training, running_mean, running_var, eps):
    """(mean, 1/√(var + eps)) as PyTorch's backward kernels take them: the batch's while training;
    in eval mode the running ones, 1/√ computed in double there (the forward's in x's dtype)."""
    if training:
        return _bn_stats(x, True, None, None, eps)[:2]
    return running_mean.astype(x.dtype), (1 / np.sqrt(running_var.astype(np.float64) + eps)).astype(x.dtype)


def _bn_image(x):
    """Has ``x`` more than one number per (sample, channel)?  PyTorch's kernels then take its
    contiguous path (a plane per sample and channel), else the channels-last one."""
    return x.size != x.shape[0] * x.shape[1]


def _bn_grad_input(g, x, weight, running_mean=None, running_var=None, training=True, eps=1e-5, **given):
    """dx = (g − mean(g) − x̂·mean(g·x̂)) · w/σ while training (the batch's statistics depend on x);
    g · w/σ in eval mode. In x's dtype, step by step as PyTorch's kernel computes it (for images,
    mean(g) and the factor of x − mean from the sums in double, rounded once)."""
    mean, invstd = _bn_backward_stats(x, training, running_mean, running_var, eps)
    g = g.astype(x.dtype, copy=False)
    if not training:
        return g * _bn_channel(invstd, x) * _bn_channel(weight, x)
    n = x.size // x.shape[1]
    total, dot = kernels.batch_norm_backward_sums(g, x, mean)
    k = dot.astype(x.dtype) * invstd * invstd / x.dtype.type(n)   # (the sum rounded first, as the kernel)
    centred = x - _bn_channel(mean, x)
    rest = g - _bn_channel((total / n).astype(x.dtype), x)
    if _bn_image(x):   # every element in a (part) vector: the product fused into the subtraction
        dx = kernels.fma(-centred, _bn_channel(k, x), rest, x.dtype)
    else:
        centred, rest = centred.reshape(x.shape[:2]), rest.reshape(x.shape[:2])   # (N, C, 1...) as rows
        dx = rest - centred * k
        lanes = 8 if x.dtype == np.float32 else 4     # the kernel's vectors (8 floats, 4 doubles) fuse that
        vec = x.shape[1] - x.shape[1] % lanes         # product, its part vector does not
        dx[:, :vec] = kernels.fma(-centred[:, :vec], k[:vec], rest[:, :vec], x.dtype)
        dx = dx.reshape(x.shape)
    return dx * _bn_channel(invstd, x) * _bn_channel(weight, x)


def _bn_grad_weight(g, x, running_mean=None, running_var=None, training=True, eps=1e-5, **given):
    """dw = Σ g · x̂ over the batch: the dot product of g with x − mean, times 1/σ"""
    mean, invstd = _bn_backward_stats(x, training, running_mean, running_var, eps)
    return (kernels.batch_norm_backward_sums(g.astype(x.dtype, copy=False), x, mean)[1] * invstd).astype(x.dtype)


op("native_batch_norm", grad_fn="NativeBatchNormBackward0", symbol="BN", forward=_batch_norm,
   vjps=[lambda g, y, x, w, b, **p: _bn_grad_input(g, x, w, **p),
         lambda g, y, x, w, b, **p: _bn_grad_weight(g, x, **p),
         lambda g, y, x, w, b, **p: kernels.batch_norm_grad_sum(g.astype(x.dtype, copy=False))],
   uses=["01", "0", ""], latex=batch_norm_latex(),
   latex_of=lambda has_weight=True, has_bias=True, **p: batch_norm_latex(has_weight, has_bias),
   dlatex=[r"\frac{@1}{\sqrt{\sigma^{2} + \epsilon}}\left(I - \tfrac{1}{n} - \tfrac{1}{n}\hat{x}\hat{x}^{T}\right)",
           r"\hat{x}", "1"],
   params={"training": True}, function="nn.functional.batch_norm", inputs="batch_norm", elementwise=False,
   saved={"input": 0, "weight": 1, "eps": "@eps", "training": "@training", "running_mean": "@running_mean",
          "running_var": "@running_var"})


def _ln_rows(a, normalized_shape):
    """``a`` as rows (M, N): N the elements of the normalised dimensions, the last ones."""
    lead = a.shape[:a.ndim - len(normalized_shape)]
    return a.reshape(int(np.prod(lead, dtype=np.int64)), int(np.prod(normalized_shape, dtype=np.int64)))


def _layer_norm(x, weight, bias, normalized_shape=(2,), eps=1e-5, has_weight=True, has_bias=True):
    """y = (x − μ)/√(σ² + ε) ⊙ w + b, μ and σ² (biased) of each row: the last dimensions, those of
    normalized_shape. A weight or bias not given takes the kernel's other loop, hence the flags."""
    rows = _ln_rows(x, normalized_shape)
    y = kernels.layer_norm(rows, weight.reshape(-1) if has_weight else None,
                           bias.reshape(-1) if has_bias else None, eps)[0]
    return y.reshape(x.shape)


def _ln_grad_input(g, x, weight, normalized_shape=(2,), eps=1e-5, has_weight=True, has_bias=True):
    """dx = (N h − Σ h − x̂ Σ h x̂) / (N σ) per row, h = g ⊙ w, as PyTorch's kernel rounds it"""
    rows = _ln_rows(x, normalized_shape)
    mean, rstd = kernels.layer_norm_stats(rows, eps)
    g = _ln_rows(g.astype(x.dtype, copy=False), normalized_shape)
    w = weight.reshape(-1).astype(x.dtype, copy=False) if has_weight else None
    return kernels.layer_norm_backward(g, rows, mean, rstd, w).reshape(x.shape)


def _ln_grad_weight(g, x, weight, normalized_shape=(2,), eps=1e-5, has_weight=True, has_bias=True):
    """dw = Σ g ⊙ x̂ over the rows (0 for a weight not given: the output does not read it)"""
    if not has_weight:
        return np.zeros(weight.shape, x.dtype)
    rows = _ln_rows(x, normalized_shape)
    mean, rstd = kernels.layer_norm_stats(rows, eps)
    g = _ln_rows(g.astype(x.dtype, copy=False), normalized_shape)
    return kernels.layer_norm_weight_grad(g, rows, mean, rstd).reshape(weight.shape)


def _ln_grad_bias(g, bias, normalized_shape=(2,), eps=1e-5, has_weight=True, has_bias=True):
    """db = Σ g over the rows (0 for a bias not given)"""
    if not has_bias:
        return np.zeros(bias.shape, bias.dtype)
    return kernels.layer_norm_bias_grad(_ln_rows(g.astype(bias.dtype, copy=False), normalized_shape)) \
        .reshape(bias.shape)


def layer_norm_latex(has_weight=True, has_bias=True):
    """native_layer_norm's ``latex`` with only the weight and bias given written (the kernel's 1 and
    0 in their place are not)."""
    return r"\frac{@0 - \mu}{\sqrt{\sigma^{2} + \epsilon}}" + (r" \odot @1" if has_weight else "") + \
        (" + @2" if has_bias else "")


# LayerNorm: each row normalised over its own elements (BatchNorm normalises each channel over the
# batch); its weight and bias are elementwise, of normalized_shape
op("native_layer_norm", grad_fn="NativeLayerNormBackward0", symbol="LN", forward=_layer_norm,
   vjps=[lambda g, y, x, w, b, **p: _ln_grad_input(g, x, w, **p),
         lambda g, y, x, w, b, **p: _ln_grad_weight(g, x, w, **p),
         lambda g, y, x, w, b, **p: _ln_grad_bias(g, b, **p)],
   uses=["01", "0", ""], latex=layer_norm_latex(),
   latex_of=lambda has_weight=True, has_bias=True, **p: layer_norm_latex(has_weight, has_bias),
   dlatex=[r"\frac{@1}{\sqrt{\sigma^{2} + \epsilon}}\left(I - \tfrac{1}{n} - \tfrac{1}{n}\hat{x}\hat{x}^{T}\right)",
           r"\hat{x}", "1"],
   params={"normalized_shape": (2,)}, function="nn.functional.layer_norm", inputs="layer_norm",
   elementwise=False, saved={"input": 0, "weight": 1, "normalized_shape": "@normalized_shape"})
