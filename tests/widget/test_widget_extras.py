"""Without the `widget` extra, ``gradviz.animate`` says which pip command brings it (no bare ModuleNotFoundError)."""

import subprocess
import sys

import pytest

PROGRAM = """
import sys
sys.modules[{missing!r}] = None          # as if the package were not installed
import gradviz
x = gradviz.ones(2, requires_grad=True)
print((x * 2).sum().grad_fn.name())     # the core works without the widget
try:
    gradviz.animate
except ModuleNotFoundError as e:
    print(e.name)
    print(e)
"""


@pytest.mark.parametrize("missing", ["anywidget", "traitlets"])
def test_animate_without_the_widget_extra_names_the_pip_command(missing):
    out = subprocess.run([sys.executable, "-c", PROGRAM.format(missing=missing)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "SumBackward0"
    assert out[1] == missing
    assert out[2] == (f"cannot animate the graph: the widget needs the module '{missing}', which is not installed. "
                      'Add the widget extra from your clone of gradviz: pip install -e ".[widget]"')


def test_other_missing_modules_are_not_disguised():
    """A module gradviz itself lacks is a bug to see, not an install hint."""
    program = PROGRAM.format(missing="gradviz.widget.frames")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert "pip install" not in out
