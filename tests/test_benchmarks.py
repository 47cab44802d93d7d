"""The benchmark scripts still find what they import (no timings here: they are run by hand)."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_core_finds_the_exactness_table_the_tests_assert():
    """``benchmarks/core.py`` prints tests/kernels/test_vecmath.py's table: it must still find it
    where the tests live (it once looked in tests/ after the tests moved into package folders)."""
    code = "import core; print(callable(core.load_exactness()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "benchmarks")])))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "True"
