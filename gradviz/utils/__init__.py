"""``torch.utils``: the data loading tools (:mod:`gradviz.utils.data`)."""

from . import data

__all__ = ["data"]
