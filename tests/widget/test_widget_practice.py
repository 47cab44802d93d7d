"""Practice mode in Python: the questions a graph asks, where they stop the animation, the answers and score traits."""

import json
import re

import numpy as np
import pytest

import gradviz
from gradviz.quiz import check_answer
from gradviz.widget import AutogradWidget, practice, standalone_html
from gradviz.widget.i18n import render
from gradviz.widget import practice_mode as P
from widget_lessons import LESSONS


def seed_widget(**options):
    root, names, gradient = LESSONS["seed"]()
    return practice(root, gradient, names=names, **options)


def _expected(q):
    return np.asarray(json.loads(json.dumps(q["expected"]).replace('"inf"', "Infinity").replace('"nan"', "NaN")))


def test_the_seed_asks_x_grad_before_it_is_shown():
    w = seed_widget()
    (q,) = w.practice["questions"]
    assert (q["kind"], q["name"], q["expected"], q["shape"], q["dtype"]) == ("grad", "x", [10.0, 10.0], [2], "float32")
    assert render("en", q["text"]) == "Predict x.grad after o.backward():"
    # frame q["at"] is the first to show x's gradient (the edge into x); none before it does
    x_keys = {k for k in w.frames[q["at"]]["set"] if w.frames[q["at"]]["set"][k]}
    assert any(k.startswith("edge:") for k in x_keys)
    x = next(n["id"] for n in w.graph["nodes"] if n["name"] == "x")
    for f in w.frames[:q["at"]]:
        assert "10." not in str(f["set"].get(f"grad:{x}", ""))
    assert w.score == {"asked": 1, "answered": 0, "correct": 0, "first_try": 0, "tries": 0, "revealed": 0}
    assert w.answers == []


def test_the_picture_holds_no_answer():
    """The SVG is laid out with the final values; in practice mode their hidden text is blanked."""
    root, names, _ = LESSONS["seed"]()
    plain = gradviz.animate(root, names=names)
    w = seed_widget(ask="all")
    assert "[10., 10.]" in plain.svg
    assert "[10., 10.]" not in w.svg and "2.5000" not in w.svg and "grad_fn=" not in w.svg
    # every blanked slot is one the frames fill in before it is seen
    filled = {k for f in w.frames for k, v in f["set"].items() if v}
    for m in re.finditer(r'id="gv-([ne]\d+)-(grad|val)-\d+"[^>]*>\?<', w.svg):
        key = ("edge" if m.group(1)[0] == "e" else m.group(2)) + ":" + m.group(1)
        assert key in filled, key
    page = standalone_html(w)
    assert "[10., 10.]" not in page.split('class="gv-state"')[0]      # nor in the no-script picture


def test_submit_wrong_then_right():
    w = seed_widget()
    v = w.submit("10")
    assert (v["ok"], v["key"]) == (False, "v_shape_broadcast")
    assert w.frame == w.practice["questions"][0]["at"] - 1          # still before the answer
    v = w.submit("[10, 10]")
    assert v["ok"] is True
    (rec,) = w.answers
    assert [a["typed"] for a in rec["attempts"]] == ["10", "[10, 10]"]
    assert (rec["node"], rec["name"], rec["kind"], rec["correct"], rec["tries"], rec["typed"]) == (
        "x", "x", "grad", True, 2, "[10, 10]")
    assert rec["question"] == "Predict x.grad after o.backward():" and rec["time"] >= 0
    assert w.score == {"asked": 1, "answered": 1, "correct": 1, "first_try": 0, "tries": 2, "revealed": 0}
    assert w.frame == w.practice["questions"][0]["at"]              # the reveal
    with pytest.raises(ValueError, match="no question is open"):
        w.submit("1")


def test_unreadable_is_no_try_and_tries_run_out():
    w = seed_widget(tries=1)
    v = w.submit("x + 1")
    assert v["ok"] is None and v["key"] == "p_name" and w.answers == []
    v = w.submit("[4, 4]")
    assert v["ok"] is False
    assert w.score["answered"] == 1 and w.score["correct"] == 0
    assert w.answers[0]["correct"] is False and w.answers[0]["tries"] == 1
    assert w.frame == w.practice["questions"][0]["at"]              # out of tries: revealed all the same
    with pytest.raises(TypeError, match="a str, not int"):
        seed_widget().submit(10)


