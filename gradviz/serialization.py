"""``torch.save`` / ``torch.load``: tensors, state_dicts, optimiser states and containers, in PyTorch's file format.

>>> import io, gradviz as torch
>>> buf = io.BytesIO()
>>> torch.save({"w": torch.tensor([1.5, -2.0]), "step": 3}, buf)
>>> _ = buf.seek(0)
>>> torch.load(buf)
{'w': tensor([ 1.5000, -2.0000]), 'step': 3}

The file is what ``torch.save`` writes: a zip archive holding ``data.pkl`` (the object, pickled with
protocol 2, each tensor as ``torch._utils._rebuild_tensor_v2`` of a storage) and one record
``data/<key>`` per storage with its raw little-endian bytes.  So PyTorch reads what gradviz saves,
and gradviz reads what PyTorch saves, without importing torch.  ``load`` reads only tensors,
numbers, strings and containers unless ``weights_only=False`` (PyTorch's default since 2.6), with
PyTorch's message for anything else.

Tensors saved as views of one tensor come back viewing one array (their strides and offsets are
kept), but gradviz does not know them as views of each other: writing into one in place bumps its
own version counter only.
"""

import codecs
import collections
import io
import os
import pickle
import zipfile

import numpy as np

from . import _dtype
from . import nn, optim
from ._types import Size, check_device, device
from .nn.parameter import Parameter
from .tensor import Tensor

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2
_STORAGES = {d.name: _dtype.TYPE_NAMES[d.name] + "Storage" for d in _dtype._ALL}      # float32: FloatStorage
_DTYPE_OF_STORAGE = {name: getattr(_dtype, dt) for dt, name in _STORAGES.items()}


# --- writing ----------------------------------------------------------------------------------------

