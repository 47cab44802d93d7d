"""gradviz: a small numpy autograd that behaves like PyTorch, drawn and animated for teaching.

>>> import gradviz as torch
>>> x = torch.ones(2, requires_grad=True)
>>> o = 0.5 * torch.sum(5 * (x + 1) ** 2)
>>> o.backward(); x.grad
tensor([10., 10.])

This module only gathers the public names (``import gradviz as torch`` finds them where PyTorch
has them); each lives in the module named for its concern (README, "Layout").  The drawing and
widget layers (``gradviz.draw``, ``gradviz.animate``) load only when used.
"""

import builtins as _builtins
import importlib as _importlib
from types import ModuleType as _ModuleType

from . import autograd, ops, random
from ._creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, logspace,
                        bernoulli, multinomial, normal, ones, ones_like, rand, rand_like, randint, randint_like, randn,
                        randn_like, randperm, tensor, tril_indices, triu_indices, zeros, zeros_like)
from ._composites import meshgrid
from ._dtype import (bool, dtype, finfo, float16, float32, float64, get_default_dtype, iinfo, int8, int16, int32, int64,
                     set_default_dtype, uint8)
from .autograd.engine import apply
from ._activation_functions import celu, celu_, selu, selu_
from ._format import get_printoptions, printoptions, set_printoptions
from ._matmul_and_joins import cat, concat, concatenate, ger, hstack, outer, stack, vstack
# gradviz.exp(x) for x.exp(), made from the op table on first use (__getattr__ below); chunk, matmul,
# split, unbind and where among them (they take out=)
from . import _table_functions
from ._table_functions import is_tensor
from ._types import Size, device, layout, return_types, strided
from .kernels import get_num_threads, set_num_threads
from .autograd import (Variable, enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                       set_grad_enabled)
# Imported here, not lazily: loading the submodule first binds ``gradviz.gradcheck`` to the module,
# and this import then binds the name to the function for good (later imports find the module loaded).
from .gradcheck import gradcheck
from .random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed,
                     set_rng_state)
from .tensor import Tensor
# nn, optim, linalg and utils (and optim.lr_scheduler, utils.data, save/load) load on first use,
# through module __getattr__s, so that ``import gradviz`` stays light (issue 16); ``torch.nn.Linear``
# after ``import gradviz as torch`` works as in PyTorch.  _lazy's finder makes ``import
# torch.optim.lr_scheduler``, with gradviz imported as torch, give the very module
# gradviz.optim.lr_scheduler (not a second copy of its file).
from . import _lazy  # noqa: E402,I001
_lazy.install()

__version__ = "0.1.0"

float = float32          # noqa: A001 -- torch.float
double = float64
half = float16
long = int64
int = int32              # noqa: A001 -- torch.int
short = int16
contiguous_format, preserve_format = "contiguous_format", "preserve_format"   # memory formats


# Names whose module loads the first time one of them is read (issue 16): the legacy constructors
# (FloatTensor...) and the accelerators gradviz does not have (cuda, accelerator, backends); then
# an ordinary attribute.
_ON_FIRST_USE = {**dict.fromkeys(("BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "IntTensor",
                                  "LongTensor", "ShortTensor"), "_legacy"),
                 **dict.fromkeys(("accelerator", "backends", "cuda"), "_devices")}


def __getattr__(name):
    # The drawing and widget layers import graphviz/anywidget: load them only when asked for.
    # (importlib, not ``from . import x``: that form asks this very __getattr__ first, forever)
    if name in _table_functions.NAMES:
        value = globals()[name] = _table_functions.function(name)
        return value
    if name in _ON_FIRST_USE:
        value = globals()[name] = getattr(_lazy.submodule(__name__, _ON_FIRST_USE[name]), name)
        return value
    if name in ("draw", "Graph", "build_graph"):
        return getattr(_importlib.import_module(__name__ + ".drawing"), name)
    if name in ("animate", "AutogradWidget", "practice"):
        return getattr(_importlib.import_module(__name__ + ".widget"), name)
    if name == "trace":
        return _importlib.import_module(__name__ + ".trace")
    if name in ("save", "load"):   # torch.save / torch.load (pickle, zipfile: on first use)
        return getattr(_lazy.submodule(__name__, "serialization"), name)
    if name in ("linalg", "nn", "optim", "utils"):     # torch.nn, torch.optim...: loaded on first use
        return _lazy.submodule(__name__, name)
    if name == "cosine_similarity":   # torch.* names whose home is torch.nn.functional
        return getattr(_lazy.submodule(__name__, "nn").functional, name)
    if name == "serialization":
        return _lazy.submodule(__name__, name)
    if name == "watch":      # with gradviz.watch(): ... -- a real PyTorch forward pass, its values kept
        return _importlib.import_module(__name__ + ".trace.torch_watch").watch
    raise AttributeError(f"module 'gradviz' has no attribute '{name}'")


def __dir__():
    # torch.<Tab> in Jupyter lists nn, optim... before their first use, as PyTorch's does
    return sorted(set(globals()) | {"linalg", "nn", "optim", "utils"} | set(_ON_FIRST_USE) | _table_functions.NAMES)


# The public API: every name above that does not start with "_", but for modules other than
# autograd and for names that would hide Python's own (float, int, max, sum...) after
# ``from gradviz import *``.  The lazy names of __getattr__ (draw, animate, trace...)
# are public too but stay out: a star import must not load the drawing layer, nor fail without it.
__all__ = sorted(n for n, v in globals().items()
                 if not n.startswith("_") and not hasattr(_builtins, n)
                 and (not isinstance(v, _ModuleType) or n == "autograd")) + ["load", "save", *_ON_FIRST_USE]
__all__ += [n for n in _table_functions.NAMES if n not in __all__ and not hasattr(_builtins, n)]
__all__.sort()
