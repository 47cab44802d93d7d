"""Practice mode in a real Chromium: a saved page and a deck (offline, no kernel) and a live JupyterLab.

A wrong answer, then the right one; the verdict, the hint and the reveal appear; keyboard only (→
to the question, type, Enter, → on); what a student types never becomes markup; text stays legible
(≥ 11 px) and the question in view at 1366×768 and on a 1280×720 slide.  In JupyterLab the kernel's
``w.answers`` holds both tries.  Screenshots go to tests/artifacts/practice-*.png: look at them.
"""

import json
import pathlib
import re

import pytest

from browser.conftest import settle, visible_nodes, wait_ready
from widget_lessons import LESSONS

def expect(locator):
    """Playwright's expect (imported here: without Playwright the module is still collected, then skipped)."""
    from playwright.sync_api import expect as playwright_expect
    return playwright_expect(locator)


MARKUP = '<img src=x onerror="window.__gvPwned=1"><b id="gv-bold">b</b>'


def small_text(widget):
    """Every visible text of the practice part and the caption drawn below 11 px, as (text, px)."""
    return widget.evaluate("""w => [...w.querySelectorAll('.gv-practice *, .gv-caption')]
        .filter(e => e.offsetParent !== null && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
        .map(e => [e.textContent.trim().slice(0, 30), parseFloat(getComputedStyle(e).fontSize)
                   * (w.getBoundingClientRect().width / w.offsetWidth || 1)])
        .filter(([t, px]) => px < 11)""")


def in_view(page, locator):
    box = locator.bounding_box()
    vp = page.viewport_size
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= vp["height"] + 1 \
        and box["x"] >= 0 and box["x"] + box["width"] <= vp["width"] + 1


def count(widget):
    return widget.locator('[data-gv="count"]').inner_text().strip()


def no_markup_from_typing(page, widget):
    assert widget.locator("img").count() == 0 and page.locator("#gv-bold").count() == 0
    assert page.evaluate("() => window.__gvPwned") is None


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    import gradviz
    root, names, _ = LESSONS["seed"]()
    w = gradviz.practice(root, names=names, kinds=["grad", "second"])
    path = tmp_path_factory.mktemp("practice") / "practice.html"
    w.save_html(path)
    return w, path


