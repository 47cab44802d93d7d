"""DOT text -> SVG/PNG bytes by running a Graphviz command: graphviz-pure by default, system dot on request.

``graphviz-pure`` (a pip-installable Rust port of Graphviz's ``dot``, installed by
the ``widget`` extra: ``pip install -e ".[widget]"`` in the clone) needs nothing from the system, so drawing works on a bare pip
install or on Binder.  The system Graphviz ``dot`` is used only when asked for:
``render(..., renderer="system")`` or the environment variable ``GRADVIZ_RENDERER=system``.
``GRADVIZ_RENDERER`` may also name a command or a path.

>>> find_renderer("no-such-graphviz-command")
Traceback (most recent call last):
...
gradviz.drawing.render.RendererNotFound: cannot draw the graph: the Graphviz command 'no-such-graphviz-command' was not found. Either `pip install graphviz-pure` (no system packages needed), or install Graphviz (https://graphviz.org/download/) and set GRADVIZ_RENDERER=system.
"""

import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass

__all__ = ["render", "find_renderer", "Renderer", "RenderError", "RendererNotFound",
           "FormatNotSupported", "RenderTimeout", "ENV_VAR", "PURE", "SYSTEM", "TIMEOUT"]

ENV_VAR = "GRADVIZ_RENDERER"
PURE = "graphviz-pure"      # the command the graphviz-pure wheel installs beside python
SYSTEM = "dot"              # the system Graphviz
TIMEOUT = 30.0              # seconds a layout may take before we give up

FIXES = ("Either `pip install graphviz-pure` (no system packages needed), or install Graphviz "
         "(https://graphviz.org/download/) and set GRADVIZ_RENDERER=system.")


class RenderError(RuntimeError):
    """The Graphviz command failed."""


class RendererNotFound(RenderError):
    """No Graphviz command can run: the message names both fixes."""


class FormatNotSupported(RenderError, ValueError):
    """The renderer cannot write this format (graphviz-pure writes no PDF)."""


class RenderTimeout(RenderError):
    """The layout took longer than the timeout."""


@dataclass(frozen=True)
class Renderer:
    """A Graphviz command that can run: ``kind`` is ``"pure"``, ``"system"`` or ``"custom"``."""

    kind: str
    path: str

    @property
    def name(self):
        return os.path.basename(self.path)

    def formats(self):
        """The output formats this command writes (``-T`` values), asked of the command itself."""
        return _formats(self.path)

    def version(self):
        return _version(self.path)


def _pure_candidates():
    exe = PURE + (".exe" if os.name == "nt" else "")
    here = [os.path.join(os.path.dirname(sys.executable), exe)]
    try:
        here.append(os.path.join(sysconfig.get_path("scripts"), exe))
    except KeyError:  # pragma: no cover - unusual install schemes
        pass
    found = shutil.which(PURE)
    return here + ([found] if found else [])


def _runnable(path):
    return path and os.path.isfile(path) and os.access(path, os.X_OK)


def find_renderer(renderer=None):
    """The Graphviz command to run: ``renderer`` or ``$GRADVIZ_RENDERER``, else graphviz-pure.

    ``"pure"`` (the default) looks beside the running Python and then on ``PATH``;
    ``"system"`` looks for ``dot`` on ``PATH``; anything else is a command name or path.
    Raises :class:`RendererNotFound`, naming both fixes, when nothing can run.
    """
    choice = renderer or os.environ.get(ENV_VAR) or "pure"
    if choice in ("pure", PURE):
        for path in _pure_candidates():
            if _runnable(path):
                return Renderer("pure", os.path.abspath(path))
        raise RendererNotFound(f"cannot draw the graph: the command {PURE!r} was not found beside "
                               f"{sys.executable} or on PATH. {FIXES}")
    if choice in ("system", SYSTEM):
        path = shutil.which(SYSTEM)
        if path:
            return Renderer("system", path)
        asked, default = ((f"renderer={renderer!r}", "leave renderer= out") if renderer else
                          (f"{ENV_VAR}={choice}", f"unset {ENV_VAR}"))
        raise RendererNotFound(f"cannot draw the graph: {asked} asks for Graphviz's `dot`, which is not "
                               "on PATH: install Graphviz (https://graphviz.org/download/), or "
                               f"`pip install graphviz-pure` and {default} to use it (no system packages needed).")
    path = choice if os.sep in choice else shutil.which(choice)
    if _runnable(path):
        kind = "pure" if PURE in os.path.basename(path) else "custom"
        return Renderer(kind, os.path.abspath(path))
    raise RendererNotFound(f"cannot draw the graph: the Graphviz command {choice!r} was not found. {FIXES}")


@functools.lru_cache(maxsize=None)
def _formats(path):
    # `dot -T?` answers on stderr: Format: "?" not recognized. Use one of: canon dot ... svg
    proc = subprocess.run([path, "-T?"], capture_output=True, text=True, timeout=TIMEOUT)
    m = re.search(r"Use one of:(.*)", proc.stderr + proc.stdout, re.S)
    names = m.group(1).split() if m else []
    return tuple(sorted({n.split(":")[0] for n in names}))


@functools.lru_cache(maxsize=None)
def _version(path):
    proc = subprocess.run([path, "-V"], capture_output=True, text=True, timeout=TIMEOUT)
    return (proc.stderr or proc.stdout).strip()


def render(source, format="svg", renderer=None, timeout=TIMEOUT, dpi=None):
    """Lay out and draw DOT ``source``: the output file's bytes (``format``: svg, png, ...).

    ``timeout`` bounds the layout (seconds): beyond it :class:`RenderTimeout` is raised.
    ``dpi`` sets the resolution of raster formats (Graphviz's default is 96).
    """
    r = renderer if isinstance(renderer, Renderer) else find_renderer(renderer)
    fmt = format.lower().lstrip(".")
    formats = r.formats()
    if formats and fmt not in formats:
        hint = ""
        if fmt == "pdf" and r.kind == "pure":
            hint = (" graphviz-pure does not write PDF yet: save as .svg or .png, or install Graphviz "
                    "and set GRADVIZ_RENDERER=system.")
        raise FormatNotSupported(f"{r.name} cannot write {fmt!r}; it writes: {', '.join(formats)}.{hint}")
    try:
        args = [r.path, f"-T{fmt}"] + ([f"-Gdpi={dpi:g}"] if dpi else [])
        proc = subprocess.run(args, input=source.encode("utf-8"), capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RenderTimeout(f"the Graphviz layout took longer than {timeout:g} s; draw fewer nodes "
                            "(max_nodes=...) or pass a larger timeout=") from None
    except OSError as e:
        raise RendererNotFound(f"cannot run {r.path}: {e}. {FIXES}") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise RenderError(f"{r.name} failed (exit {proc.returncode}): {err}")
    return proc.stdout
