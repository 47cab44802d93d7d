"""gradviz: a small numpy autograd that behaves like PyTorch, drawn and animated for teaching.

>>> import gradviz as torch
>>> x = torch.ones(2, requires_grad=True)
>>> o = 0.5 * torch.sum(5 * (x + 1) ** 2)
>>> o.backward(); x.grad
tensor([10., 10.])

The drawing and widget layers (``gradviz.draw``, ``gradviz.animate``) load only when used.
"""

import builtins as _builtins
import math as _math

import numpy as _np

from . import _dtype, _numerics, _random, autograd, ops
from ._dtype import (bool, dtype, float16, float32, float64, get_default_dtype, int8, int16, int32, int64,
                     set_default_dtype, uint8)
from ._format import get_printoptions, printoptions, set_printoptions
from .autograd import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                       set_grad_enabled)
from .tensor import device, layout, strided  # noqa: E402,F401
from .tensor import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, ShortTensor, FloatTensor, IntTensor, LongTensor, Size,
                     Tensor, _filled, _finish, _new_shape, _shape_args, apply, matmul, return_types, tensor,
                     where)

__version__ = "0.1.0"

float = float32          # noqa: A001 -- torch.float
double = float64
half = float16
long = int64
int = int32              # noqa: A001 -- torch.int
short = int16

_D = _dtype
contiguous_format, preserve_format = "contiguous_format", "preserve_format"   # memory formats


def _new(array, dtype, requires_grad):
    dt = _D.as_dtype(dtype)
    if dt is not None:
        array = array.astype(dt.np, copy=False)
    return _finish(Tensor._wrap(array), requires_grad)


def _size(args, size, fn):
    """The shape from ``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))``."""
    return _new_shape(args if size is None else (size,), fn)


# --- creation -----------------------------------------------------------------------------------