def test_saved_page_keyboard_only_wrong_then_right(offline_page, saved, artifacts):
    w, path = saved
    page = offline_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(path.as_uri())
    widget = wait_ready(page)
    assert visible_nodes(widget) >= 10
    grad_q, second_q = w.practice["questions"]
    n = len(w.frames)

    # keyboard only: focus the widget, → until it stops at the question and puts the cursor in the answer
    widget.focus()
    for _ in range(n + 3):
        page.keyboard.press("ArrowRight")
    assert count(widget) == f"Step {grad_q['at']} / {n}"        # stopped just before x.grad is shown
    answer = widget.locator('[data-gv="answer"]')
    assert answer.evaluate("e => e === document.activeElement")
    label = widget.locator(f'label[for="{answer.get_attribute("id")}"]')
    assert label.inner_text() == "Predict x.grad after o.backward():"
    verdict = widget.locator('[data-gv="verdict"]')
    assert verdict.get_attribute("aria-live") == "polite" and verdict.get_attribute("role") == "status"
    assert "gv-practice-hide" in widget.get_attribute("class")          # the derivation waits
    assert widget.locator(".gv-deriv").get_attribute("data-gv-note").startswith("The derivation appears")

    page.keyboard.type("10")
    page.keyboard.press("Enter")
    assert verdict.inner_text().startswith("✗ Right value, wrong shape: the answer has shape (2,)")
    assert "Tries left: 1" in verdict.inner_text()
    assert widget.locator('[data-gv="hint"]').inner_text() == "Hint: the local factor ∂a/∂x = [1., 1.]"
    assert count(widget) == f"Step {grad_q['at']} / {n}"          # not revealed yet
    page.screenshot(path=str(artifacts / "practice-saved-wrong-1366.png"))
    assert in_view(page, widget.locator(".gv-practice")) and not small_text(widget)

    answer.fill("")
    page.keyboard.type("[10, 10]")
    page.keyboard.press("Enter")
    assert verdict.inner_text() == "✓ Right: [10, 10]"
    assert count(widget) == f"Step {grad_q['at'] + 1} / {n}"       # the reveal: x's gradient arrives
    assert widget.evaluate("w => w === document.activeElement")       # → goes on from here
    assert "Score: 1 right, 1 of 2 answered" in widget.locator('[data-gv="score"]').inner_text()

    # on to the end: the question after the last step (a second backward() without zero_())
    page.keyboard.press("End")
    assert widget.locator('[data-gv="question"]').inner_text().startswith("o.backward() runs again")
    assert answer.evaluate("e => e === document.activeElement")
    page.keyboard.type(MARKUP)
    page.keyboard.press("Enter")
    assert verdict.inner_text().startswith("That cannot be read as numbers")   # no try spent on it
    no_markup_from_typing(page, widget)
    answer.fill("")
    page.keyboard.type("[10, 10]")
    page.keyboard.press("Enter")
    assert verdict.inner_text().startswith("✗ Only part of it: .grad adds up every contribution")
    answer.fill("")
    page.keyboard.type("2*10, 2*10")
    page.keyboard.press("Enter")
    assert verdict.inner_text() == "✓ Right: [20, 20]"
    assert "gv-practice-hide" not in widget.get_attribute("class")      # every question settled
    assert "Score: 2 right, 2 of 2 answered" in widget.locator('[data-gv="score"]').inner_text()
    page.screenshot(path=str(artifacts / "practice-saved-end-1366.png"))

    # the answers come out of the page as a file: every try, the score, this page and widget
    host = page.locator("[data-gv-standalone]").get_attribute("id")
    download = widget.locator('[data-gv="download"]')
    assert download.inner_text() == "Download answers"
    with page.expect_download() as got:
        download.click()
    assert re.fullmatch(r"answers-practice-o-" + re.escape(host) + r"\.json", got.value.suggested_filename)
    data = json.loads(pathlib.Path(got.value.path()).read_text(encoding="utf-8"))
    assert (data["format"], data["page"], data["widget"], data["root"]) == ("gradviz-answers", "practice.html", host, "o")
    assert data["score"]["correct"] == 2 and data["score"]["tries"] == 4
    assert [a["typed"] for a in data["answers"][0]["attempts"]] == ["10", "[10, 10]"]
    assert [a["typed"] for a in data["answers"][1]["attempts"]] == ["[10, 10]", "2*10, 2*10"]

    # the answers are kept in the page: a reload still has them, every try, under this page's own key
    page.reload()
    widget = wait_ready(page)
    expect(widget.locator('[data-gv="score"]')).to_contain_text("Score: 2 right, 2 of 2 answered", timeout=20000)
    keys = page.evaluate("h => Object.keys(localStorage).filter(k => k.startsWith('gradviz-practice:') && k.includes('#' + h + ':'))", host)
    assert len(keys) == 1 and keys[0].startswith("gradviz-practice:") and "/practice.html#" in keys[0]
    kept = page.evaluate("k => JSON.parse(localStorage.getItem(k))", keys[0])
    assert [a["typed"] for a in kept[0]["attempts"]] == ["10", "[10, 10]"]
    assert [a["typed"] for a in kept[1]["attempts"]] == ["[10, 10]", "2*10, 2*10"]
    assert page.gv_errors == [] and page.gv_blocked == []


def test_saved_page_play_stops_at_a_question(offline_page, tmp_path, artifacts):
    """Play runs up to a question and stops there (issue 22): while the question waits nothing plays,
    so the button shows ▶ with aria-label Play, not pressed; pressing it again plays nothing (the
    cursor goes to the answer); once answered, Play goes on to the end."""
    import gradviz
    root, names, _ = LESSONS["seed"]()
    w = gradviz.practice(root, names=names, kinds=["grad"], speed=4)
    path = tmp_path / "practice-play-waits.html"        # a page (and localStorage key) of this test's own
    w.save_html(path)
    page = offline_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(path.as_uri())
    widget = wait_ready(page)
    (q,), n = w.practice["questions"], len(w.frames)
    play, answer = widget.locator('[data-gv="play"]'), widget.locator('[data-gv="answer"]')

    play.click()
    expect(widget.locator('[data-gv="question"]')).to_be_visible(timeout=60000)
    expect(play).to_have_attribute("aria-pressed", "false", timeout=20000)
    expect(play).to_have_attribute("aria-label", "Play")
    expect(play).to_have_attribute("data-icon", "play")
    settle(page)
    assert count(widget) == f"Step {q['at']} / {n}"              # stopped just before the answer shows
    page.screenshot(path=str(artifacts / "practice-play-waits-1366.png"))

    play.click()                                                  # nothing plays past an open question
    settle(page)
    assert play.get_attribute("aria-pressed") == "false" and play.get_attribute("data-icon") == "play"
    assert count(widget) == f"Step {q['at']} / {n}"
    assert answer.evaluate("e => e === document.activeElement")

    answer.fill("[10, 10]")
    answer.press("Enter")
    expect(widget.locator('[data-gv="verdict"]')).to_have_text("✓ Right: [10, 10]")
    play.click()
    expect(widget.locator('[data-gv="count"]')).to_have_text(f"Step {n} / {n}", timeout=60000)
    expect(play).to_have_attribute("aria-pressed", "false", timeout=20000)
    assert page.gv_errors == [] and page.gv_blocked == []


