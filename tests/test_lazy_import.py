"""``import gradviz`` loads what a plain autograd session needs (issue 16: under 100 ms); PyTorch's
other import paths load on first use and are the same module objects whichever way they are
reached, also when gradviz is imported under torch's name (the conformance shim).  No timings
here: benchmarks/core.py measures the import."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAZY = ("gradviz.serialization", "gradviz.optim.lr_scheduler", "gradviz.utils.data", "gradviz.drawing",
        "gradviz.widget", "gradviz.trace", "zipfile",   # (pickle: numpy imports it)
        "gradviz.nn", "gradviz.optim", "gradviz.linalg", "gradviz.utils", "gradviz.autograd.functional",
        "gradviz.autograd.graph", "gradviz.autograd.function", "gradviz.autograd.double_backward",
        "gradviz._recorded",
        # kernels a first lesson does not reach (kernels.ON_FIRST_USE): norms, LayerNorm, LAPACK, two losses
        "gradviz.kernels._norms", "gradviz.kernels._layer_norm", "gradviz.kernels._lapack", "gradviz.kernels._losses",
        "gradviz.kernels._onednn", "gradviz.kernels._sleef_hyperbolic",      # (gelu's, elu's and mish's)
        # the legacy constructors (FloatTensor...) and the accelerators gradviz has not (cuda, backends...)
        "gradviz._legacy", "gradviz._devices")


def run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_gradviz_leaves_the_rest_for_first_use():
    loaded = run("import sys, gradviz; print(' '.join(sorted(sys.modules)))").split()
    assert not [m for m in LAZY if m in loaded]


def test_torch_nn_and_the_rest_are_attributes_as_in_torch():
    """``import torch`` loads torch.nn, optim, linalg, utils; gradviz loads them on first use, and
    every way of reaching them gives the one module object."""
    assert run("""
import gradviz as torch
listed = 'nn' in dir(torch) and 'optim' in dir(torch) and 'functional' in dir(torch.autograd)
a = torch.nn.Linear
from gradviz import nn, optim, linalg, utils
import gradviz.nn.functional as F
from gradviz.nn import functional
from gradviz.autograd.functional import jacobian
import gradviz.autograd.graph
from gradviz.autograd import Function
from gradviz.autograd.function import FunctionCtx, once_differentiable
print(a is nn.Linear, F is functional is torch.nn.functional, optim.SGD.__name__, linalg.norm.__name__,
      utils.hooks.__name__, jacobian is torch.autograd.functional.jacobian,
      torch.autograd.graph.__name__, listed,
      Function is torch.autograd.Function is torch.autograd.function.Function, FunctionCtx is torch.autograd.FunctionCtx,
      'Function' in dir(torch.autograd) and 'function' in dir(torch.autograd))
""") == "True True SGD norm gradviz.utils.hooks True gradviz.autograd.graph True True True True"


# Standard-library and third-party modules that ``import gradviz`` must not load beyond what numpy's
# own import loads (they cost milliseconds each, or spawn processes: ctypes.util.find_library).
HEAVY = ("pathlib", "tempfile", "shutil", "importlib.abc", "importlib.resources", "importlib.util", "glob", "subprocess",
         "ctypes.util", "zipfile", "dataclasses", "urllib.parse", "ipaddress", "email", "http", "json", "random", "bz2", "lzma", "copy",
         "hypothesis", "graphviz", "anywidget", "traitlets", "ipywidgets", "IPython", "torch", "html", "xml")


def test_import_gradviz_loads_no_heavy_module_numpy_did_not():
    added = set(run("""
import sys
import numpy
before = set(sys.modules)
import gradviz
print(' '.join(sorted(set(sys.modules) - before)))
""").split())
    assert not [m for m in HEAVY if m in added or any(a.startswith(m + ".") for a in added)], sorted(added)


def test_import_gradviz_loads_no_native_library():
    """MKL (the ``exact`` extra, found through ctypes, with its OpenMP) loads on the first kernel call
    that needs it, not at import: ``kernels._mkl.library()`` has not run, and no MKL is mapped."""
    assert run("""
