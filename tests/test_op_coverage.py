"""Every op-table entry is reachable the ways its entry says, and the ways PyTorch has.

The table (:mod:`gradviz.ops`) is the one place an op is described: its method, the method's
aliases, its in-place twin and its ``gradviz.*`` function are made from the entry.  These tests
hold gradviz against the entry, and the entry against real PyTorch where it is installed: a
method PyTorch has in place (``erf_``) or as a function (``torch.erf``) must exist here too.
"""

import importlib

import pytest

import gradviz
from gradviz.ops import OPS

KEYS = sorted(OPS)


def _names(op):
    return (op.method, *op.aliases) if op.method else ()


def _function(lib, path):
    obj = lib
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None and part == "nn":
            obj = importlib.import_module(lib.__name__ + ".nn")
    return obj


@pytest.mark.parametrize("key", KEYS)
def test_entry_is_reachable_as_it_says(key):
    op = OPS[key]
    assert op.method or isinstance(op.function, str) or op.in_rules, f"{key}: no method and no function reaches it"
    for name in _names(op):
        assert callable(getattr(gradviz.Tensor, name, None)), f"Tensor.{name}"
        if op.inplace:
            assert callable(getattr(gradviz.Tensor, name + "_", None)), f"Tensor.{name}_"
        if op.function is True:
            assert callable(getattr(gradviz, name, None)), f"gradviz.{name}"
    if isinstance(op.function, str):
        assert callable(_function(gradviz, op.function)), f"gradviz.{op.function}"


def test_table_methods_record_their_node():
    x = gradviz.tensor([0.5, -0.25], requires_grad=True)
    assert x.erf().grad_fn.name() == "ErfBackward0"
    assert gradviz.erf(x).grad_fn.name() == "ErfBackward0"
    y = x * 1
    assert y.erf_() is y and y.grad_fn.name() == "ErfBackward0"
    assert x.arctan().grad_fn.name() == "AtanBackward0"
    assert gradviz.tensor([1, -2]).abs().dtype is gradviz.int64       # integers keep their dtype
    assert gradviz.tensor([1, 2]).exp().dtype is gradviz.float32      # or are computed in float
    assert gradviz.tensor([1, 2]).floor().tolist() == [1, 2]          # or are already whole


@pytest.mark.torch
@pytest.mark.parametrize("key", KEYS)
def test_reachable_wherever_pytorch_has_it(key):
    """A method, function or in-place twin that PyTorch has for this entry exists in gradviz,
    and what the entry names exists in PyTorch (nothing invented)."""
    torch = pytest.importorskip("torch")
    op = OPS[key]
    for name in _names(op):
        assert hasattr(torch.Tensor, name), f"torch.Tensor has no {name}"
        if hasattr(torch, name) and not name.startswith("_"):
            assert callable(getattr(gradviz, name, None)), f"torch.{name} exists, gradviz.{name} does not"
        twin = name + "_"
        if not name.endswith("_") and hasattr(torch.Tensor, twin):
            assert callable(getattr(gradviz.Tensor, twin, None)), f"torch.Tensor.{twin} exists, gradviz's does not"
    if op.function is True:
        assert all(hasattr(torch, n) for n in _names(op)), "the entry names a function torch does not have"
    if isinstance(op.function, str):
        assert callable(_function(torch, op.function))
