"""What a tensor says of its memory: element size, bytes, strides, of views too (see tests/test_programs.py)."""


def run(torch):
    for x in (torch.zeros(3, 4, dtype=torch.float64), torch.zeros(3, 4)[:, :2], torch.tensor(True),
              torch.arange(6).view(2, 3).t(), torch.ones(2, 3, dtype=torch.float16)):
        print(x.dtype, x.itemsize, x.element_size(), x.nbytes, x.numel(), x.stride(), x.is_contiguous())
