"""Pause Python's cyclic garbage collector while a big graph is built.

Building the picture, frames and derivation of a 20,000-op graph makes hundreds of thousands of
small objects that all stay alive; each of the collector's full passes walks every one of them,
which took more than half of ``animate()``'s time.  Nothing built here is garbage until the
widget goes away, so the collector is paused and then left to run as usual.
"""

import contextlib
import gc

__all__ = ["paused_gc"]


@contextlib.contextmanager
def paused_gc():
    """``with paused_gc(): ...`` -- no cyclic collection inside (reference counting still frees)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