def test_not_in_practice_mode():
    root, names, _ = LESSONS["seed"]()
    w = AutogradWidget(root, names=names)
    assert w.practice == {} and w.answers == [] and w.score["asked"] == 0
    with pytest.raises(ValueError, match="not in practice mode"):
        w.submit("1")


def test_every_kind_on_the_seed():
    w = seed_widget(ask="all", kinds=list(P.KINDS))
    by = {(q["kind"], q["name"]): q for q in w.practice["questions"]}
    assert by[("forward", "a")]["expected"] == [2.0, 2.0]
    assert by[("forward", "o")]["expected"] == 20.0
    assert by[("received", "b")]["expected"] == [2.5, 2.5]
    assert by[("local", "∂b/∂a")]["expected"] == [4.0, 4.0]
    assert by[("sent", "x")]["expected"] == [10.0, 10.0]
    assert by[("second", "x")]["expected"] == [20.0, 20.0]
    assert by[("second", "x")]["at"] == len(w.frames)               # after the end: asked at the last step
    ats = [q["at"] for q in w.practice["questions"]]
    assert ats == sorted(ats)
    # a forward question comes before its value is drawn, in the forward pass
    a = by[("forward", "a")]
    assert w.frames[a["at"]]["kind"] == "fwd_out"
    # the forward value instead of the gradient is named when typed
    v = check_answer("[4, 4]", [2.5, 2.5], mistakes=[(k, _expected({"expected": m}))
                                                      for k, m in by[("received", "b")]["mistakes"]])
    assert v["mistake"] == "forward"
    for q in w.practice["questions"]:
        assert check_answer(q["answer"], _expected(q), q["dtype"])["ok"] is True, q
        for kind, m in q["mistakes"]:
            assert check_answer(P.answer_text(_expected({"expected": m})), _expected(q), q["dtype"])["ok"] is not True


def test_when_pass_asks_before_the_backward_pass():
    w = seed_widget(ask="all", kinds=["grad", "received"], when="pass")
    seed_at = next(k for k, f in enumerate(w.frames) if f["kind"] == "seed")
    assert {q["at"] for q in w.practice["questions"]} == {seed_at}
    for q in w.practice["questions"]:
        w.submit(q["answer"])
    assert w.score["correct"] == len(w.practice["questions"]) and w.frame == seed_at


def test_ask_names_and_callable():
    w = seed_widget(ask=["y"], kinds=["received", "forward"])
    assert [(q["kind"], q["name"]) for q in w.practice["questions"]] == [("forward", "y"), ("received", "y")]
    w = seed_widget(ask=lambda q: q.kind == "local" and q.name.endswith("/∂a"))
    assert [q["name"] for q in w.practice["questions"]] == ["∂b/∂a"]


@pytest.mark.parametrize("options, error, match", [
    ({"ask": "some"}, ValueError, "ask must be 'leaves', 'all'"),
    ({"ask": ["nope"]}, ValueError, "ask names 'nope'"),
    ({"kinds": ["grads"]}, ValueError, "kinds= names questions"),
    ({"tries": 0}, ValueError, "tries= must be from 1 to 20, not 0"),
    ({"choices": 9}, ValueError, "choices= must be from 2 to 6"),
    ({"hints": "yes"}, TypeError, "hints= must be True or False"),
    ({"when": "later"}, ValueError, "when= must be one of 'step', 'pass'"),
])
def test_options_are_checked(options, error, match):
    with pytest.raises(error, match=match):
        seed_widget(**options)


def test_animate_practice_option():
    root, names, _ = LESSONS["seed"]()
    w = gradviz.animate(root, names=names, practice={"ask": "leaves", "tries": 3})
    assert w.practice["tries"] == 3 and len(w.practice["questions"]) == 1
    with pytest.raises(TypeError, match="practice= takes True or a dict"):
        gradviz.animate(root, names=names, practice="x")
    with pytest.raises(TypeError, match="unexpected keyword argument 'tris'. Did you mean 'tries'"):
        gradviz.animate(root, names=names, practice={"tris": 3})
    assert gradviz.practice is practice


