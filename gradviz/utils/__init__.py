"""``torch.utils``: the data loading tools (:mod:`gradviz.utils.data`)."""


__all__ = ["data"]


def __getattr__(name):
    # torch.utils.data: loaded on first use (import gradviz stays light)
    if name == "data":
        from .._lazy import submodule
        return submodule(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