class _Global:
    """A name the pickle refers to (``torch._utils._rebuild_tensor_v2``), written as PyTorch writes it."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):   # (the pickler asks that what it calls on loading be callable)
        raise TypeError(f"{self.module}.{self.name} is a name in a pickle, not a function")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_TORCH = {name: _Global("torch", name) for name in ("Size", "device", *_STORAGES.values(), *_STORAGES)}


class _Storage:
    """The memory a tensor views, saved once (as the record ``data/<key>``) however many tensors view it."""

    def __init__(self, root):
        self.root = root


def _storage_of(array):
    """(the whole array ``array`` views, its offset there, its strides), in elements, as PyTorch saves a
    view with its storage; a contiguous copy where numpy's layout says otherwise."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    item = array.itemsize
    offset, rest = divmod(array.__array_interface__["data"][0] - root.__array_interface__["data"][0], item)
    if (root.dtype == array.dtype and root.flags.c_contiguous and not rest and offset >= 0
            and all(s >= 0 and s % item == 0 for s in array.strides)):
        return root, offset, tuple(s // item for s in array.strides)
    return np.ascontiguousarray(array), 0, _contiguous_strides(array.shape)


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, for the hooks PyTorch's format needs: tensors as rebuild calls,
    their numbers as persistent ids, and torch's own names for dtypes, sizes and devices."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file):
        super().__init__(file, protocol=DEFAULT_PROTOCOL)
        self.records = []          # (key, array), in the order the storages are met
        self.keys = {}             # id of a storage's array: its key

    def persistent_id(self, obj):
        if not isinstance(obj, _Storage):
            return None
        key = self.keys.get(id(obj.root))
        if key is None:
            key = self.keys[id(obj.root)] = str(len(self.records))
            self.records.append((key, obj.root))
        dt = _dtype.from_numpy_dtype(obj.root.dtype)
        return ("storage", _TORCH[_STORAGES[dt.name]], key, "cpu", obj.root.size)

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            root, offset, strides = _storage_of(obj._data)
            rebuilt = (_Storage(root), offset, tuple(obj._data.shape), strides)
            if isinstance(obj, Parameter):     # the parameter's tensor itself is saved without requires_grad
                inner = _Call(_REBUILD_TENSOR, rebuilt + (False, collections.OrderedDict()))
                return _REBUILD_PARAMETER, (inner, obj.requires_grad, collections.OrderedDict())
            return _REBUILD_TENSOR, rebuilt + (obj.requires_grad, collections.OrderedDict())
        if isinstance(obj, Size):
            return _TORCH["Size"], (tuple(obj),)
        if isinstance(obj, device):
            return _TORCH["device"], (str(obj),)
        return NotImplemented

    def save_global(self, obj, name=None):
        """A class of gradviz's by PyTorch's name (``torch.nn.modules.linear.Linear``): a whole saved
        model (``weights_only=False``) names its classes as torch's would."""
        module = getattr(obj, "__module__", None) or ""
        if module == "gradviz" or module.startswith("gradviz."):
            self._save_global_name(_Global("torch" + module[len("gradviz"):], name or obj.__qualname__))
            self.memo[id(obj)] = self.memo.pop(id(self._last_global))
            return
        super().save_global(obj, name)

    def _save_global_name(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)
        self._last_global = obj

    def _save_dtype(self, obj):
        self._save_global_name(_TORCH[obj.name])

    def _save_call(self, obj):
        self.save_reduce(obj.func, obj.args)

    dispatch[_Global] = _save_global_name
    dispatch[_dtype.dtype] = _save_dtype


class _Call:
    """``func(*args)`` inside another call's arguments (a Parameter's tensor)."""

    def __init__(self, func, args):
        self.func, self.args = func, args


_Pickler.dispatch[_Call] = _Pickler._save_call


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _archive_name(f):
    if isinstance(f, (str, os.PathLike)):
        return os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    return "archive"


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write ``obj`` (tensors, a state_dict, an optimizer's state, lists, dicts, numbers...) to the
    path or binary file ``f``, as ``torch.save`` writes it."""
    data = io.BytesIO()
    pickler = _Pickler(data)
    pickler.dump(obj)
    prefix = _archive_name(f)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        def record(name, payload, align=64):
            info = zipfile.ZipInfo(f"{prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            # pad the local header (extra field "FB", as PyTorch's writer does) so the bytes are aligned
            start = out.tell() + 30 + len(info.filename.encode())
            pad = -(start + 4) % align
            info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
            z.writestr(info, payload)
        record("data.pkl", data.getvalue())
        record(".format_version", b"1")
        record(".storage_alignment", b"64")
        record("byteorder", b"little")
        for key, array in pickler.records:
            record(f"data/{key}", array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes())
        record("version", b"3\n")
        record(".data/serialization_id", b"0" * 40)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(out.getvalue())
    else:
        f.write(out.getvalue())


# --- reading ----------------------------------------------------------------------------------------

def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    item = storage.itemsize      # (tensors saved as views of one storage view one array again)
    if not len(storage):
        return _finish(Tensor._wrap(np.zeros(tuple(size), storage.dtype)), requires_grad)
    array = np.ndarray(tuple(size), storage.dtype, buffer=storage, offset=storage_offset * item,
                       strides=tuple(s * item for s in stride))
    return _finish(Tensor._wrap(array), requires_grad)


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_()
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride, False, None)


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    return Parameter(data, requires_grad)


def _rebuild_from_type_v2(func, new_type, args, state):
    t = func(*args)
    return Parameter(t, t.requires_grad) if new_type is Parameter and not isinstance(t, Parameter) else t


def _classes_by_name():
    """gradviz's classes by the names they print (``gradviz.nn.modules.linear.Linear``), which are
    PyTorch's module paths rather than gradviz's files."""
    found = {}
    for namespace in (nn, nn.init, optim, optim.lr_scheduler):
        for obj in vars(namespace).values():
            if isinstance(obj, type) and obj.__module__.startswith("gradviz"):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


class _StorageType:
    """``torch.FloatStorage`` and its kin as a pickle names them: which dtype a storage holds."""

    def __init__(self, dtype):
        self.dtype = dtype


_READERS = {
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_tensor": _rebuild_tensor,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter,
    "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    "torch.Size": Size,
    "torch.device": device,
    "torch.Tensor": Tensor,
    "torch.nn.parameter.Parameter": Parameter,
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "builtins.bytearray": bytearray,
    "builtins.set": set,
    "builtins.complex": complex,
    **{f"torch.{name}": _StorageType(dt) for name, dt in _DTYPE_OF_STORAGE.items()},
    **{f"torch.{d.name}": d for d in _dtype._ALL},
}
_safe_globals = {}


def _weights_only_error(name):
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two options, \x1b[1mdo those "
        "steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In PyTorch 2.6, we changed the default "
        "value of the `weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` with "
        "`weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only "
        "if you got the file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please "
        "check the recommended steps in the following error message.\n\tWeightsUnpickler error: Unsupported global: "
        f"GLOBAL {name} was not an allowed global by default. Please use `torch.serialization.add_safe_globals"
        f"([{name}])` or the `torch.serialization.safe_globals([{name}])` context manager to allowlist this global "
        "if you trust this class/function.\n\nCheck the documentation of torch.load to learn more about types "
        "accepted by default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, records, weights_only):
        super().__init__(file)
        self.records, self.weights_only, self.storages = records, weights_only, {}

    def find_class(self, module, name):
        module = {"__builtin__": "builtins", "copy_reg": "copyreg"}.get(module, module)   # protocol 2's names
        full = f"{module}.{name}"
        if full in _READERS:
            return _READERS[full]
        if full in _safe_globals:
            return _safe_globals[full]
        if module == "_codecs" and name == "encode":    # how protocol 2 writes bytes
            return codecs.encode
        if self.weights_only:
            raise _weights_only_error(full)
        if module == "torch" or module.startswith("torch."):    # torch's classes are gradviz's
            module = "gradviz" + module[len("torch"):]
            cls = _classes_by_name().get(f"{module}.{name}")
            if cls is not None:
                return cls
        return super().find_class(module, name)

    def persistent_load(self, pid):
        typename, storage_type, key, location, numel = pid
        if typename != "storage":
            raise pickle.UnpicklingError(f"Unknown typename for persistent_load, expected 'storage' but got "
                                         f"'{typename}'")
        if key not in self.storages:
            dt = storage_type.dtype.np.newbyteorder("<")
            self.storages[key] = np.frombuffer(self.records(key), dt).astype(dt.newbyteorder("="))
        return self.storages[key]


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read back what :func:`save` (or PyTorch's ``torch.save``) wrote to the path or file ``f``.

    With ``weights_only=True`` (the default, as in PyTorch 2.6 and later) only tensors, numbers,
    strings and containers are read; ``weights_only=False`` reads any pickled object (only for
    files you trust: unpickling can run code)."""
    if map_location is not None and not callable(map_location) and not isinstance(map_location, dict):
        check_device(map_location)
    if weights_only is None:
        weights_only = True
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            raw = fh.read()
    else:
        raw = f.read()
    if not raw.startswith(b"PK\x03\x04"):
        raise RuntimeError("gradviz reads PyTorch's zip file format (torch.save's since PyTorch 1.6); this file "
                           "is in another format")
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        names = z.namelist()
        pkl = next(n for n in names if n.endswith("data.pkl"))
        prefix = pkl[:-len("data.pkl")]
        unpickler = _Unpickler(io.BytesIO(z.read(pkl)), lambda key: z.read(f"{prefix}data/{key}"), weights_only)
        return unpickler.load()


# --- what weights_only=True may read --------------------------------------------------------------

def _global_name(obj):
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals):
    """Allow ``weights_only=True`` loads to build these classes or call these functions."""
    for g in safe_globals:
        obj, name = (g[0], g[1]) if isinstance(g, tuple) else (g, _global_name(g))
        _safe_globals[name] = obj


def get_safe_globals():
    return list(_safe_globals.values())


def clear_safe_globals():
    _safe_globals.clear()


class safe_globals:
    """``with torch.serialization.safe_globals([Foo]):`` -- add_safe_globals for the block only."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        self.saved = dict(_safe_globals)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _safe_globals.clear()
        _safe_globals.update(self.saved)

