"""``torch.optim``: the optimizers (:mod:`.optimizer`) and the learning-rate schedules (:mod:`.lr_scheduler`)."""

from . import lr_scheduler
from .optimizer import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