def test_saved_page_mlp_hint_and_hidden_derivation(offline_page, tmp_path, artifacts):
    """Lesson 6's question (W2.grad of the 2-4-1 network): a wrong try's hint names the product as the
    cell writes it (h @ W2, not a made-up letter), and the derivation panel, scrolled to the step's
    line behind its cover, still shows the note that it waits for the answers."""
    import gradviz
    root, names, _ = LESSONS["tiny_mlp"]()
    w = gradviz.practice(root, names=names, ask=["W2"])
    path = tmp_path / "practice-mlp-hint.html"          # a page (and localStorage key) of this test's own
    w.save_html(path)
    page = offline_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(path.as_uri())
    widget = wait_ready(page)
    widget.focus()
    page.keyboard.press("End")                          # stops at the question
    answer = widget.locator('[data-gv="answer"]')
    expect(answer).to_be_visible(timeout=20000)
    answer.fill("[1, 2, 3, 4]")
    answer.press("Enter")
    hint = widget.locator('[data-gv="hint"]')
    expect(hint).to_have_text("Hint: h @ W2: each row of h (one example) sends back its own share and PyTorch adds "
                              "them up, W2.grad = hᵀ · (the gradient arriving at h @ W2)", timeout=20000)
    settle(page)
    note = widget.evaluate("""w => { const d = w.querySelector('.gv-deriv'), b = getComputedStyle(d, '::before');
        return { content: b.content, position: b.position, scrolled: d.scrollTop > 0 }; }""")
    assert note["content"] == '"The derivation appears once the questions are answered."'
    assert note["position"] == "sticky", note                     # in view however far the panel scrolled
    page.screenshot(path=str(artifacts / "practice-mlp-hint-1366.png"))
    assert not small_text(widget)
    assert page.gv_errors == [] and page.gv_blocked == []


def test_saved_pages_keep_their_answers_apart(offline_page, tmp_path):
    """Two widgets on one page, and a page saved again at the same path with other questions: each
    keeps its own answers (the key is the page, the widget and its questions)."""
    import gradviz
    from gradviz.widget import standalone_html
    root, names, _ = LESSONS["seed"]()
    one = gradviz.practice(root, names=names)
    two = gradviz.practice(root, names=names, ask="all", kinds=["received"])
    path = tmp_path / "two-widgets.html"
    path.write_text("<!DOCTYPE html><html><body>" + standalone_html(one, full_page=False, element_id="gv-keys-a")
                    + standalone_html(two, full_page=False, element_id="gv-keys-b") + "</body></html>", encoding="utf-8")
    page = offline_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(path.as_uri())
    first = wait_ready(page, "#gv-keys-a")
    wait_ready(page, "#gv-keys-b")
    first.focus()
    page.keyboard.press("End")                         # stops at the question (x.grad)
    expect(first.locator('[data-gv="reveal"]')).to_be_visible(timeout=20000)
    first.locator('[data-gv="reveal"]').click()
    expect(first.locator('[data-gv="verdict"]')).to_have_text("The answer: [10, 10].")
    keys = page.evaluate("() => Object.keys(localStorage).filter(k => k.includes('/two-widgets.html#gv-keys-'))")
    assert len(keys) == 1 and "#gv-keys-a:" in keys[0]
    # the same path, the same element id, other questions: nothing of the first page's shows
    other = gradviz.practice(root, names=names, kinds=["second"])
    path.write_text(standalone_html(other, element_id="gv-keys-a"), encoding="utf-8")
    page.reload()
    widget = wait_ready(page, "#gv-keys-a")
    expect(widget.locator('[data-gv="score"]')).to_have_text("Score: 0 right, 0 of 1 answered", timeout=20000)
    assert widget.locator('[data-gv="download"]').is_hidden()          # nothing answered: nothing to download
    assert page.gv_errors == [] and page.gv_blocked == []


