"""pytest, for the whole repository: tests that need PyTorch, and doctests of classes that print under PyTorch's module names.

A test that needs real PyTorch carries the ``torch`` marker (or calls ``pytest.importorskip("torch")``):
without torch it is skipped, saying so and how to get the CPU build. ``GRADVIZ_HIDE_TORCH=1 pytest``
runs the suite as on a machine without torch, even where it is installed (here and in the kernels
and commands the tests start), so a test that needs torch without saying so fails there, not on a
student's machine.

Many gradviz classes set ``__module__`` to where PyTorch defines the class (``type(nn.Linear(1, 1))``
prints ``gradviz.nn.modules.linear.Linear``, as torch's does), but no such module exists, so
doctest's finder would take them for imports from elsewhere and skip their examples. Here a class
belongs to the module whose globals its own functions use: where it is written.
"""

import doctest
import inspect
import os
import sys
from pathlib import Path

import pytest

_NO_TORCH = str(Path(__file__).parent / "tests" / "without_torch")
if os.environ.get("GRADVIZ_HIDE_TORCH") == "1":
    sys.path.insert(0, _NO_TORCH)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [_NO_TORCH, os.environ.get("PYTHONPATH")]))
    for _name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        del sys.modules[_name]

# The stand-in above is a module for the import system, not a test module: --doctest-modules would
# import it as ``torch`` (failing beside a real torch, and by design without one).
collect_ignore = ["tests/without_torch"]

TORCH_MISSING = ("needs real PyTorch, which is not installed here (the CPU build is enough: "
                 "pip install torch --index-url https://download.pytorch.org/whl/cpu)")


def _has_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def pytest_runtest_setup(item):
    if item.get_closest_marker("torch") is not None and not _has_torch():
        pytest.skip(TORCH_MISSING)


def _written_in(module, cls):
    return any(getattr(f, "__globals__", None) is vars(module) for f in vars(cls).values())


_from_module = doctest.DocTestFinder._from_module


def _from_module_or_written_in(self, module, obj):
    if module is not None and inspect.isclass(obj) and _written_in(module, obj):
        return True
    return _from_module(self, module, obj)


doctest.DocTestFinder._from_module = _from_module_or_written_in
