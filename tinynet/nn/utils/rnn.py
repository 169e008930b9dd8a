"""``tinynet.nn.utils.rnn``: batching sequences of different lengths for the recurrent layers.

Only :func:`pad_sequence` is here; ``PackedSequence`` and ``pack_padded_sequence`` are not
implemented (the recurrent layers take padded tensors).
"""
from ... import ops
from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...tensor import Tensor


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of different lengths (L_i, *) into one, padding each to the longest.

    Differentiable with respect to every sequence (the padding gets no gradient).

    Args:
        sequences (list or tuple of Tensor, or a Tensor): the sequences, each (L_i, *) with
            the same trailing dims ``*``; a Tensor counts as the sequence of its rows (as in
            PyTorch). They are converted to the first one's dtype.
        batch_first (bool): output (B, L_max, *) instead of (L_max, B, *). Default False.
        padding_value (float): the value of padded elements. Default 0.
        padding_side (str): ``'right'`` (default) pads after each sequence, ``'left'`` before.

    Returns:
        Tensor of shape (L_max, B, *) or, with ``batch_first``, (B, L_max, *); the first
        sequence's dtype and device.

    Raises:
        ArgumentError: an empty list, or ``padding_side`` not ``'left'``/``'right'``.
        ArgumentTypeError: an element that is not a Tensor. ShapeError: a 0-d sequence, or
            trailing dims that differ.
    """
    if padding_side not in ("left", "right"):
        raise ArgumentError(f"pad_sequence: Expected padding_side to be one of left or right, but got "
                            f"{padding_side!r}.")
    if isinstance(sequences, Tensor):
        sequences = ops.split.unbind(sequences, 0) if sequences.ndim else [sequences]
    if not isinstance(sequences, (list, tuple)):
        raise ArgumentTypeError(f"pad_sequence: sequences must be a list or tuple of Tensors, got "
                                f"{type(sequences).__name__}")
    if not sequences:
        raise ArgumentError("pad_sequence: received an empty list of sequences")
    for i, s in enumerate(sequences):
        if not isinstance(s, Tensor):
            raise ArgumentTypeError(f"pad_sequence: sequences[{i}] must be a Tensor, got {type(s).__name__}")
        if s.ndim == 0:
            raise ShapeError(f"pad_sequence: sequences[{i}] is 0-dimensional; expected (L, *)")
        if s.shape[1:] != sequences[0].shape[1:]:
            raise ShapeError(f"pad_sequence: expected every sequence to have the trailing dims "
                             f"{tuple(sequences[0].shape[1:])} of sequences[0], got shape {tuple(s.shape)} "
                             f"for sequences[{i}]")
    dtype = sequences[0].dtype
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        s = s.to(dtype) if s.dtype != dtype else s
        extra = longest - s.shape[0]
        if extra:
            widths = [0, 0] * (s.ndim - 1) + ([0, extra] if padding_side == "right" else [extra, 0])
            s = ops.join.pad(s, widths, value=padding_value)
        padded.append(s)
    return ops.join.stack(padded, 0 if batch_first else 1)
