"""``torch.nn``: Parameter, Module and the layers and losses a first network needs.

>>> import gradviz as torch
>>> from gradviz import nn
>>> _ = torch.manual_seed(0)
>>> model = nn.Linear(3, 1)
>>> loss = nn.MSELoss()(model(torch.ones(4, 3)), torch.zeros(4, 1))
>>> loss.grad_fn.name()
'MseLossBackward0'
"""

from . import functional, init, utils
from .activation import (CELU, ELU, GELU, SELU, Hardsigmoid, Hardtanh, LeakyReLU, LogSigmoid, Mish, ReLU6, SiLU,
                         Softplus, Softsign)
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .layers import (CosineSimilarity, Dropout, Embedding, Flatten, Identity, Linear, LogSoftmax, ReLU, Sigmoid, Softmax,
                     Softmin, Tanh, Unflatten)
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss
from .module import Module
from .normalization import LayerNorm
from .parameter import Parameter

__all__ = ["Parameter", "Module", "Linear", "Identity", "Flatten", "Unflatten", "ReLU", "Sigmoid", "Tanh", "Softmax",
           "LogSoftmax", "Softmin", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Softplus", "Hardtanh", "ReLU6",
           "Mish", "LogSigmoid", "Softsign", "Hardsigmoid", "CosineSimilarity", "Dropout", "Embedding", "BatchNorm1d",
           "BatchNorm2d", "BatchNorm3d", "LayerNorm", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
           "BCEWithLogitsLoss", "functional", "init", "utils"]
