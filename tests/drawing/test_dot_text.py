"""gradviz.drawing.dot_text: golden DOT text for the seed lessons' graphs, determinism and escaping.

Regenerate the golden files after an intended change with ``GRADVIZ_UPDATE_GOLDEN=1 pytest tests/drawing/test_dot_text.py``
(then look at the diff: it is the review).
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gradviz as torch
import gradviz.trace as trace
from gradviz.autograd import Variable
from gradviz.drawing.dot_text import html_text, quote, to_dot
from gradviz.drawing.picture import build_graph

GOLDEN = Path(__file__).parents[1] / "golden" / "dot"
PURE = shutil.which("graphviz-pure") or str(Path(sys.executable).with_name("graphviz-pure"))
needs_graphviz_pure = pytest.mark.skipif(not os.path.exists(PURE), reason="graphviz-pure is not installed")


# The three seed lessons, each recorded through backward() so every gradient slot is filled.

def tutorial(view, backward=True):
    """PyTorch's Variables tutorial: y = 5 (x + 1)^2, o = 1/2 sum(y)."""
    x = torch.ones(2, requires_grad=True)
    y = 5 * (x + 1) ** 2
    o = (1/2) * torch.sum(y)
    if not backward:
        return build_graph(o, view=view)
    with trace.record() as rec:
        o.backward()
    return build_graph(o, view=view, recording=rec)


def autograd_tutorial(view):
    """PyTorch's autograd tutorial: y = x + 2, z = y * y * 3, out = z.mean()."""
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    with trace.record() as rec:
        out.backward()
    return build_graph(out, view=view, recording=rec)


def cs535(view):
    """The CS535 lesson: y = 2x + 3, z = 3 y^2 on a 1x1 Variable."""
    x = Variable(torch.ones(1, 1), requires_grad=True)
    y = 2 * x + 3
    z = y * y * 3
    with trace.record() as rec:
        z.backward()
    return build_graph(z, view=view, recording=rec)


CASES = {f"{fn.__name__}-{view}": (fn, view) for fn in (tutorial, autograd_tutorial, cs535)
         for view in ("dataflow", "pytorch")}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_dot(case):
    fn, view = CASES[case]
    text = to_dot(fn(view))
    path = GOLDEN / f"{case}.dot"
    if os.environ.get("GRADVIZ_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_golden_dot_before_backward():
    text = to_dot(tutorial("dataflow", backward=False))
    path = GOLDEN / "tutorial-dataflow-forward.dot"
    if os.environ.get("GRADVIZ_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")
    assert not re.search(r'ID="gv-[ne]\d+-grad"', text)   # no gradient yet, no gradient slot


def test_same_code_same_text():
    a = to_dot(tutorial("dataflow"))
    torch.randn(5).exp()      # the core's sequence numbers move on; the ids do not
    assert to_dot(tutorial("dataflow")) == a


def test_every_node_and_edge_has_an_id_and_classes():
    text = to_dot(autograd_tutorial("dataflow"))
    nodes = re.findall(r"^  (n\d+) \[id=\"gv-(n\d+)\" class=\"gv-node gv-(\w+)", text, re.M)
    assert nodes and all(a == b for a, b, _ in nodes)
    edges = re.findall(r"^  n\d+ -> n\d+ \[id=\"gv-(e\d+)\" class=\"gv-edge ", text, re.M)
    assert edges == [f"e{k}" for k in range(len(edges))]
    for slot in ("name", "meta", "val", "grad"):
        assert f'ID="gv-n0-{slot}"' in text
    assert 'ID="gv-e0-grad"' in text


def test_quote_and_html_text():
    assert quote('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'
    assert html_text('<script>alert("x")</script>') == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"
    assert html_text("a & b\nc") == "a &amp; b<BR/>c"


EVIL = '<script>alert("x")</script> & \'q\' \\ ]>'


def evil_graph():
    x = torch.ones(2, requires_grad=True)
    return build_graph((x * 2).sum(), names={EVIL: x}, name='o"><b>')


def test_names_are_escaped_in_dot():
    text = to_dot(evil_graph())
    assert "<script>" not in text and '"><b>' not in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#x27;q&#x27; \\ ]&gt;" in text


@needs_graphviz_pure
def test_escaped_dot_still_parses():
    proc = subprocess.run([PURE, "-Tsvg"], input=to_dot(evil_graph()).encode(), capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert b"<script>" not in proc.stdout


def test_building_dot_needs_no_graphviz():
    code = ("import sys, gradviz as torch; from gradviz.drawing.dot_text import to_dot; from gradviz.drawing.picture import build_graph;"
            "x = torch.ones(2, requires_grad=True); to_dot(build_graph((x * 2).sum()));"
            "print('graphviz' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
