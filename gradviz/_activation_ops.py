r"""Op-table entries of the activations tutorials use after ReLU, sigmoid and tanh: LeakyReluBackward0,
EluBackward0 (elu, selu), CeluBackward0, GeluBackward0, SiluBackward0, SoftplusBackward0,
HardtanhBackward0 (hardtanh, relu6), MishBackward0, LogSigmoidBackward0, HardsigmoidBackward0, and the
in-place forms that save their result (LeakyReluBackward1, EluBackward1, CeluBackward1).
Declared with :func:`gradviz._op.op` into the one table, :data:`gradviz.ops.OPS`; the contract of an
entry is written in :mod:`gradviz.ops`.  The numbers are :mod:`gradviz.kernels._activations`' (PyTorch's
kernels, step by step); each parameter is named as PyTorch's node saves it (``_saved_negative_slope``),
so a real PyTorch graph's node is read into the same entry.  The ``dlatex`` are the textbook
derivatives, which the hand derivation evaluates and checks against ``.grad``.
"""

import numpy as np

from . import kernels
from ._op import call, op

__all__ = ["GELU_TANH_LATEX"]



_LEAKY_INPLACE = ("In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
                  "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
                  "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
                  "in-place leakRelu backward calculation with negative slope")
_ELU_INPLACE = ("In-place elu backward calculation is triggered with a negative slope which is not supported. This is "
                "caused by calling in-place forward function with a negative slope, please call out-of-place version "
                "instead.")


def _not_implemented(aten):
    def rule(g, y, *arrays, **params):
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")
    return rule


def _from_result(slope, message):
    """PyTorch's check before a gradient is taken from the result: a negative slope hides the input's sign."""
    if float(slope) < 0:
        raise RuntimeError(message)


def _leaky_from_result(g, y, negative_slope):
    _from_result(negative_slope, _LEAKY_INPLACE)
    return call("leaky_relu_backward", g, y, negative_slope=negative_slope, self_is_result=True)


def _elu_from_result(g, y, alpha, scale, input_scale):
    _from_result(alpha, _ELU_INPLACE)
    return kernels.elu_backward(g, y, alpha, scale, input_scale, is_result=True)


# --- piecewise linear: leaky_relu, hardtanh (relu6), hardsigmoid -----------------------------------------

op("leaky_relu", grad_fn="LeakyReluBackward0", symbol="LeakyReLU", forward=kernels.leaky_relu,
   vjps=[lambda g, y, a, negative_slope=0.01: call("leaky_relu_backward", g, a, negative_slope=negative_slope)],
   uses=["0"],
   latex=r"\max(0, @0) + @negative_slope \min(0, @0)",
   dlatex=[r"\mathbb{1}[@0 > 0] + @negative_slope \mathbb{1}[@0 \le 0]"],
   params={"negative_slope": 0.01}, function="nn.functional.leaky_relu", category="elementwise",
   saved={"self": 0, "negative_slope": "@negative_slope"})
# leaky_relu_(x): the node keeps the result (its sign is the input's for a slope >= 0)
op("leaky_relu_", grad_fn="LeakyReluBackward1", symbol="LeakyReLU", forward=kernels.leaky_relu,
   vjps=[lambda g, y, a, negative_slope=0.01: _leaky_from_result(g, y, negative_slope)], uses=["o"],
   latex=r"\max(0, @0) + @negative_slope \min(0, @0)",
   dlatex=[r"\mathbb{1}[@0 > 0] + @negative_slope \mathbb{1}[@0 \le 0]"],
   params={"negative_slope": 0.01}, function="nn.functional.leaky_relu_", category="elementwise",
   saved={"result": "o", "negative_slope": "@negative_slope"})
op("hardtanh", grad_fn="HardtanhBackward0", symbol="Hardtanh", forward=kernels.hardtanh,
   vjps=[lambda g, y, a, min_val=-1.0, max_val=1.0: call("hardtanh_backward", g, a, min_val=min_val, max_val=max_val)],
   uses=["0"],
   latex=r"\min(\max(@0, @min_val), @max_val)", dlatex=[r"\mathbb{1}[@min_val < @0 < @max_val]"],
   params={"min_val": -1.0, "max_val": 1.0}, function="nn.functional.hardtanh", category="elementwise",
   saved={"self": 0, "min_val": "@min_val", "max_val": "@max_val"})
op("hardsigmoid", grad_fn="HardsigmoidBackward0", symbol="Hardsigmoid", forward=kernels.hardsigmoid,
   vjps=[lambda g, y, a: call("hardsigmoid_backward", g, a)], uses=["0"],
   latex=r"\frac{\min(\max(@0 + 3, 0), 6)}{6}", dlatex=[r"\frac{1}{6} \mathbb{1}[-3 < @0 < 3]"],
   domain=(-2.5, 2.5), function="nn.functional.hardsigmoid", category="elementwise", saved={"self": 0})