def test_choices():
    w = seed_widget(ask="all", kinds=["grad", "local", "received"], choices=4)
    for q in w.practice["questions"]:
        opts = q["choices"]
        assert q["answer"] in opts and len(set(opts)) == len(opts) >= 3
        right = [o for o in opts if check_answer(o, _expected(q), q["dtype"])["ok"]]
        assert right == [q["answer"]]
    # the same options every time (no randomness between runs)
    again = seed_widget(ask="all", kinds=["grad", "local", "received"], choices=4)
    assert [q["choices"] for q in again.practice["questions"]] == [q["choices"] for q in w.practice["questions"]]


def test_hints_local_factor_then_incoming_gradient():
    w = seed_widget(ask=["b"], kinds=["received"])
    (q,) = w.practice["questions"]
    assert [render("en", h) for h in q["hints"]] == ["the local factor ∂y/∂b = [5., 5.]",
                                                      "the gradient arriving at y is [0.5000, 0.5000]"]
    assert seed_widget(hints=False).practice["questions"][0]["hints"] == []


def test_a_tensor_used_twice():
    root, names, gradient = LESSONS["fan_out"]()
    w = practice(root, gradient, names=names, ask=["c"], kinds=["received"])
    (q,) = w.practice["questions"]
    assert render("en", q["hints"][0]).startswith("c is used ")
    assert "not_accumulated" in [k for k, _ in q["mistakes"]]


def test_a_batch_bias_and_one_weight():
    """Lesson 6: b1's gradient sums over the batch; typing it per sample is told so."""
    root, names, gradient = LESSONS["tiny_mlp"]()
    w = practice(root, gradient, names=names, ask=["b1", "W2"])
    by = {q["name"]: q for q in w.practice["questions"]}
    assert by["b1"]["shape"] == [4] and by["W2"]["shape"] == [4, 1]
    assert "no_batch_sum" in [k for k, _ in by["b1"]["mistakes"]]
    per_sample = dict(by["b1"]["mistakes"])["no_batch_sum"]
    assert np.shape(per_sample) == (4, 4)
    root, names, gradient = LESSONS["tiny_mlp"]()
    w = practice(root, gradient, names=names, ask=["b1"])
    v = w.submit(P.answer_text(np.asarray(per_sample)))
    assert v["ok"] is False and v["mistake"] == "no_batch_sum"
    v = w.submit(w.practice["questions"][0]["answer"])
    assert v["ok"] is True


def test_korean():
    w = seed_widget(lang="ko")
    assert render("ko", w.practice["questions"][0]["text"]) == "o.backward() 호출 뒤의 x.grad 값을 예측하세요:"
    w.submit("[10, 10]")
    assert w.answers[0]["question"] == "o.backward() 호출 뒤의 x.grad 값을 예측하세요:"


def test_saved_page_keeps_practice():
    w = seed_widget()
    w.submit("[1, 1]")
    page = standalone_html(w)
    state = json.loads(re.search(r'class="gv-state">(.*?)</script>', page).group(1))
    assert state["practice"]["questions"][0]["expected"] == [10.0, 10.0]
    assert state["answers"][0]["attempts"][0]["typed"] == "[1, 1]"
    assert state["score"]["tries"] == 1


def test_typed_markup_stays_text_in_the_state():
    w = seed_widget()
    w.submit("[1, 2]")
    w.answers = [dict(w.answers[0], typed="</script><script>alert(1)</script>")]
    page = standalone_html(w)
    assert "</script><script>alert(1)" not in page


def test_both_engines_ask_the_same():
    torch = pytest.importorskip("torch", reason="the torch engine's practice needs torch")
    x = torch.ones(2, requires_grad=True)
    y = 5 * (x + 1) ** 2
    o = (1 / 2) * torch.sum(y)
    tw = practice(o, names={"x": x, "y": y, "o": o}, ask="all", kinds=["grad", "received", "local"])
    gw = seed_widget(ask="all", kinds=["grad", "received", "local"])
    assert [(q["kind"], q["name"], q["expected"]) for q in tw.practice["questions"]] == \
        [(q["kind"], q["name"], q["expected"]) for q in gw.practice["questions"]]
    assert tw.submit("[10, 10]")["ok"] in (True, False)
    assert x.grad is None                                          # the widget put .grad back


def test_module_doctests():
    import doctest
    assert doctest.testmod(P).failed == 0


