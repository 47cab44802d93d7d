"""``DataLoader``: a dataset read in batches, in order or shuffled, each batch collated into tensors.

Every pass (each ``iter(loader)``) makes PyTorch's draws in PyTorch's order: the iterator's base
seed (one 64-bit draw from ``generator``, or the global generator), then the sampler's (with
``shuffle=True``: a seed from the same generator, then ``randperm``), so after ``manual_seed`` the
batches and every random number drawn after them are torch's.  Loading happens in this process
(``num_workers`` > 0 reads the same batches, one after the other).
"""

import collections.abc
import copy
import re
import warnings

import numpy as np

from ... import _dtype
from ..._creation import as_tensor, empty, tensor
from ..._matmul_and_joins import stack
from ...tensor import Tensor
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

_STR_OR_OBJECT = re.compile(r"[SaUO]")
_COLLATE_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def get_worker_info():
    """None: gradviz loads every batch in the main process."""
    return None


def default_convert(data):
    """One sample as the loader returns it without batching: numpy values become tensors."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and _STR_OR_OBJECT.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuilt(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):    # a namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuilt(data, [default_convert(d) for d in data])
    return data


def _rebuilt(like, items):
    """``items`` in a container of ``like``'s type (a copy for a mutable one), or a plain dict/list."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(items)
            return clone
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(like)(items)
    except TypeError:
        return items


def default_collate(batch):
    """A list of samples as one batch: tensors stacked along a new first dim, numbers made a tensor
    (floats as float64), and tuples, lists and dicts collated field by field (a tuple becomes a list).

    >>> import gradviz as torch
    >>> default_collate([(torch.tensor([1., 2.]), 0), (torch.tensor([3., 4.]), 1)])
    [tensor([[1., 2.],
            [3., 4.]]), tensor([0, 1])]
    """
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ in ("ndarray", "memmap"):
            if _STR_OR_OBJECT.search(elem.dtype.str) is not None:
                raise TypeError(_COLLATE_ERROR.format(elem.dtype))
            return default_collate([as_tensor(b) for b in batch])
        if elem.shape == ():
            return as_tensor(np.array(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuilt(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):   # a namedtuple
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(samples) for samples in zip(*batch)]
        return fields if isinstance(elem, tuple) else _rebuilt(elem, fields)
    raise TypeError(_COLLATE_ERROR.format(elem_type))


class _InfiniteConstantSampler:
    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Batches of ``dataset``: ``batch_size`` samples each, shuffled each pass with ``shuffle=True``,
    the last short batch dropped with ``drop_last=True``, collated by ``collate_fn``."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers "
                             "> 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset, self.num_workers, self.prefetch_factor = dataset, num_workers, prefetch_factor
        self.pin_memory, self.pin_memory_device, self.timeout = pin_memory, pin_memory_device, timeout
        self.worker_init_fn, self.multiprocessing_context = worker_init_fn, multiprocessing_context
        self.persistent_workers, self.in_order = persistent_workers, in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    @property
    def _index_sampler(self):
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __iter__(self):
        if self.pin_memory and self.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                          f"ignore pin_memory_device='{self.pin_memory_device}'.", stacklevel=2)
        if self.pin_memory:      # (gradviz computes on the CPU: there is no accelerator to pin memory for)
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=2)
        batches = iter(self._index_sampler)     # (a generator: the sampler draws at the first batch)
        empty((), dtype=_dtype.int64).random_(generator=self.generator)   # the iterator's base seed, as torch draws it
        return self._batches(batches)

    def _batches(self, indices):
        auto = self.batch_sampler is not None
        if self._iterable:
            stream = iter(self.dataset)
            for _ in indices:
                if not auto:
                    try:
                        yield self.collate_fn(next(stream))
                    except StopIteration:
                        return
                    continue
                batch = [s for _, s in zip(range(self.batch_size), stream)]
                if not batch or (self.drop_last and len(batch) < self.batch_size):
                    return
                yield self.collate_fn(batch)
        for index in indices:
            if auto:
                getitems = getattr(self.dataset, "__getitems__", None)
                data = getitems(index) if getitems else [self.dataset[i] for i in index]
            else:
                data = self.dataset[index]
            yield self.collate_fn(data)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)
