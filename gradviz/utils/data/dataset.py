"""Datasets: anything with ``__getitem__`` and ``__len__`` (``TensorDataset`` for tensors), and
``random_split``, which draws its permutation as PyTorch does."""

import bisect
import itertools
import math
import warnings

from ..._creation import randperm
from ...random import default_generator

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "Subset",
           "random_split"]


class Dataset:
    """A map-style dataset: ``ds[i]`` is sample i (subclasses write ``__getitem__`` and ``__len__``)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read as a stream: subclasses write ``__iter__``."""

    def __add__(self, other):
        raise NotImplementedError("ChainDataset is not part of gradviz")


class TensorDataset(Dataset):
    """Samples are the tensors' rows: ``ds[i] == (t0[i], t1[i], ...)``."""

    def __init__(self, *tensors):
        if not all(tensors[0].size(0) == tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Datasets side by side: sample i is a tuple (or a dict) of each one's sample i."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/"
                             "output, but both types are given.")
        parts = args or tuple(kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Datasets one after another."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        k = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[k][idx - (self.cumulative_sizes[k - 1] if k else 0)]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=default_generator):
    """Subsets of the given lengths (or fractions summing to 1) from one ``randperm`` of the indices.

    >>> import gradviz as torch
    >>> a, b = random_split(range(5), [2, 3], generator=torch.Generator().manual_seed(0))
    >>> list(a), list(b)
    ([4, 0], [1, 3, 2])
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(len(dataset) * frac))
        for i in range(len(dataset) - sum(sizes)):     # the remainder, one each, round robin
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]