def test_another_language_keeps_the_answers_out_of_the_picture(tmp_path):
    w = seed_widget()
    w.lang = "ko"
    assert "[10., 10.]" not in w.svg
    w.save_html(tmp_path / "p.html", lang="en")
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert ".grad [10., 10.]" not in page.split('class="gv-state"')[0]


def _close(a, b):
    return np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-4, atol=1e-6)


def test_one_weight_of_a_batch_offers_the_real_slips():
    """Lesson 6 asks W2.grad = hᵀδ: the options are the transpose forgotten (h δ, the shape of W2,
    since h is square here), one example's share, never the answer; each typed slip is named."""
    root, names, gradient = LESSONS["tiny_mlp"]()
    h, W2 = names["h"].detach().numpy().astype(np.float64), names["W2"]
    w = practice(root, gradient, names=names, ask=["W2"], choices=4)
    (q,) = w.practice["questions"]
    want = _expected(q)
    Y, b2 = names["Y"].numpy().astype(np.float64), names["b2"].detach().numpy().astype(np.float64)
    delta = 2 * (h @ W2.detach().numpy().astype(np.float64) + b2 - Y) / 4     # ∂loss/∂(h @ W2): the mean of 4
    assert _close(h.T @ delta, want)
    slips = [(k, np.asarray(v)) for k, v in q["mistakes"]]
    assert not any(_close(v, want) for _, v in slips)
    wrong_side = [v for k, v in slips if k == "transpose"]
    assert any(_close(v, h @ delta) for v in wrong_side)            # Xᵀ on the wrong side, W2's shape
    assert any(_close(v, delta.T @ h) for v in wrong_side)          # δᵀ h: transposed
    shares = [v for k, v in slips if k == "no_batch_sum"]
    assert any(v.shape == (4, 1) and any(_close(v, np.outer(h[k], delta[k])) for k in range(4)) for v in shares)
    assert any(v.shape == (4, 4, 1) and _close(v.sum(0), want) for v in shares)
    # the choices: the answer once, the rest of W2's shape and each one a named slip
    assert len(q["choices"]) == 4 and q["choices"].count(q["answer"]) == 1
    for c in q["choices"]:
        v = check_answer(c, want, q["dtype"], mistakes=slips)
        assert v["ok"] is True if c == q["answer"] else (v["ok"] is False and v["mistake"] in ("transpose", "no_batch_sum", "forward", "incoming")), c
        assert np.shape(json.loads(c)) == (4, 1)
    hint = render("en", q["hints"][0])
    assert "W2.grad = hᵀ · (the gradient arriving at" in hint
    # typed: the wrong side and one example's share are told what they are, then the answer is right
    root, names, gradient = LESSONS["tiny_mlp"]()
    w2 = practice(root, gradient, names=names, ask=["W2"], tries=3)
    assert w2.submit(P.answer_text(h @ delta))["mistake"] == "transpose"
    assert w2.submit(P.answer_text(np.outer(h[1], delta[1])))["mistake"] in ("no_batch_sum",)
    assert w2.submit(q["answer"])["ok"] is True


def test_a_linear_layers_weight_gets_the_slips_through_its_transpose():
    """nn.Linear computes b + X Wᵀ (addmm of Wᵀ): W.grad = δᵀX; the slips are transposed back to W's shape."""
    gradviz.manual_seed(0)
    lin = gradviz.nn.Linear(3, 2)
    X = gradviz.randn(5, 3)
    loss = (lin(X) ** 2).mean()
    w = practice(loss, names={"X": X, "W": lin.weight, "b": lin.bias, "loss": loss}, ask=["W"])
    (q,) = w.practice["questions"]
    want = _expected(q)
    assert want.shape == (2, 3)
    delta = (2 * (lin(X) / 10)).detach().numpy().astype(np.float64)      # ∂loss/∂(XWᵀ + b), mean of 10
    Xn = X.numpy().astype(np.float64)
    assert _close(delta.T @ Xn, want)
    slips = dict((k, np.asarray(v)) for k, v in reversed(q["mistakes"]))
    assert _close(slips["transpose"], Xn.T @ delta)                  # the transpose on the wrong side: (3, 2)
    shares = [np.asarray(v) for k, v in q["mistakes"] if k == "no_batch_sum"]
    assert any(v.shape == (2, 3) for v in shares) and any(v.shape == (5, 2, 3) and _close(v.sum(0), want) for v in shares)


