"""Stands in for PyTorch when the tests run as on a machine without it (GRADVIZ_HIDE_TORCH=1, see conftest.py)."""

raise ModuleNotFoundError("No module named 'torch' (hidden by GRADVIZ_HIDE_TORCH=1)", name="torch")
