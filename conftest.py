"""pytest, for the whole repository: doctests of classes that print under PyTorch's module names.

Many gradviz classes set ``__module__`` to where PyTorch defines the class (``type(nn.Linear(1, 1))``
prints ``gradviz.nn.modules.linear.Linear``, as torch's does), but no such module exists, so
doctest's finder would take them for imports from elsewhere and skip their examples. Here a class
belongs to the module whose globals its own functions use: where it is written.
"""

import doctest
import inspect


def _written_in(module, cls):
    return any(getattr(f, "__globals__", None) is vars(module) for f in vars(cls).values())


_from_module = doctest.DocTestFinder._from_module


def _from_module_or_written_in(self, module, obj):
    if module is not None and inspect.isclass(obj) and _written_in(module, obj):
        return True
    return _from_module(self, module, obj)


doctest.DocTestFinder._from_module = _from_module_or_written_in