def _texts(w):
    return [(q["id"], q["kind"], render("en", q["text"])) for q in w.practice["questions"]]


def test_a_live_backward_press_asks_its_pass_too():
    """The button runs backward() for real: its pass is asked like the first (x.grad adds to what it held)."""
    w = seed_widget()
    assert w.submit("[10, 10]")["ok"] is True
    before = len(w.frames)
    w.backward()                                    # the user's first call: animate() wrote no .grad
    (q0, q1) = w.practice["questions"]
    assert q0["id"] == "q0" and q1["id"] == "q1" and q1["kind"] == "grad" and q1["expected"] == [10.0, 10.0]
    assert before < q1["at"] < len(w.frames) and w.frames[q1["at"]]["run"] == 1
    assert w.score["asked"] == 2 and w.score["answered"] == 1
    assert P.current(w.practice, w.answers) == q1
    w.backward()                                    # again, without zero_(): the question says what .grad held
    q2 = w.practice["questions"][-1]
    assert render("en", q2["text"]) == "x.grad holds [10., 10.] before this o.backward(). Predict x.grad after it:"
    assert q2["expected"] == [20.0, 20.0] and "not_accumulated" in [k for k, _ in q2["mistakes"]]
    assert w.submit("[20, 20]")["ok"] is False                 # q1 is open first: its answer is 10
    assert w.submit("[10, 10]")["ok"] is True
    v = w.submit("[10, 10]")                                    # this pass alone: the sum forgotten
    assert v["ok"] is False and v["mistake"] == "not_accumulated"
    assert w.submit("[20, 20]")["ok"] is True
    assert w.score["asked"] == 3 and w.score["correct"] == 3 and w.frame == q2["at"]


def test_a_second_backward_question_is_asked_in_the_second_call():
    """'.grad after a second backward() without zero_()' is asked before the press's pass shows it,
    when that press is the second call; zero_() in between makes it untrue, and it is dropped."""
    root, names, gradient = LESSONS["seed"]()
    root.backward(retain_graph=True)                            # the notebook's own first call
    w = practice(root, gradient, names=names, kinds=["second"])
    (q,) = w.practice["questions"]
    assert q["at"] == len(w.frames) and q["expected"] == [30.0, 30.0]   # animate() showed the call to 20
    w.backward()                       # that call, for real (20): the question waits for the next one
    (waiting,) = w.practice["questions"]
    assert waiting["id"] == q["id"] and waiting["at"] == len(w.frames)
    w.backward()                       # the second call: 30, asked before its pass shows it
    (again,) = w.practice["questions"]
    assert again["id"] == q["id"] and again["text"] == q["text"] and len(w.frames) > again["at"] > q["at"]
    assert w.frames[again["at"]]["run"] == 2
    assert w.submit("[30, 30]")["ok"] is True
    root, names, gradient = LESSONS["seed"]()
    root.backward(retain_graph=True)
    w = practice(root, gradient, names=names, kinds=["second"])
    w.zero_grad()
    assert w.practice["questions"] == [] and w.score["asked"] == 0


def test_a_press_asks_only_the_names_it_was_asked_to():
    root, names, gradient = LESSONS["tiny_mlp"]()
    w = practice(root, gradient, names=names, ask=["W2"], choices=4)
    w.backward()
    assert [(q["name"], q["kind"], len(q["choices"])) for q in w.practice["questions"]] == [("W2", "grad", 4)] * 2


def test_expanding_a_folded_step_moves_the_questions_after_it():
    """A big graph's picture folds its ops into groups; expand() writes a group out op by op, and
    a question asked after that step still guards the frame that shows its answer."""
    x = gradviz.ones(2, requires_grad=True)
    y = x
    for _ in range(300):
        y = y * 1.001
    o = y.sum()
    w = practice(o, names={"x": x, "o": o})
    (q,) = w.practice["questions"]
    shows = {k: v for k, v in w.frames[q["at"]]["set"].items() if v}
    i = next(k for k, f in enumerate(w.frames) if "folded" in f and k < q["at"])
    new = w.expand(i)
    assert len(new) > 1
    (moved,) = w.practice["questions"]
    assert moved["at"] == q["at"] + len(new) - 1
    assert {k: v for k, v in w.frames[moved["at"]]["set"].items() if v} == shows
