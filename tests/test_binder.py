"""Binder's build, as closely as this machine allows: a fresh virtual environment installed ONLY from
binder/requirements.txt, with pip run from the repository's root as repo2docker runs it, then every
lesson executed there, lesson 7 on the CPU build of PyTorch that file installs (and a slide deck
made there).

repo2docker, when a binder/ folder exists, installs nothing of the repository by itself: it runs
``pip install -r binder/requirements.txt`` in the repository's root after copying it in (a line
starting with "." counts as a local requirement), so "." in that file is the repository. A
non-editable install also proves the wheel carries the widget's and the slides' static files.
"""

import os
import re
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from test_notebooks import LESSONS, NOTEBOOKS, ROOT, check_lesson

BINDER = ROOT / "binder"

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("binder")]   # (one worker builds the environment once)

RUNNER = textwrap.dedent("""
    # run every lesson given, in a fresh kernel started in notebooks/, and save the executed copy
    import sys
    from pathlib import Path

    import nbclient, nbformat

    out = Path(sys.argv[1])
    for path in map(Path, sys.argv[2:]):
        nb = nbformat.read(path, as_version=4)
        try:
            nbclient.NotebookClient(nb, timeout=180, kernel_name="python3", store_widget_state=True,
                                    resources={"metadata": {"path": str(path.parent)}}).execute()
        except nbclient.exceptions.CellExecutionError:   # saved as it stopped: the test reads why
            print("stopped", path.name, flush=True)
        nbformat.write(nb, out / path.name)
        print("ran", path.name, flush=True)
""")

PROBE = "import sys, gradviz; print(sys.executable); print(gradviz.__file__)"


def test_binder_files():
    lines = [ln.strip() for ln in (BINDER / "requirements.txt").read_text().splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    assert lines == [".[course]",               # gradviz itself, with JupyterLab and the slides
                     "--extra-index-url https://download.pytorch.org/whl/cpu",   # lesson 7: PyTorch's
                     "torch==2.13.0+cpu"]       # CPU build (+cpu: never PyPI's CUDA build)
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    for deps in (project["dependencies"], extras["widget"], extras["course"], extras["test"]):
        assert not any(re.match(r"torch\b", d) for d in deps), deps   # not a dependency of gradviz
    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.\d+", runtime)
    assert int(runtime.split(".")[1]) >= 10     # pyproject: requires-python >= 3.10
    assert not (BINDER / "apt.txt").exists()    # graphviz-pure: no system Graphviz to install
    assert not (BINDER / "environment.yml").exists()   # it would take precedence over requirements.txt


@pytest.fixture(scope="module")
def binder_env(tmp_path_factory):
    """A fresh venv with only what binder/requirements.txt installs; returns (python, env)."""
    tmp = tmp_path_factory.mktemp("binder")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH", "JUPYTER_DATA_DIR",
                        "JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               JUPYTER_DATA_DIR=str(tmp / "jupyter-data"),       # no kernelspec of this machine's user
               JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"),
               JUPYTER_RUNTIME_DIR=str(tmp / "jupyter-runtime"),
               JUPYTER_PLATFORM_DIRS="1", JUPYTER_PREFER_ENV_PATH="1")
    if not _reachable("download.pytorch.org"):
        # PyTorch's index cannot be reached from here (a closed network, as on CI): pip skips it at
        # once instead of retrying it for every package, and takes the same CPU wheel (torch
        # 2.13.0+cpu) from the machine's own index or wheel folder, as the file asks for.
        env["PIP_RETRIES"] = "0"
    # (--no-compile: Python compiles each module when it is first imported anyway; compiling all of
    # torch's and JupyterLab's files up front is most of an install's time and tests nothing)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile",
                          "--disable-pip-version-check", "-r", "binder/requirements.txt"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    return venv / "bin" / "python", env


def _reachable(host):
    try:
        socket.getaddrinfo(host, 443)
        return True
    except OSError:
        return False


def test_the_lessons_import_the_installed_gradviz(binder_env):
    python, env = binder_env
    r = subprocess.run([str(python), "-c", PROBE], cwd=NOTEBOOKS, env=env, capture_output=True, text=True,
                       timeout=120, check=True)
    executable, module = r.stdout.split()
    venv = python.parent.parent
    assert Path(executable).parent.parent == venv
    assert Path(module).is_relative_to(venv) and not Path(module).is_relative_to(ROOT)
    jl = subprocess.run([str(python), "-m", "jupyter", "lab", "--version"], env=env, capture_output=True,
                        text=True, timeout=120)
    assert jl.returncode == 0 and jl.stdout.startswith("4.")


def test_binder_has_pytorchs_cpu_build(binder_env):
    """Lesson 7 needs real PyTorch: the image has its CPU build, the version the tests compare with."""
    python, env = binder_env
    r = subprocess.run([str(python), "-c", "import torch; print(torch.__version__, torch.version.cuda)"],
                       cwd=NOTEBOOKS, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["2.13.0+cpu", "None"]


def test_every_lesson_runs_in_the_binder_env(binder_env, tmp_path):
    python, env = binder_env
    (tmp_path / "runner.py").write_text(RUNNER)
    r = subprocess.run([str(python), str(tmp_path / "runner.py"), str(tmp_path), *map(str, LESSONS)],
                       cwd=NOTEBOOKS, env=env, capture_output=True, text=True, timeout=1500)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-5000:]
    for path in LESSONS:                 # lesson 7 too: Binder installs PyTorch's CPU build
        nb = nbformat.read(tmp_path / path.name, as_version=4)
        assert f"stopped {path.name}" not in r.stdout
        check_lesson(path.stem, nb)


def test_slides_command_in_the_binder_env(binder_env, tmp_path):
    python, env = binder_env
    out = tmp_path / "lecture.html"
    r = subprocess.run([str(python), "-m", "gradviz", "slides", str(LESSONS[0]), "-o", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    html = out.read_text(encoding="utf-8")
    assert "MIT licensed" in html and 'data-gv-standalone="1"' in html and "tensor([10., 10.])" in html
