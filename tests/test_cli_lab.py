"""``python -m gradviz lab``: the course command of the README, as root (containers) and not."""

import os
import re
import socket
import subprocess
import sys
import time

import pytest

from gradviz.__main__ import COURSE, lab_command

pytest.importorskip("jupyterlab", reason="the course extra (JupyterLab) is not installed")


def test_the_command_opens_the_lessons_and_adds_allow_root_only_as_root():
    as_root = lab_command(["--no-browser"], root=True)
    assert as_root[:3] == [sys.executable, "-m", "jupyterlab"]
    assert f"--ServerApp.root_dir={COURSE}" in as_root and (COURSE / "01_variables_and_gradients.ipynb").exists()
    assert "--allow-root" in as_root and as_root[-1] == "--no-browser"
    assert "--allow-root" not in lab_command([], root=False)
    assert lab_command(["--allow-root"], root=True).count("--allow-root") == 1


def test_lab_starts_here_as_whoever_runs_it(tmp_path):
    """The README's course command really starts JupyterLab (as root too, where Jupyter refuses without
    --allow-root), serving the lessons."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "JUPYTER_CONFIG_DIR": str(tmp_path / "config")}
    proc = subprocess.Popen([sys.executable, "-m", "gradviz", "lab", "--no-browser", f"--port={port}",
                             "--ServerApp.token=gvtest", "--ip=127.0.0.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        import urllib.request
        deadline, body = time.time() + 90, None
        while time.time() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents?token=gvtest", timeout=2) as r:
                    body = r.read().decode()
                break
            except OSError:
                time.sleep(0.5)
        assert proc.poll() is None, proc.stdout.read()
        assert body and "01_variables_and_gradients.ipynb" in body       # the lessons, at the top
    finally:
        proc.terminate()
        try:
            out = proc.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            proc.kill()
            out = proc.communicate()[0]
    first = out.splitlines()[0]
    assert re.match(r"jupyter lab --ServerApp\.root_dir=\S+notebooks", first), first   # it says what it runs
    if os.geteuid() == 0:
        assert "--allow-root" in first
