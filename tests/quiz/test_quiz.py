"""gradviz.quiz: the answer parser (no code runs), the checker's tolerance and shape feedback, the distractors."""

import doctest
import importlib
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from gradviz.quiz import AnswerError, LIMITS, check_answer, distractors, parse_answer, select, tolerance
from gradviz.quiz.checking import close
from gradviz.quiz.mistakes import KINDS

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)


@pytest.mark.parametrize("module", ["gradviz.quiz", "gradviz.quiz.answers", "gradviz.quiz.checking",
                                    "gradviz.quiz.mistakes", "gradviz.quiz.selection"])
def test_doctests(module):
    assert doctest.testmod(importlib.import_module(module)).failed == 0


# --- the parser ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("10", 10.0), ("-0.5", -0.5), ("1e-3", 1e-3), (".25", 0.25), ("1.", 1.0), ("1E+2", 100.0),
    ("2*3", 6.0), ("0.5*5*4", 10.0), ("2*(1+1)**2", 8.0), ("-2**2", -4.0), ("2**-1", 0.5), ("2**3**2", 512.0),
    ("(1 + 2) / 4", 0.75), ("+3", 3.0), ("- -3", 3.0), ("1/0", math.inf), ("-1/0", -math.inf), ("1e999", math.inf),
    ("9**9**9", math.inf), ("inf", math.inf), ("-inf", -math.inf),
    ("[10, 10]", [10.0, 10.0]), ("[10., 10.,]", [10.0, 10.0]), ("[[1, 2], [3, 4]]", [[1, 2], [3, 4]]),
    ("1, 2", [1.0, 2.0]), ("(1, 2)", [1.0, 2.0]), ("1,", [1.0]), ("[]", []), ("()", []),
    ("[2*3, 0.5*4]", [6.0, 2.0]), ("tensor([10., 10.])", [10.0, 10.0]), ("torch.tensor(10.)", 10.0),
    ("tensor(1,)", 1.0), ("tensor((1, 2))", [1.0, 2.0]), ("  7  ", 7.0),
    ("−3 × 2", -6.0), ("6 ÷ 4", 1.5), ("2·5", 10.0), ("[[[1]]]", [[[1.0]]]),
])
def test_parses(text, want):
    got = parse_answer(text)
    assert got.dtype == np.float64
    assert got.shape == np.shape(want)
    assert np.array_equal(got, np.asarray(want, dtype=np.float64))


def test_nan_and_shapes():
    assert math.isnan(parse_answer("nan")) and math.isnan(parse_answer("0/0"))
    assert parse_answer("[[]]").shape == (1, 0)
    assert parse_answer("[[1, 2, 3]]").shape == (1, 3)


@pytest.mark.parametrize("text, key", [
    ("", "p_empty"), ("   ", "p_empty"), ("x", "p_name"), ("x.grad", "p_name"), ("print(1)", "p_name"),
    ("__import__('os').system('echo hi')", "p_name"), ("open('/etc/passwd').read()", "p_name"),
    ("eval('1')", "p_name"), ("lambda: 1", "p_name"), ("[1 for x in y]", "p_name"), ("1 if 1 else 2", "p_name"),
    ("1_000", "p_name"), ("0x10", "p_name"), ("1j", "p_name"), ("True", "p_name"), ("None", "p_name"),
    ("'1'", "p_syntax"), ('"1"', "p_syntax"), ("1; 2", "p_syntax"), ("a = 1", "p_name"), ("{1: 2}", "p_syntax"),
    ("007", "p_syntax"), ("1 2", "p_syntax"), ("[1,,2]", "p_syntax"), ("(1", "p_syntax"), ("1)", "p_syntax"),
    ("[1][0]", "p_syntax"), ("(1)(2)", "p_syntax"), ("tensor", "p_syntax"), ("torch", "p_syntax"),
    ("torch.inf", "p_syntax"), ("tensor()", "p_syntax"), ("tensor(1, 2)", "p_syntax"), ("tensor(*[1])", "p_syntax"),
    ("[*[1, 2]]", "p_syntax"), ("5 // 2", "p_syntax"), ("5 % 2", "p_syntax"), ("1 < 2", "p_syntax"),
    ("~1", "p_syntax"), ("@", "p_syntax"), ("#1", "p_syntax"), ("1\n2", "p_syntax"), ("\\x41", "p_syntax"),
    ("<script>alert(1)</script>", "p_syntax"), ("<img src=x onerror=alert(1)>", "p_syntax"),
    ("2*[1, 2]", "p_list_arith"), ("[1] + [2]", "p_list_arith"), ("-[1]", "p_list_arith"), ("[2]*3", "p_list_arith"),
    ("[1, [2]]", "p_ragged"), ("[[1, 2], [3]]", "p_ragged"), ("[[1], 2]", "p_ragged"),
    ("[" * 40 + "]" * 40, "p_too_big"), ("(" * 100 + "1" + ")" * 100, "p_too_big"),
    ("1" * 3000, "p_too_long"), ("[" + ",".join(["1"] * 10001) + "]", "p_too_long"),
])
def test_refuses(text, key):
    with pytest.raises(AnswerError) as info:
        parse_answer(text)
    assert info.value.key == key
    assert isinstance(info.value, ValueError)


