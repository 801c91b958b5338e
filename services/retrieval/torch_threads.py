"""Torch's CPU threads for the calling thread (the embedding models share them out between queries and notes)."""

from __future__ import annotations


def use_threads(count: int) -> None:
    """This thread's torch CPU threads from now on (torch keeps the count per calling thread: OpenMP's and
    MKL's), whatever other threads of the process use."""
    import torch

    if torch.get_num_threads() != count:
        torch.set_num_threads(count)
