"""The ``gradviz`` command line: ``python -m gradviz slides LESSON.ipynb -o lecture.html``."""

import argparse
import importlib.util
import sys
from pathlib import Path

__all__ = ["main", "missing_modules"]

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
    args = parser().parse_args(argv)
    args.run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
