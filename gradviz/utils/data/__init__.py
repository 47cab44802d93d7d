"""``torch.utils.data``: datasets, samplers and the ``DataLoader`` that batches them.

>>> import gradviz as torch
>>> from gradviz.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(torch.arange(6.).reshape(3, 2), torch.tensor([0, 1, 0]))
>>> for x, y in DataLoader(ds, batch_size=2):
...     print(x, y)
tensor([[0., 1.],
        [2., 3.]]) tensor([0, 1])
tensor([[4., 5.]]) tensor([0])

With ``shuffle=True`` the order comes from PyTorch's own draws (a seed from the global generator,
or the ``generator=`` given, then ``randperm``), so after ``manual_seed`` the batches are torch's.
"""

from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .dataset import (ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "Subset",
           "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DataLoader", "default_collate", "default_convert",
           "get_worker_info"]