import sys
import gradviz
from gradviz.kernels import _mkl
maps = open('/proc/self/maps').read() if sys.platform.startswith('linux') else ''
print(_mkl.library.cache_info().misses, 'libmkl' in maps, 'libgomp' in maps)
""") == "0 False False"


def test_kernels_on_first_use_are_the_very_functions():
    """``kernels.solve``... load their module when first read and are then its own functions; the
    op table's linalg entries reach LAPACK through them."""
    assert run("""
import sys, gradviz
from gradviz import kernels
before = 'gradviz.kernels._lapack' in sys.modules
solve = kernels.solve
from gradviz.kernels import _lapack, layer_norm
from gradviz.kernels._layer_norm import layer_norm as own
print(before, solve is _lapack.solve, layer_norm is own, kernels.norm.__name__, 'huber' in dir(kernels),
      float(gradviz.tensor([[2., 0.], [0., 4.]]).det()), gradviz.tensor([[2., 0.], [0., 4.]]).inverse().tolist())
try:
    kernels.nothing
except AttributeError as e:
    print(e)
""") == ("False True True vector_norm True 8.0 [[0.5, 0.0], [0.0, 0.25]]\n"
         "module 'gradviz.kernels' has no attribute 'nothing'")


def test_names_on_first_use_are_the_very_objects():
    """FloatTensor, cuda, backends...: read through the package face's __getattr__ once, then
    ordinary attributes, in ``dir`` and ``__all__`` from the start, as in PyTorch."""
    assert run("""
import sys, gradviz as torch
listed = all(n in dir(torch) and n in torch.__all__ for n in ('FloatTensor', 'LongTensor', 'cuda', 'backends', 'accelerator'))
loaded = 'gradviz._legacy' in sys.modules or 'gradviz._devices' in sys.modules
from gradviz import FloatTensor
x = torch.tensor([1., 2.])
torch.backends.cudnn.deterministic = True
print(listed, loaded, FloatTensor is torch.FloatTensor is sys.modules['gradviz._legacy'].FloatTensor,
      isinstance(x, torch.FloatTensor), isinstance(x, torch.LongTensor), torch.cuda.is_available(),
      torch.backends.cudnn.deterministic, torch.cuda is sys.modules['gradviz._devices'].cuda, x.type(torch.DoubleTensor).dtype)
""") == "True False True True False False True True gradviz.float64"


def test_torch_functions_are_made_on_first_use():
    """gradviz.exp, gradviz.matmul...: named at import (dir, __all__), each made the first time it is
    read and the very same function after; numpy's keyword names and out= as before."""
    assert run("""
import gradviz as torch
from gradviz import _table_functions as table
made_at_import = len(table.FUNCTIONS)
f = torch.exp
out = torch.empty(2)
torch.matmul(torch.eye(2), torch.ones(2), out=out)
print(made_at_import, f is torch.exp is table.function('exp'), 'exp' in dir(torch) and 'exp' in torch.__all__,
      sorted(table.FUNCTIONS), torch.sum(torch.ones(2, 3), axis=1).tolist(), out.tolist())
""") == "0 True True ['exp', 'matmul'] [3.0, 3.0] [1.0, 1.0]"


def test_lazy_paths_are_one_module_each_way():
    assert run("""
import gradviz
import gradviz.optim.lr_scheduler as a
from gradviz.optim import lr_scheduler as b
import gradviz.utils.data as d
print(a is b is gradviz.optim.lr_scheduler, d is gradviz.utils.data, gradviz.utils.data.DataLoader.__module__,
      gradviz.save is gradviz.serialization.save, gradviz.load.__module__, 'save' in gradviz.__all__)
""") == "True True gradviz.utils.data.dataloader True gradviz.serialization True"


def test_lazy_attributes_load_on_use():
    assert run("""
import sys, gradviz
s = gradviz.optim.lr_scheduler.StepLR
print('gradviz.optim.lr_scheduler' in sys.modules, 'gradviz.serialization' in sys.modules)
""") == "True False"


def test_under_torchs_name_every_path_is_gradvizs_module():
    """What the conformance shim does: sys.modules['torch'] is gradviz and its loaded modules are
    aliased; a submodule first imported later through torch.* is gradviz's own, not a second copy."""
    assert run("""
import sys, gradviz
sys.modules['torch'] = gradviz
for name in list(sys.modules):
    if name.startswith('gradviz.'):
        sys.modules['torch.' + name[len('gradviz.'):]] = sys.modules[name]
import torch.optim.lr_scheduler
from torch.utils.data import DataLoader
import torch.serialization
from torch.autograd.function import Function
print(torch.optim.lr_scheduler is sys.modules['gradviz.optim.lr_scheduler'],
      torch.optim.lr_scheduler.__spec__.name, DataLoader is gradviz.utils.data.DataLoader,
      sys.modules['torch.serialization'] is gradviz.serialization,
      sys.modules['torch.autograd.function'] is gradviz.autograd.function and Function is gradviz.autograd.Function)
""") == "True gradviz.optim.lr_scheduler True True True"


def test_other_packages_are_untouched():
    assert run("import gradviz, json.decoder, email.mime.text; print(json.decoder.__name__)") == "json.decoder"