def test_saved_page_multiple_choice_and_lecture(offline_page, tmp_path, artifacts):
    import gradviz
    root, names, _ = LESSONS["seed"]()
    w = gradviz.practice(root, names=names, ask="all", kinds=["local"], choices=4)
    path = tmp_path / "choices.html"
    w.save_html(path)
    page = offline_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(path.as_uri())
    widget = wait_ready(page)
    widget.locator('[data-gv="to-backward"]').click()
    for _ in range(3):
        widget.locator('[data-gv="step"]').click()
    q = w.practice["questions"][0]
    assert widget.locator('[data-gv="question"]').inner_text() == "Predict the local factor of o = 0.5 c: ∂o/∂c = ?"
    options = widget.locator('[data-gv="choice"]')
    assert options.all_inner_texts() == q["choices"]
    wrong = next(c for c in q["choices"] if c != q["answer"])
    options.filter(has_text=re.compile("^" + re.escape(wrong) + "$")).click()
    assert widget.locator('[data-gv="verdict"]').inner_text().startswith("✗")
    page.screenshot(path=str(artifacts / "practice-choices-1366.png"))
    options.filter(has_text=re.compile("^" + re.escape(q["answer"]) + "$")).click()
    assert widget.locator('[data-gv="verdict"]').inner_text() == f"✓ Right: {q['answer']}"

    # lecture mode: the room predicts, one key reveals
    w = gradviz.practice(root, names=names, lecture=True, when="pass")
    path = tmp_path / "lecture.html"
    w.save_html(path)
    page.goto(path.as_uri())
    widget = wait_ready(page)
    widget.focus()
    seed = w.practice["questions"][0]["at"]
    for _ in range(seed - 1):
        page.keyboard.press("ArrowRight")
    assert count(widget) == f"Step {seed} / {len(w.frames)}"        # the question, the answer still hidden
    assert widget.locator('[data-gv="answer"]').is_hidden()
    assert widget.locator('[data-gv="question"]').inner_text() == "Predict x.grad after o.backward():"
    page.screenshot(path=str(artifacts / "practice-lecture-1366.png"))
    page.keyboard.press("ArrowRight")                               # the one key
    assert widget.locator('[data-gv="verdict"]').inner_text() == "The answer: [10, 10]."
    assert count(widget) == f"Step {seed + 1} / {len(w.frames)}"

    # playing (a page of its own: the answers above are kept for the first): the tick of play stops
    # on the step that asks, the answer still hidden (it revealed it one step later, unasked); the
    # one key reveals it there, and play goes on to the end
    path = tmp_path / "lecture-play.html"
    w.save_html(path)
    page.goto(path.as_uri())
    widget = wait_ready(page)
    widget.locator('[data-gv="speed"]').select_option("8")
    widget.focus()
    page.keyboard.press(" ")
    page.wait_for_function("""w => w.querySelector('[data-gv="play"]').getAttribute('aria-pressed') === 'false'
        && !w.querySelector('[data-gv="practice-form"]').hidden""", arg=widget.element_handle(), timeout=60000)
    assert count(widget) == f"Step {seed} / {len(w.frames)}"
    assert widget.locator('[data-gv="verdict"]').inner_text() == ""
    assert widget.locator('[data-gv="question"]').inner_text() == "Predict x.grad after o.backward():"
    page.screenshot(path=str(artifacts / "practice-lecture-playing-1366.png"))
    page.keyboard.press(" ")                                        # the one key
    expect(widget.locator('[data-gv="verdict"]')).to_have_text("The answer: [10, 10].")
    page.wait_for_function("w => w.gvControl.atEnd()", arg=widget.element_handle(), timeout=60000)
    assert page.gv_errors == []


