"""The accelerators gradviz does not have: ``torch.cuda``, ``torch.accelerator``, ``torch.backends``.

Tutorials ask before they move anything to a GPU (``device = torch.accelerator.current_accelerator().type
if torch.accelerator.is_available() else "cpu"``, ``torch.cuda.manual_seed_all(seed)``,
``torch.backends.cudnn.deterministic = True``): here every question gets the answer a CPU-only PyTorch
2.13 gives, so the CPU branch runs, and asking for a device that is not there fails with its message.
"""

__all__ = ["cuda", "accelerator", "backends"]

_NO_CUDA = "Torch not compiled with CUDA enabled"
_NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def _fails(exc_type, message):
    def fail(*args, **kwargs):
        raise exc_type(message)
    return staticmethod(fail)


def _returns(value):
    return staticmethod(lambda *args, **kwargs: value)


class cuda:
    """``torch.cuda`` without CUDA: not available, no devices; seeding and cache calls do nothing."""
    is_available, is_bf16_supported, device_count = _returns(False), _returns(False), _returns(0)
    manual_seed = manual_seed_all = seed = seed_all = empty_cache = _returns(None)
    current_device = get_device_name = get_device_properties = synchronize = set_device = _fails(
        AssertionError, _NO_CUDA)


class accelerator:
    """``torch.accelerator`` on a machine with none."""
    is_available, device_count, current_accelerator = _returns(False), _returns(0), _returns(None)
    current_device_index = current_device_idx = set_device_index = set_device_idx = synchronize = _fails(
        RuntimeError, _NO_ACCELERATOR)


class backends:
    """``torch.backends``: no MPS, no cuDNN; the cuDNN switches can be set (and change nothing)."""

    class mps:
        is_available = is_built = _returns(False)

    class cudnn:
        is_available = _returns(False)
        enabled, deterministic, benchmark = True, False, False
