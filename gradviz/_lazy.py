"""Submodules loaded on first use, and the same module object under any name the package goes by.

``import gradviz`` loads what a plain autograd session needs; PyTorch's other import paths
(``torch.optim.lr_scheduler``, ``torch.utils.data``, ``torch.save``/``torch.load``) load when first
touched, through a module ``__getattr__`` (:func:`submodule`).  When gradviz stands in for torch
under another name (``sys.modules["torch"] = gradviz``, as the conformance shim and some course
set-ups do), ``import torch.optim.lr_scheduler`` would otherwise find the file through the alias and
run it a second time as a new module; :class:`_SameModule` hands back gradviz's own instead.

>>> import gradviz
>>> submodule("gradviz.optim", "lr_scheduler") is gradviz.optim.lr_scheduler
True
"""

import importlib
import importlib.machinery
import sys

__all__ = ["submodule", "install"]


def submodule(package, name):
    """``package.name``, imported the first time it is asked for (a module ``__getattr__``'s body)."""
    return importlib.import_module(f"{package}.{name}")


class _Alias:
    """Loads ``alias.x`` as the already importable ``gradviz...x``: the very module object.

    (A loader and a finder are protocols: ``importlib.abc``'s base classes would add nothing used
    here, and importing that module loads ``importlib.resources``, ``tempfile`` and ``shutil``;
    ``importlib.util`` costs a millisecond of ``import gradviz`` too, ``importlib.machinery`` is
    loaded by Python's start-up already.)"""

    def __init__(self, real):
        self.real = real
        self.spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.real)
        self.spec = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self.spec      # the import system set the alias's spec: put gradviz's back


class _SameModule:
    """A finder for ``alias.x`` where ``sys.modules["alias"]`` is a gradviz package imported under
    another name: the submodule is gradviz's own, never a second copy of its file."""

    def find_spec(self, fullname, path=None, target=None):
        parent, _, child = fullname.rpartition(".")
        if not parent:
            return None
        package = sys.modules.get(parent)
        real, path = getattr(package, "__name__", None), getattr(package, "__path__", None)
        if real is None or path is None or real == parent or real.split(".")[0] != __name__.split(".")[0]:
            return None
        if importlib.machinery.PathFinder.find_spec(f"{real}.{child}", path) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(f"{real}.{child}"))


def install():
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _SameModule) for f in sys.meta_path):
        sys.meta_path.insert(0, _SameModule())