def test_counts_numbers():
    many = "[" + ",".join(["0"] * (LIMITS["numbers"] + 1)) + "]"     # short numbers: under the length limit
    assert len(many) > LIMITS["chars"]
    old = dict(LIMITS)
    LIMITS.update(chars=10 ** 6)
    try:
        with pytest.raises(AnswerError, match="p_too_big"):
            parse_answer(many)
    finally:
        LIMITS.update(old)


def test_not_text():
    with pytest.raises(TypeError, match="takes the text typed, a str, not int"):
        parse_answer(10)


def test_nothing_runs(monkeypatch):
    """No answer reaches eval, exec or compile-and-run: the parser never calls them."""
    import builtins

    def boom(*a, **k):
        raise AssertionError("eval/exec called")

    monkeypatch.setattr(builtins, "eval", boom)
    monkeypatch.setattr(builtins, "exec", boom)
    for text in ["2*3", "[1, 2]", "__import__('os')", "tensor([1])"]:
        try:
            parse_answer(text)
        except AnswerError:
            pass


@SETTINGS
@given(st.text(max_size=60))
def test_any_text_is_numbers_or_an_answer_error(text):
    try:
        v = parse_answer(text)
    except AnswerError as e:
        assert e.key.startswith("p_")
    else:
        assert isinstance(v, np.ndarray) and v.dtype == np.float64


_pieces = st.sampled_from(["1", "2.5", "-", "+", "*", "/", "**", "(", ")", "[", "]", ",", " ", "inf", "nan",
                           "tensor", "torch", ".", "e3", "0", "x", "'", "_", "__class__", "9**9**9"])


@SETTINGS
@given(st.lists(_pieces, max_size=25).map("".join))
def test_grammar_soup(text):
    try:
        v = parse_answer(text)
    except AnswerError as e:
        assert e.key.startswith("p_")
    else:
        assert v.dtype == np.float64


@SETTINGS
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=3),
                  elements=st.floats(allow_nan=False, allow_infinity=False, width=64)))
def test_a_printed_array_reads_back(a):
    """What Python prints for a list (repr keeps every bit) is read back exactly."""
    text = repr(a.tolist())
    assert np.array_equal(parse_answer(text), a) and parse_answer(text).shape == a.shape


@SETTINGS
@given(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.sampled_from(["+", "-", "*", "/"]))
def test_arithmetic_is_pythons(a, b, op):
    text = f"{a!r} {op} ({b!r})"
    with np.errstate(all="ignore"):
        want = {"+": a + b, "-": a - b, "*": a * b, "/": np.float64(a) / np.float64(b)}[op]
    got = parse_answer(text)
    assert got == want or (math.isnan(got) and math.isnan(want))


# --- the checker -------------------------------------------------------------------------------

def test_tolerance_fits_the_dtype():
    assert tolerance("float64") == tolerance("float32") == (5e-4, 1e-6)
    assert tolerance("float16")[0] > tolerance("float32")[0]
    assert tolerance("bfloat16")[0] > tolerance("float16")[0]
    assert tolerance("int64") == (0.0, 0.0) and tolerance("torch.int32") == (0.0, 0.0)
    assert tolerance("torch.float16") == tolerance("float16")


@pytest.mark.parametrize("typed, want, dtype, ok", [
    ("0.1966", 0.19661193, "float32", True),        # the 4 digits the widget shows
    ("0.197", 0.19661193, "float32", False),
    ("0.1966", 0.19661193, "float64", True),
    ("0.2", 0.19661193, "float16", False),
    ("0.1", 0.0999755859375, "float16", True),      # float16's own 0.1
    ("3", 3, "int64", True), ("3.0001", 3, "int64", False),
    ("0", 1e-9, "float32", True), ("0", 1e-3, "float32", False),
    ("inf", math.inf, "float32", True), ("-inf", math.inf, "float32", False), ("nan", math.nan, "float32", True),
    ("1e10", math.inf, "float32", False), ("[10, 10]", [10, 10], "float32", True),
    ("10000.4", 10000.0, "float32", True), ("10010", 10000.0, "float32", False),
])
def test_tolerance(typed, want, dtype, ok):
    assert check_answer(typed, want, dtype)["ok"] is ok


def test_unreadable_costs_no_try():
    v = check_answer("x + 1", 2.0)
    assert v == {"ok": None, "key": "p_name", "args": {"name": "x"}, "mistake": None, "value": None}