def test_deck_practice_offline(offline_page, tmp_path, artifacts):
    from test_notebooks import NOTEBOOKS
    from test_slides import deck
    path = tmp_path / "01.html"
    path.write_text(deck(NOTEBOOKS / "01_variables_and_gradients.ipynb"), encoding="utf-8")
    page = offline_page
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(path.as_uri())
    page.wait_for_function("() => window.gradvizDeck && window.gradvizDeck.isReady()")
    page.evaluate(r"""() => { const d = window.gradvizDeck;
        const asks = (h) => { const s = h.querySelector('script.gv-state');
                              return s && /"practice":\{"questions":\[\{/.test(s.textContent); };
        const box = [...document.querySelectorAll('.gv-fit')].find(b => asks(b.shadowRoot.querySelector('.gv-host')));
        const i = d.getIndices(box.closest('section')); d.slide(i.h, i.v); }""")
    widget = page.locator(".gv-widget.gv-practicing >> visible=true").first
    widget.wait_for(state="visible", timeout=20000)
    widget.locator('[data-gv="to-backward"]').click()               # stops before the backward pass
    question = widget.locator('[data-gv="question"]')
    assert question.inner_text() == "Predict x.grad after o.backward():"
    answer = widget.locator('[data-gv="answer"]')
    answer.fill("5*(1+1)")
    answer.press("Enter")
    verdict = widget.locator('[data-gv="verdict"]')
    assert verdict.inner_text().startswith("✗ Right value, wrong shape")
    assert in_view(page, widget.locator(".gv-practice")) and not small_text(widget)
    page.screenshot(path=str(artifacts / "practice-deck-1280x720.png"))
    answer.fill(MARKUP)
    answer.press("Enter")
    no_markup_from_typing(page, widget)
    answer.fill("[10, 10]")
    answer.press("Enter")
    assert verdict.inner_text() == "✓ Right: [10, 10]"
    page.screenshot(path=str(artifacts / "practice-deck-right-1280x720.png"))
    # a deck's answers come out as a file too (the widget lives in a shadow root there)
    with page.expect_download() as got:
        widget.locator('[data-gv="download"]').click()
    data = json.loads(pathlib.Path(got.value.path()).read_text(encoding="utf-8"))
    assert data["page"] == "01.html" and data["score"]["correct"] == 1
    assert [a["typed"] for a in data["answers"][0]["attempts"]] == ["5*(1+1)", "[10, 10]"]
    assert page.gv_errors == [] and page.gv_blocked == []


CELLS = [
    "import gradviz\nimport gradviz as torch",
    "x = torch.ones(2, requires_grad=True)\ny = 5 * (x + 1) ** 2\no = (1/2) * torch.sum(y)\n"
    "w = gradviz.practice(o)\nw",
    "[(a['typed'], a['ok']) for a in w.answers[0]['attempts']], w.score['correct'], w.score['tries']",
]


def lab_widget(jupyterlab, page, name, cells):
    """A new notebook of ``cells`` in JupyterLab at 1366x768, run all: its widget, ready and in view."""
    page.set_viewport_size({"width": 1366, "height": 768})
    jupyterlab.run_notebook(page, jupyterlab.new_notebook(name, cells))
    widget = wait_ready(page, ".jp-OutputArea-output", timeout=90000)
    widget.scroll_into_view_if_needed()
    settle(page)
    return widget


def rerun_last_cell(page, want, shot):
    """Run the notebook's third cell again (it prints what the kernel holds) and wait for ``want``."""
    cells = page.locator(".jp-NotebookPanel").filter(visible=True).locator(".jp-Notebook .jp-Cell")
    last = cells.nth(2)
    last.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    try:
        last.locator(".jp-OutputArea-output").filter(has_text=want).wait_for(timeout=30000)
    finally:
        page.screenshot(path=str(shot))


def test_jupyterlab_answers_reach_the_kernel(jupyterlab, lab_page, artifacts):
    page = lab_page
    widget = lab_widget(jupyterlab, page, "practice.ipynb", CELLS)
    widget.focus()
    for _ in range(20):
        page.keyboard.press("ArrowRight")
    answer = widget.locator('[data-gv="answer"]')
    assert answer.evaluate("e => e === document.activeElement")
    page.keyboard.type("[1, 1]")
    page.keyboard.press("Enter")
    verdict = widget.locator('[data-gv="verdict"]')
    assert verdict.inner_text().startswith("✗ That is the forward value, not the gradient.")
    page.screenshot(path=str(artifacts / "practice-lab-wrong-1366.png"))
    answer.fill("")
    page.keyboard.type(MARKUP)
    page.keyboard.press("Enter")
    no_markup_from_typing(page, widget)
    answer.fill("")
    page.keyboard.type("[10, 10]")
    page.keyboard.press("Enter")
    assert verdict.inner_text() == "✓ Right: [10, 10]"
    page.screenshot(path=str(artifacts / "practice-lab-right-1366.png"))

    # the kernel has both tries (the unreadable markup was no try)
    rerun_last_cell(page, "([('[1, 1]', False), ('[10, 10]', True)], 1, 2)", artifacts / "practice-lab-kernel.png")
    assert not [e for e in page.gv_errors if "gradviz" in e or "gv-" in e]