# Their gradients are ops of their own in PyTorch, seen under create_graph=True: linear in the incoming
# gradient, constant in the input between kinks (LeakyReluBackwardBackward0, HardtanhBackwardBackward0);
# hardsigmoid's has no derivative in PyTorch (a NotImplemented node that fails when reached)
op("leaky_relu_backward", grad_fn="LeakyReluBackwardBackward0", symbol="∂LeakyReLU",
   forward=lambda g, a, negative_slope=0.01, self_is_result=False: kernels.leaky_relu_backward(g, a, negative_slope),
   vjps=[lambda gg, o, g, a, **p: call("leaky_relu_backward", gg, a, **p), lambda gg, o, g, a, **p: np.zeros_like(gg)],
   uses=["1", "1"], latex=r"@0 (\mathbb{1}[@1 > 0] + @negative_slope \mathbb{1}[@1 \le 0])",
   dlatex=[r"\mathbb{1}[@1 > 0] + @negative_slope \mathbb{1}[@1 \le 0]", "0"], params={"negative_slope": 0.01},
   inputs="binary", in_rules=True, saved={"self": 1, "negative_slope": "@negative_slope"})
op("hardtanh_backward", grad_fn="HardtanhBackwardBackward0", symbol="∂Hardtanh",
   forward=lambda g, a, min_val=-1.0, max_val=1.0: kernels.hardtanh_backward(g, a, min_val, max_val),
   vjps=[lambda gg, o, g, a, **p: call("hardtanh_backward", gg, a, **p), lambda gg, o, g, a, **p: np.zeros_like(gg)],
   uses=["1", "1"], latex=r"@0 \mathbb{1}[@min_val < @1 < @max_val]", dlatex=[r"\mathbb{1}[@min_val < @1 < @max_val]", "0"],
   params={"min_val": -1.0, "max_val": 1.0}, inputs="binary", in_rules=True,
   saved={"self": 1, "min_val": "@min_val", "max_val": "@max_val"})
op("hardsigmoid_backward", grad_fn="NotImplemented", symbol="∂Hardsigmoid", forward=kernels.hardsigmoid_backward,
   vjps=[_not_implemented("hardsigmoid_backward")] * 2, uses=["", ""],
   latex=r"\frac{@0}{6} \mathbb{1}[-3 < @1 < 3]", dlatex=["?", "?"], domain=(-2.5, 2.5), inputs="binary", in_rules=True)


# --- exponentials: elu (selu), celu, softplus, silu, mish, log_sigmoid -------------------------------------

# (written with indicators, so the derivation reads them as maths; a parameter that is 1 is left out)
_ELU = r"@scale (@0 \mathbb{1}[@0 > 0] + @alpha (e^{@input_scale @0} - 1) \mathbb{1}[@0 \le 0])"
_ELU_D = r"@scale (\mathbb{1}[@0 > 0] + @alpha @input_scale e^{@input_scale @0} \mathbb{1}[@0 \le 0])"
_ELU_SAVED = {"alpha": "@alpha", "scale": "@scale", "input_scale": "@input_scale"}

op("elu", grad_fn="EluBackward0", symbol="ELU", forward=kernels.elu,
   vjps=[lambda g, y, a, alpha=1.0, scale=1, input_scale=1: kernels.elu_backward(g, a, alpha, scale, input_scale)],
   uses=["0"], latex=_ELU, dlatex=[_ELU_D], params={"alpha": 1.0, "scale": 1, "input_scale": 1},
   function="nn.functional.elu", category="elementwise", saved={"self": 0, **_ELU_SAVED})
# elu_(x): from the result y, e^{x} = (y + α·scale) / (α·scale), so the gradient needs no input
op("elu_", grad_fn="EluBackward1", symbol="ELU", forward=kernels.elu,
   vjps=[lambda g, y, a, alpha=1.0, scale=1, input_scale=1: _elu_from_result(g, y, alpha, scale, input_scale)],
   uses=["o"], latex=_ELU, dlatex=[_ELU_D], params={"alpha": 1.0, "scale": 1, "input_scale": 1},
   function="nn.functional.elu_", category="elementwise", saved={"result": "o", **_ELU_SAVED})


def _celu(a, alpha=1.0):
    """max(0, x) + min(0, α(e^{x/α} − 1)): elu with input_scale 1/α (1/α in double)"""
    return kernels.elu(a, alpha, 1.0, 1.0 / float(alpha))


def _celu_vjp(g, x, alpha, is_result=False):
    """PyTorch's CeluBackward: elu_backward with input_scale 1.0 / alpha.toFloat() (α rounded to float first)"""
    if is_result:
        return _elu_from_result(g, x, alpha, 1.0, 1.0 / float(np.float32(alpha)))
    return kernels.elu_backward(g, x, alpha, 1.0, 1.0 / float(np.float32(alpha)))


