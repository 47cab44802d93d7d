"""Short programs a course runs, printed under gradviz and compared with what PyTorch 2.13 prints.

Each ``tests/programs/NAME.py`` has ``run(torch)``, which prints; ``NAME.expected`` is what it printed
under PyTorch, recorded by ``.venv/bin/python tests/test_programs.py [NAME...]``.  gradviz naming its own
module (``gradviz.Size``) is read as ``torch.`` (as the conformance harness reads it), and object
addresses are masked.
"""

import contextlib
import importlib
import io
import pathlib
import re
import sys

import pytest

HERE = pathlib.Path(__file__).parent / "programs"
sys.path.insert(0, str(HERE))
NAMES = sorted(p.stem for p in HERE.glob("*.expected"))


def printed(torch, name):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        importlib.import_module(name).run(torch)
    text = re.sub(r"\bgradviz(?=\.)", "torch", out.getvalue())
    return re.sub(r" at 0x[0-9a-f]+", " at 0x?", text)


@pytest.mark.parametrize("name", NAMES)
def test_gradviz_prints_what_pytorch_prints(name):
    import gradviz
    assert printed(gradviz, name) == (HERE / f"{name}.expected").read_text()


@pytest.mark.parametrize("name", NAMES)
def test_the_recording_is_still_pytorchs(name):
    torch = pytest.importorskip("torch", reason="the recordings are checked against PyTorch only where it is installed")
    assert printed(torch, name) == (HERE / f"{name}.expected").read_text()


if __name__ == "__main__":
    import torch
    for name in sys.argv[1:] or [p.stem for p in HERE.glob("*.py") if p.stem != "show"]:
        (HERE / f"{name}.expected").write_text(printed(torch, name))
        print("recorded", name)
