"""Every word of the widget exists in English and Korean, with the same fields."""

import doctest
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