def ones(*args, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))``."""
    return _filled(_size(args, size, "ones"), 1.0, dtype or get_default_dtype(), requires_grad)


def zeros(*args, size=None, dtype=None, device=None, requires_grad=False):
    return _filled(_size(args, size, "zeros"), 0.0, dtype or get_default_dtype(), requires_grad)


def empty(*args, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor of the given shape, its values unset (gradviz fills it with zeros)."""
    return _filled(_size(args, size, "empty"), 0.0, dtype or get_default_dtype(), requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    """``full((2, 3), 3)`` is int64 and ``full((2, 3), 3.)`` float32, as in PyTorch 2."""
    return _filled(_new_shape((size,), "full"), fill_value, dtype, requires_grad)


def ones_like(t, dtype=None, requires_grad=False):
    return _filled(t.shape, 1, dtype or t.dtype, requires_grad)


def zeros_like(t, dtype=None, requires_grad=False):
    return _filled(t.shape, 0, dtype or t.dtype, requires_grad)


empty_like = zeros_like


def full_like(t, fill_value, dtype=None, requires_grad=False):
    return _filled(t.shape, fill_value, dtype or t.dtype, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """``arange(5)`` is int64 ``[0, 1, 2, 3, 4]``; any float argument makes it float32."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    ints = _builtins.all(isinstance(v, (_builtins.int, _np.integer)) for v in (start, end, step))
    default = int64 if ints else get_default_dtype()
    n = _builtins.max(0, _math.ceil((end - start) / step))
    dt = _D.as_dtype(dtype) or default
    idx = _np.arange(n, dtype=_np.float64)
    if ints or not dt.is_floating_point:
        return _new((start + step * idx).astype(dt.np), None, requires_grad)
    # PyTorch's kernel: whole AVX2 vectors (8 floats, 4 doubles; two at a time) start from
    # start + step * first and count up within the vector; the rest is start + step * i.
    # Each product-plus-sum is one fused multiply-add in double.
    lanes = 8 if dt is float32 else 4
    vec = n // (2 * lanes) * 2 * lanes
    first = idx[:vec] - idx[:vec] % lanes
    base = _numerics.fma(first, step, start, _np.float64).astype(dt.np).astype(_np.float64)
    head = _numerics.fma(idx[:vec] % lanes, step, base, _np.float64)
    a = _np.concatenate((head, _numerics.fma(idx[vec:], step, start, _np.float64)))
    return _new(a.astype(dt.np), None, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end``, rounded exactly as PyTorch rounds.

    PyTorch counts the first half up from ``start`` and the second half down from ``end``,
    each value one fused multiply-add in the tensor's precision.
    """
    dt = _D.as_dtype(dtype) or get_default_dtype()
    acc = dt.np if dt.is_floating_point and dt is not float16 else _np.dtype(_np.float64)
    lo, hi = (acc.type(start), acc.type(end)) if dt.is_floating_point else \
        (acc.type(_builtins.int(start)), acc.type(_builtins.int(end)))
    idx = _np.arange(steps)
    if steps == 1:
        a = _np.array([lo])
    else:
        step = (hi - lo) / acc.type(steps - 1)
        first = _numerics.fma(idx[:steps // 2].astype(acc), step, lo, acc)
        second = _numerics.fma((steps - 1 - idx[steps // 2:]).astype(acc), -step, hi, acc)
        a = _np.concatenate((first, second))
    return _new(a.astype(dt.np), None, requires_grad)


def logspace(start, end, steps, base=10.0, dtype=None, device=None, requires_grad=False):
    """``base ** linspace(start, end, steps)``: the exponents as linspace counts them, the power in double."""
    dt = _D.as_dtype(dtype) or get_default_dtype()
    exponents = linspace(start, end, steps, dtype=dt if dt.is_floating_point else float64)._data
    return _new(_np.power(_builtins.float(base), exponents.astype(_np.float64)).astype(dt.np), None, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    return _new(_np.eye(n, m, dtype=(_D.as_dtype(dtype) or get_default_dtype()).np), None, requires_grad)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtype):
        return data
    return tensor(data, dtype=dtype)


def from_numpy(a):
    """A tensor sharing memory with the numpy array ``a``."""
    _D.from_numpy_dtype(a.dtype)
    return Tensor._wrap(a)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(t):
    return t.numel()


# --- random -------------------------------------------------------------------------------------

from .random import (Generator, default_generator, get_rng_state, initial_seed,  # noqa: E402
                      manual_seed, seed, set_rng_state)


def _random_dtype(dtype, kernel):
    dt = _D.as_dtype(dtype) or get_default_dtype()
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_D.TYPE_NAMES[dt.name]}\'')
    return dt


def rand(*args, size=None, dtype=None, generator=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1): after ``manual_seed(s)``, the very numbers PyTorch gives."""
    dt = _random_dtype(dtype, "check_uniform_bounds")
    return _new(_random.rand(_size(args, size, "rand"), dt.np, generator), None, requires_grad)


def randn(*args, size=None, dtype=None, generator=None, device=None, requires_grad=False):
    """Standard normal samples: after ``manual_seed(s)``, the very numbers PyTorch gives."""
    dt = _random_dtype(dtype, "normal_kernel_cpu")
    return _new(_random.randn(_size(args, size, "randn"), dt.np, generator), None, requires_grad)


def rand_like(t, dtype=None, requires_grad=False, generator=None):
    return rand(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, generator=generator)


def randn_like(t, dtype=None, requires_grad=False, generator=None):
    return randn(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, generator=generator)


def randint(low, high=None, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers in [low, high): ``randint(10, (3,))`` or ``randint(3, 10, (2, 2))``; int64."""
    if size is None:
        low, high, size = 0, low, high
    return _new(_random.randint(low, high, _shape_args((size,)), generator), dtype, requires_grad)


def randint_like(t, low, high=None, dtype=None, requires_grad=False, generator=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, t.shape, generator=generator, dtype=dtype or t.dtype,
                   requires_grad=requires_grad)


def randperm(n, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of ``0 .. n-1`` (int64)."""
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return _new(_random.randperm(n, generator), dtype, requires_grad)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from each row of ``input`` (non-negative weights): PyTorch's draws after ``manual_seed``."""
    return input.multinomial(num_samples, replacement, generator=generator)


def normal(mean, std=1.0, size=None, generator=None, dtype=None, requires_grad=False):
    """Normal samples: ``normal(0., 1., (3,))``, or with a tensor of means or of stds."""
    if size is not None:
        dt = _random_dtype(dtype, "normal_kernel_cpu")
        out = _random.randn(_shape_args((size,)), dt.np, generator, _builtins.float(mean), _builtins.float(std))
        return _new(out, None, requires_grad)
    ref = mean if isinstance(mean, Tensor) else std
    z = _random.randn(ref.shape, ref.dtype.np, generator)
    m = mean._data if isinstance(mean, Tensor) else mean
    s = std._data if isinstance(std, Tensor) else std
    return _new((z * s + m).astype(ref.dtype.np), None, requires_grad)


# --- functions that mirror Tensor methods (torch.sum(y), torch.exp(x), ...) ---------------------

def _method(name):
    def fn(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            input = tensor(input)
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``gradviz.{name}(t, ...)`` is ``t.{name}(...)``."
    return fn


def _functions():
    """``gradviz.exp(x)`` for ``x.exp()``: every op the table marks as a function, and the methods
    below, which are not table entries (composites, comparisons, and what records no gradient)."""
    names = [n for op in ops.OPS.values() if op.function is True for n in (op.method, *op.aliases)]
    return names + ("true_divide floor_divide remainder fmod amax amin argmax argmin argsort chunk flatten "
                    "square isnan isinf isfinite nonzero any all detach numel allclose equal isclose "
                    "eq ne lt le gt ge is_floating_point logical_not logical_and logical_or").split()


for _name in _functions():
    if _name not in globals():    # a function written out (where, matmul...) is the one kept
        globals()[_name] = _method(_name)


def outer(input, vec2):
    """The outer product: ``input`` as a column times ``vec2`` (a view and a product, as in PyTorch)."""
    return input.reshape(-1, 1) * vec2


ger = outer


def cat(tensors, dim=0):
    """Join tensors along an existing dimension."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    nd = tensors[0].ndim
    for t in tensors[1:]:
        if t.ndim != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {t.ndim}")
    d = _dims(dim, nd)[0]
    try:
        return apply(ops.OPS["cat"], tuple(tensors), dim=d)
    except ValueError:
        raise RuntimeError("Sizes of tensors must match except in dimension " + str(d)) from None


concat = concatenate = cat


def hstack(tensors):
    """Join side by side: along dim 1, or dim 0 for vectors."""
    tensors = list(tensors)
    return cat(tensors, 0 if _builtins.all(t.ndim == 1 for t in tensors) else 1)


def vstack(tensors):
    """Join one below the other: vectors become rows first (an UnsqueezeBackward0 each)."""
    return cat([t.unsqueeze(0) if t.ndim == 1 else t for t in tensors], 0)


def stack(tensors, dim=0):
    """Join tensors along a new dimension."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} "
                               f"at entry 0 and {list(t.shape)} at entry {i}")
    d = _dims(dim, tensors[0].ndim + 1)[0]
    return apply(ops.OPS["stack"], tuple(tensors), dim=d)



from .tensor import _dims, _literal  # noqa: E402
from .autograd import Variable  # noqa: E402,F401
# Imported here, not lazily: loading the submodule first binds ``gradviz.gradcheck`` to the module,
# and this import then binds the name to the function for good (later imports find the module loaded).
from .gradcheck import gradcheck  # noqa: E402
# Loaded with the package, as PyTorch loads them: ``import torch.nn`` must find the very module
# ``torch.nn`` names (a lazy import would let the shim's ``torch.nn`` become a second copy).
from . import nn, optim  # noqa: E402
from . import autograd_functional  # noqa: E402
autograd.functional = autograd_functional   # torch.autograd.functional.jacobian


def __getattr__(name):
    # The drawing and widget layers import graphviz/anywidget: load them only when asked for.
    # (importlib, not ``from . import x``: that form asks this very __getattr__ first, forever)
    import importlib
    if name in ("draw", "Graph", "build_graph"):
        return getattr(importlib.import_module(__name__ + ".draw"), name)
    if name in ("animate", "AutogradWidget"):
        return getattr(importlib.import_module(__name__ + ".widget"), name)
    if name == "trace":
        return importlib.import_module(__name__ + ".trace")
    if name == "watch":      # with gradviz.watch(): ... -- a real PyTorch forward pass, its values kept
        return importlib.import_module(__name__ + "._watch").watch
    raise AttributeError(f"module 'gradviz' has no attribute '{name}'")


class cuda:
    """``torch.cuda``: gradviz has no GPU, so tutorials take their CPU branch."""

    @staticmethod
    def is_available():
        return False

    @staticmethod
    def device_count():
        return 0


# The public API: every name above that does not start with "_", but for modules other than
# autograd and for names that would hide Python's own (float, int, max, sum...) after
# ``from gradviz import *``.  The lazy names of __getattr__ (draw, animate, trace...)
# are public too but stay out: a star import must not load the drawing layer, nor fail without it.
__all__ = sorted(n for n, v in globals().items()
                 if not n.startswith("_") and not hasattr(_builtins, n)
                 and (not isinstance(v, type(_math)) or n == "autograd"))
