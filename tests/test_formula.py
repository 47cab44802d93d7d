"""The formula trees and the chain rule as the op table writes them (no widget): every entry's
category, function name and numpy function, and every element-wise local derivative, parsed from
the table, equal to the rule it stands for.  ``tests/widget/test_widget_formulas.py`` evaluates the
derivations the widget shows against the engine's gradients.
"""

import numpy as np
import pytest

from gradviz import chain_rule, formula
from gradviz.ops import OPS


# --- the trees themselves ---------------------------------------------------------------------

def test_function_application_is_written_as_application():
    x = formula.Sym("x", np.float64(0.88137))
    d = chain_rule.parse(r"1 - \tanh^{2} @0", {"0": x})
    assert d.latex() == r"1 - \tanh^{2}\left(x\right)"
    assert d.latex(numbers=True) == r"1 - \tanh^{2}\left(0.8814\right)"
    assert d.value() == pytest.approx(1 - np.tanh(0.88137) ** 2)
    assert chain_rule.parse(r"\cos @0", {"0": x}).latex() == r"\cos\left(x\right)"
    assert chain_rule.parse(r"\sigma(@0)\,(1 - \sigma(@0))", {"0": x}).latex() == \
        r"\sigma\left(x\right) \cdot \left(1 - \sigma\left(x\right)\right)"


def test_constant_arithmetic_and_powers_are_simplified():
    a = formula.Sym("a", np.array([2.0, 3.0]))
    assert chain_rule.parse("@n @0^{@n - 1}", {"0": a, "n": formula.Num(2)}).latex() == "2 a"
    assert chain_rule.parse("@n @0^{@n - 1}", {"0": a, "n": formula.Num(3)}).latex() == "3 a^{2}"


def test_negative_numbers_are_parenthesised():
    m = formula.Mul(formula.Num(2), formula.Num(-3), chain=True)
    assert m.latex() == r"2 \cdot \left(-3\right)"
    assert formula.Pow(formula.Num(-2), formula.Num(2)).latex() == r"\left(-2\right)^{2}"


CATEGORIES = (None, "elementwise", "reduction", "reshape", "transpose", "matmul", "join")


@pytest.mark.parametrize("key", sorted(OPS))
def test_every_entry_says_how_its_gradient_is_written(key):
    """The op table is the one place that knows an op: its category is one the chain rule writes,
    a matrix product names a side for each input, and a function written by name is an application."""
    op = OPS[key]
    assert op.category in CATEGORIES, op.category
    assert chain_rule.category(key) == op.category
    if op.category == "matmul":
        assert len(op.matmul_sides) == len(op.uses) and set(op.matmul_sides) <= {None, "right", "left", "outer"}
    else:
        assert op.matmul_sides is None
    if op.latex_fn is not None:
        assert op.numpy is not None and op.latex.startswith(op.latex_fn.split("_")[0]), (op.latex, op.latex_fn)
        x = formula.Sym("x", np.array([0.5]))
        assert formula.Fn(key, x).latex() == op.latex_fn + r"\left(x\right)"
        assert formula.plain(formula.Fn(key, x).latex()).endswith("(x)") and "\\" not in formula.plain(
            formula.Fn(key, x).latex())


@pytest.mark.parametrize("key", sorted(k for k, op in OPS.items() if op.numpy is not None))
def test_every_numpy_function_of_an_entry_computes_it(key):
    """``numpy`` is the entry's own function in float64: a formula's values, and what a rule's
    ``np.<f>(...)`` records under create_graph=True."""
    op = OPS[key]
    x = np.random.default_rng(0).uniform(*op.domain, 7)
    np.testing.assert_allclose(op.numpy(x), op.forward(x, **op.params), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("key", sorted(k for k, op in OPS.items() if op.category == "elementwise"))
def test_every_elementwise_local_derivative_is_a_formula_that_equals_the_rule(key):
    """The op table's dlatex, parsed, is the local derivative its vjp applies (for g = 1)."""
    op = OPS[key]
    rng = np.random.default_rng(0)
    n_in = len(op.uses)
    lo, hi = op.domain
    arrays = [rng.uniform(lo, hi, 3) for _ in range(n_in)]
    params = dict(op.params)
    y = np.asarray(op.forward(*arrays, **params), dtype=np.float64)
    syms = [formula.Sym(f"x{k}", a) for k, a in enumerate(arrays)]
    for i in range(n_in):
        e = chain_rule.step(key, i, None, syms, params, formula.Sym("y", y), (3,), (3,), op.dlatex)
        want = op.vjp(i)(np.ones(3), y, *arrays, **params)
        np.testing.assert_allclose(np.broadcast_to(e.value(), (3,)), np.broadcast_to(want, (3,)),
                                   rtol=1e-6, atol=1e-9, err_msg=f"{key} input {i}: {e.latex()}")


def test_matrix_products_are_written_in_their_order():
    MM = OPS["mm"].dlatex
    A, B = formula.Sym("A", np.ones((3, 2))), formula.Sym("B", np.ones((2, 4)))
    g = formula.Sym("g", np.ones((3, 4)))
    y = formula.Sym("y", np.ones((3, 4)))
    assert chain_rule.step("mm", 0, g, [A, B], {}, y, (3, 2), (3, 4), MM).latex() == "g B^{T}"
    assert chain_rule.step("mm", 1, g, [A, B], {}, y, (2, 4), (3, 4), MM).latex() == "A^{T} g"
