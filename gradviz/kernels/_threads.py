"""How PyTorch's CPU kernels cut their work: the vector width of this machine and the thread count.

A kernel's last bits can depend on both: softmax's sums are taken a vector (:data:`LANES` floats) at a
time, and the kernels that split long tensors between threads (:func:`_shares`) cut their vector loops
at each thread's range.  ``torch.get_num_threads()``/``torch.set_num_threads()`` are these functions.
"""

import os

import numpy as np

__all__ = ["LANES", "get_num_threads", "set_num_threads"]

_f = np.float32


def _vector_floats():
    """How many float32 lanes a vector of PyTorch's CPU kernels holds on this machine: 16 where ATen
    runs its AVX-512 build (the CPU has AVX512F, VL, BW and DQ), else 8 (its AVX2 build).  The sums
    of softmax and the cut of sigmoid's vector loop depend on it; ``ATEN_CPU_CAPABILITY`` overrides
    the choice, in PyTorch and here."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:   # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__
    wanted = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    avx512 = all(__cpu_features__.get(f, False) for f in ("AVX512F", "AVX512VL", "AVX512BW", "AVX512DQ"))
    return 16 if avx512 and wanted in ("", "avx512") else 8


LANES = _vector_floats()


def _default_threads():
    """PyTorch's default thread count for its CPU kernels: ``MKL_NUM_THREADS`` or ``OMP_NUM_THREADS``
    when set, else the machine's physical cores (hyper-threads and the process's CPU limits are not
    counted, as PyTorch's cpuinfo does not count them), else its CPUs."""
    for name in ("MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    cpus = os.cpu_count() or 1
    cores = set()
    try:
        cpu_dirs = [d for d in os.listdir("/sys/devices/system/cpu") if d[3:].isdigit() and d.startswith("cpu")]
    except OSError:
        cpu_dirs = []
    for topology in (f"/sys/devices/system/cpu/{d}/topology" for d in cpu_dirs):
        try:
            with open(f"{topology}/physical_package_id") as package, open(f"{topology}/core_id") as core:
                cores.add((package.read().strip(), core.read().strip()))
        except OSError:
            continue
    return len(cores) if 0 < len(cores) < cpus else cpus


_threads = []   # the count in use, once asked for or set (reading the CPU topology waits till then)


def get_num_threads():
    """How many threads gradviz takes PyTorch's CPU kernels to share work between, as
    ``torch.get_num_threads()`` (PyTorch's default, until :func:`set_num_threads`)."""
    if not _threads:
        _threads.append(_default_threads())
    return _threads[0]


def set_num_threads(n):
    """Take ``n`` threads from now on, as ``torch.set_num_threads(n)`` does: where PyTorch's kernels
    cut the work by thread (softmax across an inner dimension, softmax's gradient, BatchNorm's batch
    sums), the last bits of their results depend on it, and gradviz's follow."""
    if type(n) is not int:   # noqa: E721 -- bool and floats are refused too, as in PyTorch
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads[:] = [n]
    for follow in FOLLOWERS:
        follow(n)


FOLLOWERS = []   # libraries that take the count too once loaded (MKL: torch.set_num_threads sets its MKL's)


_GRAIN = 32768   # at::internal::GRAIN_SIZE: elementwise kernels split only longer tensors between threads


def _shares(total, grain=0):
    """The ranges ``parallel_for(0, total, grain, ...)`` gives the threads: as many chunks of equal
    length (the last shorter) as threads, fewer if ``grain`` asks for more items per thread, one
    range when there is nothing to share.  Returns each index's range start and end."""
    size = _chunk(total, grain)
    start = np.arange(total) // size * size
    return start, np.minimum(total, start + size)


def _chunk(total, grain=0):
    """The length of each thread's range in :func:`_shares` (the last may be shorter)."""
    threads = get_num_threads()
    if grain:
        threads = min(threads, -(-total // grain))
    return -(-total // threads) if total > max(grain, 1) and threads > 1 else max(total, 1)


def _vector(dtype):
    """How many numbers of ``dtype`` one vector of PyTorch's kernels holds: LANES floats, half as
    many doubles."""
    return LANES if dtype == _f else LANES // 2
