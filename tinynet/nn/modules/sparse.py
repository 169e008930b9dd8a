"""PyTorch's module path ``torch.nn.modules.sparse`` (tinynet's embedding layers live in
:mod:`.embedding`)."""
from .embedding import Embedding, EmbeddingBag

__all__ = ["Embedding", "EmbeddingBag"]
