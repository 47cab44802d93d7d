"""Names for tensors: the caller's variables, a model's dotted parameter names, and made-up letters.

Works for gradviz tensors and real ``torch.Tensor``s alike, without importing torch: a torch
tensor is recognised only when torch is already imported (someone handed one over).

>>> import gradviz as torch
>>> x = torch.ones(2)
>>> found = collect_names([x], None, None, None, {"x": x, "_hidden": x})
>>> found[id(x)]
'x'
"""

import sys

from .tensor import Tensor

__all__ = ["tensor_library", "collect_names", "auto_name", "namespaces"]

AUTO = "abcdfghkmpqrstuvwz"     # letters for unnamed tensors (no e, i, j, l, n, o, x, y: they mean things)


def tensor_library(obj):
    """``"gradviz"``, ``"torch"`` or None: whose tensor ``obj`` is (torch is never imported here)."""
    if isinstance(obj, Tensor):
        return "gradviz"
    torch = sys.modules.get("torch")
    if torch is not None and type(obj).__module__.startswith("torch"):
        try:
            if isinstance(obj, torch.Tensor):
                return "torch"
        except Exception:  # a half-imported torch: not a tensor we can read
            return None
    return None


def namespaces(frame, namespace):
    """The mappings to look names up in: ``namespace`` if given, else the frame's locals and globals."""
    if namespace is False:
        return []
    if namespace is not None:
        return list(namespace) if isinstance(namespace, (list, tuple)) else [namespace]
    spaces = []
    while frame is not None:
        spaces.append(frame.f_locals)
        # inside a comprehension or lambda, the names a student sees are one frame further out
        if not frame.f_code.co_name.startswith("<") or frame.f_code.co_name == "<module>":
            break
        frame = frame.f_back
    if frame is not None:
        spaces.append(frame.f_globals)
    return spaces


def collect_names(roots, names, name, frame, namespace):
    """id(tensor) -> name: ``name`` for the first root, ``names``, then the namespaces' variables.

    Names starting with ``_`` are skipped; a model's parameters get their dotted names
    (``model.0.weight``) after the plain variables.  Only tensors still alive can be named.
    """
    found, modules = Found(), []
    if name is not None and roots:
        found.add(roots[0], str(name))
    for key, value in (names or {}).items():
        if tensor_library(key):
            key, value = value, key
        if tensor_library(value):
            found.add(value, str(key))
        else:
            modules.append((str(key), value))
    for space in namespaces(frame, namespace):
        for key, value in list(space.items()):
            if not isinstance(key, str) or key.startswith("_"):
                continue
            found.bound.update(_local_names(value, space))
            if tensor_library(value):
                found.bound.add(key)
                found.add(value, key)
            else:
                modules.append((key, value))
    for key, value in modules:
        params = named_parameters(value)
        for pname, p in params:
            found.add(p, f"{key}.{pname}")
        if params:
            found.modules.append((key, value))
    return found


class Found(dict):
    """id(tensor) -> name, in the order found (the caller's order of assignment).

    ``tensors`` holds each named tensor by id; ``modules`` the ``(name, module)`` pairs whose
    parameters were named.
    """

    def __init__(self):
        super().__init__()
        self.tensors, self.modules = {}, []
        self.bound = set()      # every name the caller gives a tensor (and its functions' locals):
        #                         a made-up name must not be one of them (a lesson's h is its own h)

    def add(self, tensor, name):
        if id(tensor) not in self:
            self[id(tensor)] = name
            self.tensors[id(tensor)] = tensor



def _local_names(obj, space):
    """The local variable names of a function a notebook (or script) defined: ``h`` inside ``forward``."""
    code = getattr(obj, "__code__", None)
    if code is None or space.get("__name__") != "__main__" or getattr(obj, "__module__", None) != "__main__":
        return ()
    return code.co_varnames


def named_parameters(obj):
    """``obj.named_parameters()`` of an ``nn.Module`` (gradviz's or torch's), else nothing."""
    method = getattr(type(obj), "named_parameters", None)
    if not callable(method) or isinstance(obj, type):
        return []
    try:
        return [(n, p) for n, p in method(obj) if isinstance(n, str) and tensor_library(p)]
    except Exception:  # someone else's object: no names from it, no error in a drawing
        return []


def auto_name(taken):
    """Short names not in ``taken``: the letters of :data:`AUTO`, then ``v1``, ``v2``, ..."""
    for c in AUTO:
        if c not in taken:
            yield c
    k = 1
    while True:
        if f"v{k}" not in taken:
            yield f"v{k}"
        k += 1
