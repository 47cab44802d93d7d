"""Every word of the widget exists in English and Korean, with the same fields."""

import doctest
import html
import re

import pytest

from gradviz.widget import AutogradWidget, i18n
from widget_lessons import LESSONS

FIELD = re.compile(r"\{(\w+)\}")


def test_every_key_in_every_language():
    en = set(i18n.STRINGS["en"])
    for lang in i18n.LANGS:
        assert set(i18n.STRINGS[lang]) == en, lang


@pytest.mark.parametrize("key", sorted(i18n.STRINGS["en"]))
def test_same_fields_in_every_language(key):
    want = set(FIELD.findall(i18n.STRINGS["en"][key]))
    for lang in i18n.LANGS:
        assert set(FIELD.findall(i18n.STRINGS[lang][key])) == want, (lang, key)


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_every_caption_is_fully_worded_in_korean(lesson):
    root, names, gradient = LESSONS[lesson]()
    w = AutogradWidget(root, gradient, names=names, lang="ko")
    w.retain_graph = True
    w.backward()
    w.zero_grad()
    for i in range(len(w.frames)):
        text = w.caption(i)
        assert text and not FIELD.search(text), (i, text)
        assert re.search(r"[가-힣]", text) or w.frames[i]["kind"] in ("zero",), (i, text)


def test_the_module_doctests():
    assert doctest.testmod(i18n).failed == 0


def test_unknown_language():
    with pytest.raises(ValueError, match="lang must be one of en, ko"):
        i18n.strings("fr")


KO_PARTICLE = re.compile(r"(\}|\)|[A-Za-z0-9_.])\s?(은|는|이|가|을|를|으로|로|와|과)(?=[\s.,:;!?)]|$)")


@pytest.mark.parametrize("key", sorted(i18n.STRINGS["ko"]))
def test_korean_needs_no_particle_after_a_number_or_code_name(key):
    """'0.5 을', '[10, 10] 를', 'AddBackward0 가': which particle fits depends on how the value
    is read, so no Korean sentence puts one right after a field, a number or a code name."""
    text = i18n.STRINGS["ko"][key]
    assert not KO_PARTICLE.search(text), (key, text)


def test_korean_says_gradient_one_way():
    words = " ".join(i18n.STRINGS["ko"].values())
    assert "기울기" not in words and "그라디언트" in words
    assert "리프" not in words and "잎 텐서" in words          # one word for a leaf, too
    assert "scalar" not in words.replace("scalar outputs", "")


def test_korean_captions_of_a_lesson_have_no_particle_after_a_value():
    root, names, gradient = LESSONS["seed"]()
    w = AutogradWidget(root, gradient, names=names, lang="ko")
    for i in range(len(w.frames)):
        assert not KO_PARTICLE.search(w.caption(i)), w.caption(i)


VALUE_FIELDS = {"value", "seed", "total", "after", "grads", "items", "inputs", "terms", "g", "before", "gin",
                "local", "grad", "diff"}


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_no_period_right_after_a_number(lang):
    """PyTorch writes a whole float as '15.': a sentence ending '= {total}.' would read '= 15..'."""
    for key, text in i18n.STRINGS[lang].items():
        for m in FIELD.finditer(text):
            if m.group(1) in VALUE_FIELDS:
                assert not text[m.end():].startswith("."), (key, text)


ENGLISH_TIP = re.compile(r"leaf tensor|result of|grad_fn of|gradient|constant|adds the|summarised|shape \[|this tensor")


def _titles(svg):
    return [html.unescape(t) for t in re.findall(r"<title>(.*?)</title>", svg, re.S)]


@pytest.mark.parametrize("lesson", ["seed", "tiny_mlp", "neuron"])
def test_the_graphs_tooltips_speak_korean_too(lesson):
    """Hovering a node or an edge of a Korean widget reads Korean (issue 8): the tooltips are worded
    through the same table as the captions (gradviz.drawing.dot_text.WORDS is its English part), say
    그라디언트, and put no particle after a value or a code name.  Switching lang re-words them."""
    root, names, gradient = LESSONS[lesson]()
    w = AutogradWidget(root, gradient, names=names, lang="ko")
    titles = _titles(w.svg)
    assert len(titles) > 10
    assert [t for t in titles if ENGLISH_TIP.search(t)] == []
    assert any("그라디언트" in t for t in titles) and any("잎(leaf) 텐서" in t for t in titles)
    assert not [t for t in titles if KO_PARTICLE.search(t.split(": tensor(")[0])]
    layout = re.sub(r"<title>.*?</title>", "", w.svg, flags=re.S)
    w.lang = "en"                                # worded anew, laid out as before
    assert any("gradient sent back along this edge" in t for t in _titles(w.svg))
    assert re.sub(r"<title>.*?</title>", "", w.svg, flags=re.S) == layout
    w.lang = "ko"
    assert _titles(w.svg) == titles


def test_every_picture_word_has_a_korean_one():
    from gradviz.drawing.dot_text import WORDS
    for key, text in WORDS.items():
        assert i18n.STRINGS["en"][key] == text
        assert i18n.STRINGS["ko"][key] != text or not re.search(r"[a-z]{3} [a-z]{3}", text), key


def test_a_page_saved_in_korean_has_korean_tooltips(tmp_path):
    root, names, gradient = LESSONS["seed"]()
    w = AutogradWidget(root, gradient, names=names)
    page = w.save_html(tmp_path / "ko.html", lang="ko").read_text(encoding="utf-8")
    assert "잎(leaf) 텐서" in page and "leaf tensor, requires_grad" not in page
    assert "leaf tensor, requires_grad" in w.svg          # the widget itself keeps its language
