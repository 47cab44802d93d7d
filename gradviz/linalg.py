"""``torch.linalg``: vector and matrix norms, PyTorch's to the last bit.

>>> import gradviz as torch
>>> x = torch.tensor([[3.0, 4.0], [6.0, 8.0]], requires_grad=True)
>>> torch.linalg.vector_norm(x, dim=1)
tensor([ 5., 10.], grad_fn=<LinalgVectorNormBackward0>)
>>> torch.linalg.matrix_norm(x, ord=1)
tensor(12., grad_fn=<AmaxBackward0>)
"""

from ._linalg_norms import matrix_norm, norm, vector_norm

__all__ = ["vector_norm", "matrix_norm", "norm"]