_CELU = r"@0 \mathbb{1}[@0 > 0] + @alpha (e^{@0 / @alpha} - 1) \mathbb{1}[@0 \le 0]"
_CELU_D = r"\mathbb{1}[@0 > 0] + e^{@0 / @alpha} \mathbb{1}[@0 \le 0]"
op("celu", grad_fn="CeluBackward0", symbol="CELU", forward=_celu,
   vjps=[lambda g, y, a, alpha=1.0: _celu_vjp(g, a, alpha)], uses=["0"], latex=_CELU, dlatex=[_CELU_D],
   params={"alpha": 1.0}, function="celu", category="elementwise", saved={"self": 0, "alpha": "@alpha"})
op("celu_", grad_fn="CeluBackward1", symbol="CELU", forward=_celu,
   vjps=[lambda g, y, a, alpha=1.0: _celu_vjp(g, y, alpha, is_result=True)], uses=["o"], latex=_CELU,
   dlatex=[_CELU_D], params={"alpha": 1.0}, function="celu_", category="elementwise",
   saved={"result": "o", "alpha": "@alpha"})

op("softplus", grad_fn="SoftplusBackward0", symbol="Softplus", forward=kernels.softplus,
   vjps=[lambda g, y, a, beta=1, threshold=20: kernels.softplus_backward(g, a, beta, threshold)], uses=["0"],
   latex=r"\frac{1}{@beta} \ln(1 + e^{@beta @0})", dlatex=[r"\sigma(@beta @0)"],
   params={"beta": 1, "threshold": 20}, function="nn.functional.softplus", category="elementwise",
   saved={"self": 0, "beta": "@beta", "threshold": "@threshold"})
op("silu", grad_fn="SiluBackward0", symbol="SiLU", forward=kernels.silu,
   vjps=[lambda g, y, a: kernels.silu_backward(g, a)], uses=["0"],
   latex=r"@0 \sigma(@0)", dlatex=[r"\sigma(@0) (1 + @0 (1 - \sigma(@0)))"],
   function="nn.functional.silu", category="elementwise", saved={"self": 0})
op("mish", grad_fn="MishBackward0", symbol="Mish", forward=kernels.mish,
   vjps=[lambda g, y, a: kernels.mish_backward(g, a)], uses=["0"],
   latex=r"@0 \tanh(\ln(1 + e^{@0}))",
   dlatex=[r"\tanh(\ln(1 + e^{@0})) + @0 \sigma(@0) (1 - \tanh^{2}(\ln(1 + e^{@0})))"],
   function="nn.functional.mish", category="elementwise", saved={"self": 0})
op("log_sigmoid", grad_fn="LogSigmoidBackward0", symbol="LogSigmoid",
   forward=lambda a: kernels.log_sigmoid(a)[0],
   # (the forward's buffer e^{−|x|}, which PyTorch keeps beside x, made again: the same bits)
   vjps=[lambda g, y, a: kernels.log_sigmoid_backward(g, a, kernels.log_sigmoid(a)[1])], uses=["0"],
   latex=r"\ln \sigma(@0)", dlatex=[r"1 - \sigma(@0)"],
   function="nn.functional.logsigmoid", category="elementwise", saved={"self": 0})


# --- gelu: x·Φ(x), or its tanh approximation ---------------------------------------------------------------

# √(2/π)(x + 0.044715x³), the tanh form's argument, and its derivative's factor √(2/π)(1 + 3·0.044715x²)
_U = r"\sqrt{\frac{2}{\pi}} (@0 + 0.044715 @0^{3})"
GELU_TANH_LATEX = (rf"\frac{{1}}{{2}} @0 (1 + \tanh({_U}))",
                   rf"\frac{{1}}{{2}} (1 + \tanh({_U})) + \frac{{1}}{{2}} @0 (1 - \tanh^{{2}}({_U})) "
                   r"\sqrt{\frac{2}{\pi}} (1 + 0.134145 @0^{2})")


op("gelu", grad_fn="GeluBackward0", symbol="GELU", forward=kernels.gelu,
   vjps=[lambda g, y, a, approximate="none": kernels.gelu_backward(g, a, approximate)], uses=["0"],
   latex=r"@0 \Phi(@0)",
   dlatex=[r"\frac{1}{2} (1 + \operatorname{erf}\frac{@0}{\sqrt{2}}) + \frac{@0}{\sqrt{2 \pi}} e^{-\frac{@0^{2}}{2}}"],
   params={"approximate": "none"}, function="nn.functional.gelu", category="elementwise",
   saved={"self": 0, "approximate": "@approximate"})
# approximate='tanh': the same node (GeluBackward0), written with the formula it computes
op("gelu_tanh", grad_fn="GeluBackward0", symbol="GELU", forward=kernels.gelu,
   vjps=[lambda g, y, a, approximate="tanh": kernels.gelu_backward(g, a, approximate)], uses=["0"],
   latex=GELU_TANH_LATEX[0], dlatex=[GELU_TANH_LATEX[1]],
   params={"approximate": "tanh"}, function="nn.functional.gelu", category="elementwise",
   saved={"self": 0, "approximate": "@approximate"})

