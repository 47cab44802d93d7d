"""ModuleDict, ParameterList, ParameterDict and Unflatten print, register and refuse as PyTorch's."""

import contextlib
import io
import pathlib
import re

import pytest

import gradviz

from containers_program import run

EXPECTED = (pathlib.Path(__file__).parent / "containers_expected.txt").read_text()


def printed(torch):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run(torch)
    return re.sub(r"\bgradviz(?=\.)", "torch", out.getvalue())


def test_containers_and_unflatten_print_what_pytorch_prints():
    assert printed(gradviz) == EXPECTED


def test_the_expected_text_is_still_pytorchs():
    torch = pytest.importorskip("torch", reason="the expected text is checked against PyTorch only where it is installed")
    assert printed(torch) == EXPECTED
