"""The ``gradviz`` command line: ``python -m gradviz lab`` (the course) and
``python -m gradviz slides LESSON.ipynb -o lecture.html`` (a lesson as one offline slide deck)."""

import argparse
import importlib.util
import os
import sys
from pathlib import Path

__all__ = ["main", "missing_modules", "lab_command"]

# what `slides` imports, and the extra of pyproject.toml that installs it
SLIDES_NEEDS = {"nbformat": "course", "nbclient": "course", "nbconvert": "course", "ipykernel": "course",
                "jupyter_client": "course", "anywidget": "widget", "graphviz": "widget",
                "latex2mathml": "widget", "nh3": "widget"}


def missing_modules(needs):
    """The modules of ``needs`` that cannot be imported here, in order."""
    missing = []
    for name in needs:
        if name in sys.modules:
            if sys.modules[name] is None:     # (an import of it was blocked)
                missing.append(name)
        elif importlib.util.find_spec(name) is None:
            missing.append(name)
    return missing


def _slides(args):
    missing = missing_modules(SLIDES_NEEDS)
    if missing:     # one line that says what to install, not a ModuleNotFoundError's traceback
        sys.exit(f"gradviz slides: needs the course extra ({', '.join(missing)} not installed); add it from "
                 f'your clone of gradviz: pip install -e ".[course]"')
    from .slides import SlidesError, write_slides
    notebook = Path(args.notebook)
    try:
        out = write_slides(notebook, args.output, execute=args.execute, timeout=args.timeout,
                           sanitize=args.sanitize, progress=print)     # what is being done: stdout; what went wrong: stderr
    except SlidesError as e:   # one line that says what to do; a traceback would bury it
        sys.exit(f"gradviz slides: {e}")
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB): open it in a browser, no network needed")


COURSE = Path(__file__).resolve().parent.parent / "notebooks"


def lab_command(args=(), root=None):
    """The command that opens the course: JupyterLab on ``notebooks/``, with ``--allow-root`` as root."""
    root = (os.geteuid() == 0) if root is None and hasattr(os, "geteuid") else bool(root)
    command = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={COURSE}"]
    if root and "--allow-root" not in args:
        command.append("--allow-root")      # Jupyter refuses to start as root without it (containers)
    return command + list(args)


def _lab(args):
    if not COURSE.is_dir():
        sys.exit(f"gradviz lab: the lessons are not here ({COURSE} does not exist): run it from a clone of gradviz")
    missing = missing_modules(["jupyterlab", "ipykernel"])
    if missing:
        sys.exit(f"gradviz lab: needs the course extra ({', '.join(missing)} not installed); add it from your clone "
                 f'of gradviz: pip install -e ".[course]"')
    command = lab_command(args.jupyter_args)
    print(" ".join(command[2:]).replace("jupyterlab", "jupyter lab", 1), flush=True)
    os.execv(command[0], command)          # JupyterLab in this process's place: Ctrl-C stops it


def _seconds(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a whole number of seconds above 0, not {text!r}")
    return value


def parser():
    p = argparse.ArgumentParser(prog="python -m gradviz", description="gradviz on the command line.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    lab = sub.add_parser(
        "lab", help="open the course: JupyterLab on the lesson notebooks",
        description="Start JupyterLab on the lessons (notebooks/ of this clone), adding --allow-root when "
                    "run as root (containers). Anything after `lab` goes to JupyterLab "
                    "(e.g. --ip=0.0.0.0 --no-browser in a container).",
        epilog="example: python -m gradviz lab --no-browser")
    lab.set_defaults(run=_lab)
    s = sub.add_parser(
        "slides", help="turn a lesson notebook into one self-contained reveal.js slide deck",
        description="Run a lesson notebook in a fresh kernel (nbclient) and write a reveal.js "
                    "slide deck in ONE HTML file: reveal.js, styles and the widgets are inlined, "
                    "and the widgets animate with no kernel and no network. Slides follow the "
                    "cells' slideshow metadata (slide, subslide, fragment, skip, notes).",
        epilog="example: python -m gradviz slides notebooks/02_autograd_tutorial.ipynb -o lecture.html")
    s.add_argument("notebook", help="the lesson (.ipynb); its kernel starts in the notebook's folder")
    s.add_argument("-o", "--output", metavar="HTML",
                   help="where to write the deck (default: NOTEBOOK with .slides.html, beside it)")
    s.add_argument("--no-execute", dest="execute", action="store_false",
                   help="use the outputs already saved in the notebook instead of running it")
    s.add_argument("--timeout", type=_seconds, default=300, metavar="SECONDS",
                   help="longest time one cell may run (default: %(default)s)")
    s.add_argument("--sanitize", action="store_true",
                   help="for a notebook from someone else: clean its HTML and JavaScript outputs too, "
                        "as JupyterLab shows an untrusted notebook (markdown is always cleaned)")
    s.set_defaults(run=_slides)
    return p


def main(argv=None):
    p = parser()
    args, extra = p.parse_known_args(argv)
    if args.command == "lab":
        args.jupyter_args = extra         # JupyterLab's own options
    elif extra:
        p.error(f"unrecognized arguments: {' '.join(extra)}")
    args.run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