@pytest.mark.parametrize("typed, want, key", [
    ("10", [10.0, 10.0], "v_shape_broadcast"),
    ("[10]", 10.0, "v_shape_squeeze"),
    ("[[1, 2]]", [1.0, 2.0], "v_shape_squeeze"),
    ("[[1, 2], [3, 4], [5, 6]]", [9.0, 12.0], "v_shape_batch"),
    ("[[1, 3, 5], [2, 4, 6]]", [[1, 2], [3, 4], [5, 6]], "v_shape_transpose"),
    ("[1, 2, 3]", [1.0, 2.0], "v_shape"),
    ("[10, 9]", [10.0, 10.0], "v_partly"),
    ("[1, 2]", [10.0, 10.0], "v_wrong"),
])
def test_shape_and_value_feedback(typed, want, key):
    v = check_answer(typed, want, "float32")
    assert v["ok"] is False and v["key"] == key
    assert v["args"]["want"] == {0: "()", 1: f"({len(want)},)" if np.ndim(want) == 1 else ""}.get(np.ndim(want), v["args"]["want"])


def test_partly_counts():
    v = check_answer("[10, 9, 10]", [10.0, 10.0, 10.0])
    assert v["args"]["right"] == "2" and v["args"]["n"] == "3"


def test_a_known_slip_is_named():
    mistakes = [("forward", [4.0, 4.0]), ("not_accumulated", [5.0, 5.0])]
    assert check_answer("[4, 4]", [10, 10], mistakes=mistakes)["mistake"] == "forward"
    assert check_answer("[5, 5]", [10, 10], mistakes=mistakes)["key"] == "v_mistake"
    assert check_answer("[10, 10]", [10, 10], mistakes=mistakes)["ok"] is True     # the answer wins
    per_sample = [("no_batch_sum", [[1.0, 2.0], [3.0, 4.0]])]
    v = check_answer("[[1, 2], [3, 4]]", [4.0, 6.0], mistakes=per_sample)
    assert v["mistake"] == "no_batch_sum"


def test_numbers_already_read():
    assert check_answer(np.array([10.0, 10.0]), [10, 10])["ok"] is True
    assert check_answer([[1.0]], [[1.0]])["value"] == [[1.0]]


@SETTINGS
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                  elements=st.floats(-1e4, 1e4, width=32)))
def test_the_widgets_4_digits_are_always_right(a):
    """Every value typed as the captions show it (4 significant digits) is right, in float32."""
    text = repr([float(f"{x:.4g}") for x in a.reshape(-1)]) if a.ndim else f"{float(a):.4g}"
    if a.ndim:
        text = repr(np.array(eval(text)).reshape(a.shape).tolist())     # the test's own text, not an answer
    assert check_answer(text, a, "float32")["ok"] is True


# --- distractors ---------------------------------------------------------------------------------

@SETTINGS
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                  elements=st.floats(-100, 100)),
       st.lists(st.tuples(st.sampled_from(KINDS), st.floats(-100, 100)), max_size=5),
       st.sampled_from(["float16", "float32", "float64"]))
def test_distractors_are_wrong_and_distinct(answer, offered, dtype):
    cands = [(k, np.full(answer.shape, v)) for k, v in offered]
    got = distractors(answer, cands, dtype, k=3)
    assert len(got) == 3                      # the generic slips always fill up
    for i, (kind, v) in enumerate(got):
        assert kind in KINDS
        assert check_answer(v, answer, dtype)["ok"] is False       # never the answer
        assert np.all(np.isfinite(v))
        for _, w in got[:i]:
            assert np.shape(v) != np.shape(w) or not np.all(close(v, w, dtype))


def test_distractors_keep_the_plausible_ones_first():
    got = distractors([10.0, 10.0], [("forward", [4.0, 4.0]), ("incoming", [10.0, 10.0]),
                                      ("missing_factor", [5.0, 5.0]), ("sign", [np.inf, 1.0])])
    assert [k for k, _ in got] == ["forward", "missing_factor", "sign"]
    assert got[2][1].tolist() == [-10.0, -10.0]
    assert [(k, float(v)) for k, v in distractors(0.0, [])] == [("arith", 1.0), ("arith", -1.0), ("arith", 0.5)]


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown kind 'typo'"):
        distractors(1.0, [("typo", 2.0)])


# --- which questions ---------------------------------------------------------------------------

class Q:
    def __init__(self, name, kind, leaf):
        self.name, self.kind, self.leaf = name, kind, leaf


QS = [Q("x", "grad", True), Q("W1", "grad", True), Q("h", "received", False), Q("h", "forward", False)]


def test_select():
    assert [q.name for q in select(QS, "leaves")] == ["x", "W1"]
    assert len(select(QS, "all")) == 4
    assert [q.kind for q in select(QS, ["h"])] == ["received", "forward"]
    assert [q.name for q in select(QS, lambda q: q.kind == "forward")] == ["h"]
    # a later pass (a live backward() press) may reach fewer tensors: not strict, the names it has
    assert [q.kind for q in select(QS, ["y", "h"], strict=False)] == ["received", "forward"]


def test_select_refuses():
    with pytest.raises(ValueError, match=r"ask names 'y', which the graph does not have a question about; it has 'x', 'W1', 'h'"):
        select(QS, ["y"])
    with pytest.raises(ValueError, match="ask must be 'leaves', 'all'"):
        select(QS, "some")
    with pytest.raises(TypeError, match="not int"):
        select(QS, 3)
    with pytest.raises(TypeError, match=r"names tensors by their names \(str\), not int"):
        select(QS, [1])
