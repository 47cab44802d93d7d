"""static/practice.js reads and checks answers exactly as gradviz.quiz does (a saved page has no kernel).

Runs the page's own parser and checker under Node (skipped without ``node``) on the unit tests'
answers, malicious strings and a few thousand random ones, and compares every verdict.
"""

import json
import math
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from gradviz.quiz import check_answer

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js to run practice.js's checker")
PRACTICE_JS = Path(__file__).resolve().parents[2] / "gradviz" / "widget" / "static" / "practice.js"

FIXED = [
    "10", "-0.5", "1e-3", ".25", "1.", "1E+2", "2*3", "0.5*5*4", "2*(1+1)**2", "-2**2", "2**-1", "2**3**2",
    "(1 + 2) / 4", "+3", "- -3", "1/0", "-1/0", "0/0", "1e999", "9**9**9", "inf", "-inf", "nan", "[10, 10]",
    "[10., 10.,]", "[[1, 2], [3, 4]]", "1, 2", "(1, 2)", "1,", "[]", "()", "[[]]", "[2*3, 0.5*4]",
    "tensor([10., 10.])", "torch.tensor(10.)", "tensor(1,)", "tensor((1, 2))", "  7  ", "−3 × 2", "6 ÷ 4", "2·5",
    "", "   ", "x", "x.grad", "print(1)", "__import__('os').system('echo hi')", "eval('1')", "lambda: 1",
    "[1 for x in y]", "1_000", "0x10", "1j", "True", "'1'", "1; 2", "{1: 2}", "007", "1 2", "[1,,2]", "(1", "1)",
    "[1][0]", "(1)(2)", "tensor", "torch", "torch.inf", "tensor()", "tensor(1, 2)", "tensor(*[1])", "[*[1, 2]]",
    "5 // 2", "5 % 2", "1 < 2", "~1", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "2*[1, 2]",
    "[1] + [2]", "-[1]", "[1, [2]]", "[[1, 2], [3]]", "[[1], 2]", "[" * 40 + "]" * 40, "(tensor)(1)",
    "(torch).tensor(1)", "(-8)**(1/3)", "1**nan", "(-1)**inf", "nan**0", "0**-1", "2**1024", "1 +\n2", "[1,\n2]",
    "1" * 3000, "10", "[10]", "[[1, 2]]", "[[1, 2], [3, 4], [5, 6]]", "[[1, 3, 5], [2, 4, 6]]", "[1, 2, 3]",
    "[10, 9]", "[1, 2]", "0.1966", "0.197", "[4, 4]", "[5, 5]", "[10.004, 10]", "[10.006, 10]",
]
PIECES = ["1", "2.5", "-", "+", "*", "/", "**", "(", ")", "[", "]", ",", " ", "inf", "nan", "tensor", "torch",
          ".", "e3", "0", "x", "'", "_", "1e400", "0.1", "3", "−", "×", "\n"]
EXPECTED = [(10.0, "float32"), ([10.0, 10.0], "float32"), ([[1.0, 2.0], [3.0, 4.0]], "float64"),
            ([9.0, 12.0], "float32"), ([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "float16"), (0.19661193, "float32"),
            (math.inf, "float32"), (math.nan, "float32"), (3.0, "int64")]
MISTAKES = [("forward", [4.0, 4.0]), ("not_accumulated", [5.0, 5.0]), ("no_batch_sum", [[1.0, 2.0], [3.0, 4.0]])]


VERDICTS = [("10", [10.0, 10.0]), ("[10]", 10.0), ("[[1, 2]]", [1.0, 2.0]), ("[[1, 2], [3, 4], [5, 6]]", [9.0, 12.0]),
            ("[[1, 3, 5], [2, 4, 6]]", [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), ("[1, 2, 3]", [1.0, 2.0]),
            ("[10, 9]", [10.0, 10.0]), ("[1, 2]", [10.0, 10.0]), ("[4, 4]", [10.0, 10.0]), ("[10, 10]", [10.0, 10.0]),
            ("0.1966", 0.19661193), ("0.197", 0.19661193), ("-inf", math.inf), ("nan", math.nan), ("1e10", math.inf)]


def _cases():
    rng = random.Random(22)
    texts = list(FIXED)
    for _ in range(2500):
        texts.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12))))
    cases = []
    for k, text in enumerate(texts):
        want, dtype = EXPECTED[k % len(EXPECTED)]
        cases.append({"text": text, "expected": want, "dtype": dtype, "mistakes": MISTAKES})
    for dtype in ("float16", "float32", "float64"):
        cases += [{"text": t, "expected": w, "dtype": dtype, "mistakes": MISTAKES} for t, w in VERDICTS]
    return cases


