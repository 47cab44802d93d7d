"""``torch.optim``: the optimizers (:mod:`.optimizer`) and the learning-rate schedules (:mod:`.lr_scheduler`)."""

import importlib

from .optimizer import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]


def __getattr__(name):
    # torch.optim.lr_scheduler: loaded on first use (import gradviz stays light)
    if name == "lr_scheduler":
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
