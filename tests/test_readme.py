"""The README: its first screen in the order a new reader needs, and every code block in it runs.

Python blocks run as written, each in a fresh interpreter in an empty folder (the one on real PyTorch
only where torch is installed); the two set-up commands are the ones ``.ci/run`` runs; the slides
command runs. ``tests/browser/test_readme_browser.py`` looks at the first screen.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", README, re.S | re.M)
PYTHON = [code for lang, code in BLOCKS if lang == "python"]
BASH = [line.strip() for lang, code in BLOCKS if lang == "bash" for line in code.strip().splitlines()]
COURSE = 'python3 -m venv .venv && .venv/bin/pip install -e ".[course]" && .venv/bin/python -m gradviz lab'
TESTS = 'python3 -m venv .venv && .venv/bin/pip install -e ".[test]" && .venv/bin/python -m pytest'


def test_the_first_screen_is_in_the_order_a_reader_needs():
    marks = ["**See autograd work:**", '<img src="docs/widget.apng"', "**Binder:**", "**Set-up**", COURSE, TESTS,
             "## The seed example", "| lesson | what it teaches |"]
    at = [README.index(m) for m in marks]
    assert at == sorted(at), list(zip(marks, at))
    assert README.index("| lesson |") < README.index("## For students") < README.index("## For lecturers") \
        < README.index("## With real PyTorch") < README.index("## Performance")
    assert (ROOT / "docs" / "widget.apng").read_bytes()[37:41] == b"acTL"     # the picture is animated (APNG)


def test_the_two_set_up_commands_are_what_ci_runs():
    assert BASH[:2] == [COURSE, TESTS]          # one block, one line each
    ci = (ROOT / ".ci" / "run").read_text()
    assert TESTS.replace("pip install", "pip install -q").replace(".venv/bin/python -m pytest",
                                                                  "GRADVIZ_HIDE_TORCH=1 .venv/bin/python -m pytest") in ci


def test_no_placeholder_binder_badge_and_no_stranger_package():
    assert "mybinder.org/badge" not in README and "v2/gh/gradviz/gradviz" not in README
    assert "pip install gradviz" not in README and '"gradviz[' not in README


def test_every_docs_link_exists():
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert len(links) >= 8
    for link in links:
        assert (ROOT / link).exists(), link
    for page in (ROOT / "docs").glob("*.md"):
        for link in re.findall(r"\]\(([\w./-]+\.(?:md|png|apng))", page.read_text()):
            assert (page.parent / link).exists(), (page.name, link)


@pytest.mark.parametrize("code", PYTHON, ids=[f"block{i}" for i in range(len(PYTHON))])
def test_every_python_block_runs(code, tmp_path):
    if re.search(r"^import torch\b", code, re.M):
        pytest.importorskip("torch", reason="this block is on real PyTorch, which is not installed here")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    for expected in re.findall(r"print\(.*\)\s+# (tensor\(.*\))$", code, re.M):
        assert expected in r.stdout, (expected, r.stdout)


def test_the_slides_command_runs(tmp_path):
    (command,) = [c for c in BASH if "gradviz slides" in c]
    (tmp_path / "notebooks").symlink_to(ROOT / "notebooks")
    args = command.split()[1:]                      # .venv/bin/python -> this interpreter
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "<section" in (tmp_path / "lecture.html").read_text(encoding="utf-8")
