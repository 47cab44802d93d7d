"""Printing: gradviz's reprs against golden text recorded once with PyTorch 2.13.

The golden files (tests/golden/repr/*.txt) hold each case's code and what PyTorch printed;
tests/golden/record_repr.py recorded them.  ``gradviz.`` is read as ``torch.``.
"""

import pathlib
import sys

import pytest

import gradviz

sys.path.insert(0, str(pathlib.Path(__file__).parent / "golden"))
from record_repr import parse, run_case  # noqa: E402

GOLDEN = pathlib.Path(__file__).parent / "golden" / "repr"
CASES = [(f.stem, code, expected) for f in sorted(GOLDEN.glob("*.txt")) for code, expected in parse(f)]


@pytest.mark.parametrize("name, code, expected", CASES, ids=[f"{n}:{c[:60]}" for n, c, _ in CASES])
def test_repr_matches_pytorch(name, code, expected):
    got = run_case(gradviz, code).replace("gradviz.", "torch.")
    assert got == expected


def test_golden_files_are_not_empty():
    assert {f.stem for f in GOLDEN.glob("*.txt")} >= {"basic", "autograd", "printoptions", "random"}
    assert len(CASES) > 150


def test_set_printoptions_restores():
    gradviz.set_printoptions(precision=2)
    try:
        assert repr(gradviz.tensor([1 / 3])) == "tensor([0.33])"
    finally:
        gradviz.set_printoptions(profile="default")
    assert repr(gradviz.tensor([1 / 3])) == "tensor([0.3333])"


def test_str_is_repr_and_format_of_0d():
    t = gradviz.tensor(2.5)
    assert str(t) == repr(t) == "tensor(2.5000)"
    assert f"{t:.1f}" == "2.5"


def test_format_of_tensors_follows_pytorch():
    loss = gradviz.tensor(2.4375, requires_grad=True) * 1
    assert "{}".format(loss) == f"{loss}" == "2.4375"     # a 0-d tensor formats as its number
    assert f"{gradviz.tensor(3)}" == "3" and f"{gradviz.tensor(True)}" == "True"
    assert f"{gradviz.ones(2)}" == "tensor([1., 1.])"
    with pytest.raises(TypeError, match="^unsupported format string passed to Tensor.__format__$"):
        f"{gradviz.ones(2):.2f}"