def test_notebook7_answers_reach_the_kernel(notebook7, notebook7_page, artifacts):
    page, nb = notebook7_page, notebook7
    page.set_viewport_size({"width": 1366, "height": 768})
    name = nb.new_notebook("practice7.ipynb", CELLS)
    nb.open(page, name)
    nb.command(page, "notebook:run-all-cells")
    widget = wait_ready(page, timeout=60000)
    widget.locator('[data-gv="to-backward"]').click()
    for _ in range(6):
        widget.locator('[data-gv="step"]').click()
    answer = widget.locator('[data-gv="answer"]')
    answer.fill("[5, 5]")
    answer.press("Enter")
    verdict = widget.locator('[data-gv="verdict"]')
    assert verdict.inner_text().startswith("✗")
    answer.fill("[10, 10]")
    answer.press("Enter")
    assert verdict.inner_text() == "✓ Right: [10, 10]"
    # the kernel's traits, read back by running the last cell again
    last = page.locator(".jp-Notebook .jp-Cell").filter(visible=True).nth(2)
    last.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    want = "([('[5, 5]', False), ('[10, 10]', True)], 1, 2)"
    try:
        last.locator(".jp-OutputArea-output").filter(has_text=want).wait_for(timeout=30000)
    finally:
        page.screenshot(path=str(artifacts / "practice-notebook7.png"))


PRESS_CELLS = [
    "import gradviz\nimport gradviz as torch",
    "x = torch.ones(2, requires_grad=True)\ny = 5 * (x + 1) ** 2\no = (1/2) * torch.sum(y)\n"
    "w = gradviz.practice(o)\nw",
    "w.score['asked'], w.score['correct'], [a['typed'] for a in w.answers], x.grad",
]


def test_jupyterlab_a_backward_press_asks_its_pass(jupyterlab, lab_page, artifacts):
    """The live backward() button runs the engine for real: its pass is asked like the first one,
    the second press says what x.grad held (it adds up), and the kernel has every answer."""
    page = lab_page
    widget = lab_widget(jupyterlab, page, "practice-press.ipynb", PRESS_CELLS)
    question, answer = widget.locator('[data-gv="question"]'), widget.locator('[data-gv="answer"]')
    verdict = widget.locator('[data-gv="verdict"]')
    widget.focus()
    page.keyboard.press("End")                                   # stops at the question
    expect(question).to_have_text("Predict x.grad after o.backward():", timeout=30000)
    answer.fill("[10, 10]")
    answer.press("Enter")
    expect(verdict).to_have_text("✓ Right: [10, 10]", timeout=30000)

    for typed, asked in (("[10, 10]", "Predict x.grad after o.backward():"),
                         ("[20, 20]", "x.grad holds [10., 10.] before this o.backward(). Predict x.grad after it:")):
        widget.locator('[data-gv="backward"]').click()          # the kernel runs it; its pass plays and stops
        expect(question).to_have_text(asked, timeout=60000)
        expect(answer).to_be_visible(timeout=30000)
        expect(widget.locator('[data-gv="score"]')).to_contain_text("answered", timeout=30000)
        page.screenshot(path=str(artifacts / f"practice-lab-press-{typed[1:3]}.png"))
        answer.fill(typed)
        answer.press("Enter")
        expect(verdict).to_have_text(f"✓ Right: {typed}", timeout=30000)
    expect(widget.locator('[data-gv="score"]')).to_contain_text("Score: 3 right, 3 of 3 answered", timeout=30000)

    rerun_last_cell(page, "(3, 3, ['[10, 10]', '[10, 10]', '[20, 20]'], tensor([20., 20.]))",
                    artifacts / "practice-lab-press-kernel.png")
    assert not [e for e in page.gv_errors if "gradviz" in e or "gv-" in e]