def _json_numbers(v):
    if isinstance(v, list):
        return [_json_numbers(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


RUNNER = """
import { checkAnswer } from %s;
const cases = JSON.parse(await new Promise((ok) => { let s = ""; process.stdin.on("data", (d) => s += d); process.stdin.on("end", () => ok(s)); }));
const fix = (v) => Array.isArray(v) ? v.map(fix) : (typeof v === "number" && !Number.isFinite(v)) ? String(v).replace("Infinity", "inf").replace("NaN", "nan") : v;
const out = cases.map((c) => { const v = checkAnswer(c.text, c.expected, c.dtype, c.mistakes); return { ...v, value: fix(v.value) }; });
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("practicejs")
    module = tmp / "practice.mjs"
    module.write_text(PRACTICE_JS.read_text(encoding="utf-8"), encoding="utf-8")
    runner = tmp / "run.mjs"
    runner.write_text(RUNNER % json.dumps(module.as_uri()), encoding="utf-8")
    cases = _cases()
    payload = json.dumps([dict(c, expected=_json_numbers(c["expected"])) for c in cases])
    done = subprocess.run([NODE, str(runner)], input=payload, capture_output=True, text=True, timeout=120, check=True)
    return cases, json.loads(done.stdout)


def _py(case):
    v = check_answer(case["text"], case["expected"], case["dtype"], mistakes=case["mistakes"])
    return dict(v, value=_json_numbers(v["value"]))


def test_same_verdicts(verdicts):
    cases, js = verdicts
    differ = []
    for case, got in zip(cases, js):
        want = _py(case)
        if want["ok"] is None or got["ok"] is None:
            # both refuse it (which reason comes first may differ for text that is wrong twice over)
            same = want["ok"] is None and got["ok"] is None and (
                want["key"] == got["key"] or {want["key"], got["key"]} <= {"p_syntax", "p_list_arith", "p_ragged"})
        else:
            same = want == got
        if not same:
            differ.append((case["text"], want, got))
    assert not differ, "\n".join(map(repr, differ[:8]))


def test_the_fixed_cases_mean_something(verdicts):
    """The corpus holds right answers, known slips, shape slips and refusals alike."""
    cases, js = verdicts
    keys = {v["key"] for v in js}
    assert {"v_ok", "v_mistake", "v_shape_batch", "v_shape_broadcast", "v_shape_transpose", "v_partly",
            "p_syntax", "p_name", "p_list_arith", "p_ragged", "p_too_big", "p_too_long", "p_empty"} <= keys
    assert sum(v["ok"] is True for v in js) >= 15


NAMES = """
import { pqSafe, pqHash } from %s;
const names = ["practice", "../../etc/passwd", "<img src=x onerror=alert(1)>", "a b\\u0000c", "", "___", "렌즈",
               "x".repeat(300), "gv-3f2a9c01"].map((t) => pqSafe(t, "page"));
process.stdout.write(JSON.stringify({ names, hashes: [pqHash("[]"), pqHash("[]"), pqHash("[[\\"q0\\"]]"), pqHash("")] }));
"""


def test_download_names_and_storage_keys(tmp_path):
    """A saved page's answers file is named by safe characters only (whatever the page or widget id
    says), and its storage key tells different sets of questions apart."""
    module = tmp_path / "practice.mjs"
    module.write_text(PRACTICE_JS.read_text(encoding="utf-8"), encoding="utf-8")
    runner = tmp_path / "names.mjs"
    runner.write_text(NAMES % json.dumps(module.as_uri()), encoding="utf-8")
    out = json.loads(subprocess.run([NODE, str(runner)], capture_output=True, text=True, timeout=60, check=True).stdout)
    names = out["names"]
    assert names[:3] == ["practice", "etc_passwd", "img_src_x_onerror_alert_1"]
    assert all(n and len(n) <= 40 and all(c.isascii() and (c.isalnum() or c in "-_") for c in n) for n in names)
    assert names[4] == names[5] == names[6] == "page" and names[8] == "gv-3f2a9c01"
    same, again, other, empty = out["hashes"]
    assert same == again and same != other and len(same) == 8 and all(c in "0123456789abcdef" for c in same + empty)
