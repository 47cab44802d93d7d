"""``torch.utils``: the data loading tools (:mod:`gradviz.utils.data`)."""

import importlib

__all__ = ["data"]


def __getattr__(name):
    # torch.utils.data: loaded on first use (import gradviz stays light)
    if name == "data":
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
