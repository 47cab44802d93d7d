"""rankdir= of the widget: a second, left-to-right drawing only where it could show the graph larger.

The page picks between the two for its box (tests/browser/test_layout_direction.py); here, which
traits Python writes: ``svg_lr`` only when the left-to-right picture's whole graph is larger in a 16:9
box (never for a lesson's graph: docs/layout-direction.md), the same ids in both drawings (every
frame plays in either), ``rankdir`` forced or ``"auto"``.
"""

import re

import numpy as np
import pytest
from hypothesis import assume, given, settings

import gradviz
import gradviz as torch
from gradviz.trace import make_adapter
from gradviz.widget.drawing import draw_trace, lr_could_win, svg_size
from gradviz.widget.standalone import standalone_html
from strategies import graphs
from widget_lessons import LESSONS

IDS = re.compile(r'\bid="(gv-[^"]+)"')


def vectors(n, width=3):
    """``n`` leaves of ``width`` numbers each, stacked and summed: one wide rank top to bottom."""
    xs = [torch.tensor(np.arange(float(width)) * 0.37 + i, requires_grad=True) for i in range(n)]
    return torch.stack(xs).sum()


def scalars(n):
    xs = [torch.tensor(float(i) + 0.25, requires_grad=True) for i in range(n)]
    return torch.stack(xs).sum()


@pytest.fixture(scope="module")
def six():
    s = vectors(6)
    return s, gradviz.animate(s, names={"s": s})


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_a_lesson_graph_gets_no_second_drawing(name):
    root, names, gradient = LESSONS[name]()
    w = gradviz.animate(root, gradient, names=names)
    assert w.rankdir == "auto" and w.svg and w.svg_lr == ""
    assert w._animation.drawing_lr is None


def test_vectors_stacked_get_a_left_to_right_drawing_with_the_same_ids(six):
    s, w = six
    assert w.rankdir == "auto" and w.svg_lr
    tb, lr = svg_size(w.svg), svg_size(w.svg_lr)
    assert lr[0] < tb[0] and lr[1] > tb[1]                 # narrower and taller: one rank now stands
    assert lr_could_win(tb, lr) and not lr_could_win(lr, tb)
    assert "rankdir=LR" in w._animation.drawing_lr.source and "rankdir=TB" in w._animation.drawing.source
    # every node, edge and slot the frames name is in both, under the same id
    assert sorted(IDS.findall(w.svg)) == sorted(IDS.findall(w.svg_lr))
    named = {i for f in w.frames for i in (f.get("focus") or []) + (f.get("lit") or []) + (f.get("edges") or [])}
    assert named and all(f'id="gv-{i}"' in w.svg_lr for i in named)
    slots = {k.split(":", 1)[1] for f in w.frames for k in f.get("set", {}) if k.split(":")[0] in ("val", "grad")}
    assert all(f'id="gv-{i}-' in w.svg_lr for i in slots)


@pytest.mark.parametrize("n", [15, 20])
def test_a_long_stack_of_vectors_gets_one_too(n):
    s = vectors(n)
    w = gradviz.animate(s, names={"s": s})
    assert w.svg_lr and lr_could_win(svg_size(w.svg), svg_size(w.svg_lr))


@pytest.mark.parametrize("n", [15, 20])
def test_a_stack_of_15_or_20_scalars_summed_gets_one(n):
    s = scalars(n)
    w = gradviz.animate(s, names={"s": s})
    assert w.svg_lr and lr_could_win(svg_size(w.svg), svg_size(w.svg_lr))


@pytest.mark.parametrize("n", [3, 6])
def test_a_short_stack_stays_top_to_bottom(n):
    """Wider than 16:9 top to bottom, yet larger so than as a column: nothing is added."""
    s = scalars(n)
    w = gradviz.animate(s, names={"s": s})
    assert w.svg_lr == "" and w._animation.drawing_lr is None


def test_a_chain_stays_top_to_bottom():
    x = torch.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(6):
        y = (y * 2).tanh()
    w = gradviz.animate(y, names={"x": x, "y": y})
    assert w.svg_lr == ""


