"""Fetchers: one batch from a dataset, given what the index sampler yielded. The main
process (``num_workers=0``) and every worker process run the same code."""
from .collate import Unstackable, host_collate, rows, stacked


def collate_prestacked(data, n, collate_fn, where):
    """``collate_fn`` applied to the ``n`` samples of the pre-stacked batch ``data``; with
    the default collate, the stacked arrays are wrapped directly where possible."""
    if collate_fn is host_collate:
        try:
            return stacked(data, n, where)
        except Unstackable:
            pass
    return collate_fn(rows(data, n, where))


class MapFetcher:
    """Map-style: ``collate_fn([dataset[i] for i in indices])``, through
    ``dataset.__getitems__(indices)`` when it has one; without auto-collation
    (``batch_size=None``), ``collate_fn(dataset[index])``."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn
        getitems = getattr(dataset, "__getitems__", None)
        self.getitems = getitems if callable(getitems) else None
        self.where = f"DataLoader ({type(dataset).__name__})"

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.getitems is not None:
            data = self.getitems(index)
            if not isinstance(data, list):  # tinynet's pre-stacked batch
                return collate_prestacked(data, len(index), self.collate_fn, self.where)
        else:
            data = [self.dataset[i] for i in index]
        return self.collate_fn(data)


class IterableFetcher:
    """Iterable-style: the next ``len(index)`` samples of ``iter(dataset)`` (or the next
    one, without auto-collation). Raises StopIteration when the dataset is exhausted (or
    the last batch is short and ``drop_last`` is set)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.iterator = iter(dataset)
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.iterator))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.iterator)
        return self.collate_fn(data)


def make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = IterableFetcher if iterable else MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