@pytest.mark.parametrize("rankdir", ["TB", "LR", "BT", "RL"])
def test_a_direction_asked_is_the_only_drawing(six, rankdir):
    s, _ = six
    w = gradviz.animate(s, names={"s": s}, rankdir=rankdir)
    assert w.rankdir == rankdir and w.svg_lr == ""
    assert f"rankdir={rankdir}" in w._animation.drawing.source
    assert ("rankdir=LR" in w._animation.drawing.source) == (rankdir == "LR")


@pytest.mark.parametrize("bad, kind", [("lr", ValueError), ("left", ValueError), ("", ValueError), (None, ValueError)])
def test_a_bad_rankdir_says_what_is_allowed(six, bad, kind):
    s, _ = six
    with pytest.raises(kind, match=r"animate\(\): rankdir= must be one of 'auto', 'TB', 'LR', 'BT', 'RL'"):
        gradviz.animate(s, rankdir=bad)
    with pytest.raises(kind, match="rankdir="):
        gradviz.widget.AutogradWidget(s, rankdir=bad)


def test_draw_keeps_graphviz_directions_only(six):
    s, _ = six
    with pytest.raises(ValueError, match=r"draw\(\): rankdir= must be one of 'TB', 'LR', 'BT', 'RL', not 'auto'"):
        gradviz.draw(s, rankdir="auto")


def test_the_language_rewords_both_drawings_without_a_new_layout():
    s = vectors(6)
    w = gradviz.animate(s, names={"s": s})
    en_lr = w.svg_lr
    w.lang = "ko"
    assert w.svg_lr != en_lr and svg_size(w.svg_lr) == svg_size(en_lr)
    assert sorted(IDS.findall(w.svg_lr)) == sorted(IDS.findall(en_lr))
    assert "그라디언트" in w.svg_lr or "텐서" in w.svg_lr


def test_practice_mode_blanks_the_answers_in_both_drawings():
    s = vectors(6)
    w = gradviz.practice(s, names={"s": s})
    assert w.practice["questions"] and w.svg_lr
    # the leaves' .grad is asked: its numbers are in neither drawing's hidden text
    for svg in (w.svg, w.svg_lr):
        assert ".grad [1., 1., 1.]" not in svg.replace("\u00a0", " ")
    assert sorted(IDS.findall(w.svg)) == sorted(IDS.findall(w.svg_lr))


def test_a_saved_page_carries_it_cleaned(six, tmp_path):
    _, w = six
    page = standalone_html(w)
    assert '"svg_lr":"\\u003csvg' in page and '"rankdir":"auto"' in page
    hostile = dict(w.state(), svg_lr='<svg viewBox="0 0 10 10"><script>alert(1)</script><g onclick="x()"/></svg>')
    page = standalone_html(hostile)
    assert "alert(1)" not in page and "onclick" not in page
    ko = (w.save_html(tmp_path / "ko.html", lang="ko")).read_text(encoding="utf-8")
    assert '"svg_lr":"\\u003csvg' in ko


def test_lr_could_win_compares_whole_graph_zooms_in_a_16_9_box():
    assert lr_could_win((1600, 100), (800, 450))        # 0.01 vs 0.02: left to right larger
    assert not lr_could_win((1600, 900), (1600, 900))   # a tie: top to bottom
    assert not lr_could_win((400, 700), (3000, 200))    # a chain: top to bottom
    assert not lr_could_win(None, (1, 1)) and not lr_could_win((1, 1), (0, 5))


@settings(max_examples=15, deadline=None, derandomize=True)
@given(graphs())
def test_any_graph_has_the_same_ids_both_ways(case):
    """Whatever the graph, its left-to-right drawing names every node, edge and slot as the
    top-to-bottom one does (the frames, made once, play in the drawing the page picks)."""
    root, names = case
    assume(root.requires_grad)
    trace = make_adapter([root], names=names, frame=None, cuts=True).trace
    tb, lr = draw_trace(trace, "dataflow", "TB"), draw_trace(trace, "dataflow", "LR")
    assert tb["svg"] and lr["svg"]
    assert sorted(IDS.findall(tb["svg"])) == sorted(IDS.findall(lr["svg"]))
