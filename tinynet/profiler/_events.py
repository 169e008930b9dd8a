"""What :mod:`tinynet.profiler` records: :class:`FunctionEvent` (one op or ``record_function``
span), :class:`FunctionEventAvg` (events of one name summed) and :class:`EventList` with
``key_averages``, the plain-text ``table`` and the Chrome trace export.

Times are microseconds (PyTorch's unit for these fields): ``cpu_time_total`` is an event's
wall time on the host, ``self_cpu_time_total`` that minus its children's; the device
fields come from CUDA events recorded around each op (CuPy only) and are 0 elsewhere.
Memory fields count the bytes of the op's outputs (tinynet has no allocator hooks, so
frees are not seen): ``self_*`` an event's own, the others with its children's.
"""
import json
import os

from ..errors import ArgumentError, ArgumentTypeError, PathNotWritableError

_COL = 12  # the width of every number column


def check_path(fn, path):
    """``path`` (str, bytes or os.PathLike) as a str; ArgumentTypeError for anything else,
    ArgumentError for a NUL byte in it."""
    try:
        path = os.fsdecode(os.fspath(path))
    except TypeError:
        raise ArgumentTypeError(f"{fn}: path must be a str or os.PathLike, got {type(path).__name__}") from None
    if "\0" in path:
        raise ArgumentError(f"{fn}: path must not contain a NUL byte, got {path!r}")
    return path


def check_int(fn, name, value, none=False, least=None):
    """Raise ArgumentTypeError unless ``value`` is an int (or None with ``none``), ArgumentError
    when it is below ``least``."""
    if none and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{fn}: {name} must be an int{' or None' if none else ''}, got {type(value).__name__}")
    if least is not None and value < least:
        raise ArgumentError(f"{fn}: {name} must be >= {least}, got {value}")


def check_str(fn, name, value):
    """Raise ArgumentTypeError unless ``value`` is a str or None."""
    if value is not None and not isinstance(value, str):
        raise ArgumentTypeError(f"{fn}: {name} must be a str or None, got {type(value).__name__}")


class Interval:
    """An event's start and end on the profiler's clock, in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class FunctionEvent:
    """One recorded span: an op applied (``tinynet::<op name>``) or a ``record_function``.

    Attributes: ``id``, ``name`` (also ``key``), ``thread``, ``time_range`` (an
    :class:`Interval`), ``cpu_parent`` and ``cpu_children`` (the nesting on one thread),
    ``input_shapes`` (one list per positional argument, ``[]`` for a non-tensor; empty
    unless ``record_shapes``), ``stack`` (``"file(line): function"`` lines, innermost first;
    empty unless ``with_stack``), ``is_user_annotation`` (a ``record_function``), ``count`` (1).
    """

    def __init__(self, id, name, thread, start, input_shapes=(), stack=(), is_user_annotation=False):
        self.id, self.name, self.thread = id, name, thread
        self.time_range = Interval(start, start)
        self.input_shapes = list(input_shapes)
        self.stack = list(stack)
        self.is_user_annotation = is_user_annotation
        self.cpu_parent = None
        self.cpu_children = []
        self.count = 1
        self.own_cpu_memory = self.own_device_memory = 0  # bytes of the outputs, this event alone
        self.gpu_span = None   # (start, elapsed) in microseconds on the GPU: an op run on CuPy
        self.device_index = 0

    key = property(lambda self: self.name)
    cpu_time_total = property(lambda self: self.time_range.elapsed_us())
    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def device_time_total(self):
        """The GPU time between the events recorded around this op (with its children's);
        for a ``record_function`` the sum of its children's."""
        if self.gpu_span is not None:
            return self.gpu_span[1]
        return sum(c.device_time_total for c in self.cpu_children)

    @property
    def self_device_time_total(self):
        if self.gpu_span is None:
            return 0.0
        return max(0.0, self.gpu_span[1] - sum(c.device_time_total for c in self.cpu_children))

    @property
    def cpu_memory_usage(self):
        return self.own_cpu_memory + sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def device_memory_usage(self):
        return self.own_device_memory + sum(c.device_memory_usage for c in self.cpu_children)

    self_cpu_memory_usage = property(lambda self: self.own_cpu_memory)
    self_device_memory_usage = property(lambda self: self.own_device_memory)
    device_time = property(lambda self: self.device_time_total)
    # PyTorch's older cuda_* spellings of the device fields
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_memory_usage = property(lambda self: self.device_memory_usage)
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us children={len(self.cpu_children)}>")


_SUMMED = ("cpu_time_total", "self_cpu_time_total", "device_time_total", "self_device_time_total",
           "cpu_memory_usage", "self_cpu_memory_usage", "device_memory_usage", "self_device_memory_usage")


class FunctionEventAvg:
    """The events of one key (name, and input shapes / stack when grouped by them) summed:
    ``count``, the ``*_total`` and memory fields summed, ``cpu_time``/``device_time`` the
    average per call."""

    def __init__(self, key, input_shapes=None, stack=None):
        self.key = key
        self.input_shapes = input_shapes  # set when grouped by input shape, as PyTorch
        self.stack = stack or []
        self.count = 0
        self.is_user_annotation = False
        for f in _SUMMED:
            setattr(self, f, 0)

    def add(self, other):
        """Add an event (or another average) to this one; returns self."""
        self.count += other.count
        self.is_user_annotation = other.is_user_annotation
        for f in _SUMMED:
            setattr(self, f, getattr(self, f) + getattr(other, f))
        return self

    cpu_time = property(lambda self: self.cpu_time_total / max(self.count, 1))
    device_time = property(lambda self: self.device_time_total / max(self.count, 1))
    cuda_time = device_time
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_memory_usage = property(lambda self: self.device_memory_usage)
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>")


def _time(us, unit=None):
    if unit == "s" or (unit is None and us >= 1e6):
        return f"{us / 1e6:.3f}s"
    if unit == "ms" or (unit is None and us >= 1e3):
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _memory(nbytes):
    for size, unit in ((1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "KB")):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _pct(part, whole):
    return f"{(part / whole if whole else 0.0) * 100:.2f}%"


def _cut(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."


_SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "device_time", "device_time_total",
              "self_device_time_total", "cpu_memory_usage", "self_cpu_memory_usage", "device_memory_usage",
              "self_device_memory_usage", "count")


class EventList(list):
    """A list of :class:`FunctionEvent` (``prof.events()``) or :class:`FunctionEventAvg`
    (``prof.key_averages()``), with PyTorch's ``table``, ``key_averages``,
    ``total_average`` and ``export_chrome_trace``."""

    def __init__(self, events=(), device_name="CUDA", start_ns=0):
        super().__init__(events)
        self.device_name, self.start_ns = device_name, start_ns

    @property
    def self_cpu_time_total(self):
        """The sum of the events' self CPU times (microseconds): the table's footer."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """One :class:`FunctionEventAvg` per name (and input shapes when
        ``group_by_input_shape``, and the innermost ``group_by_stack_n`` stack lines), in the
        order each key first occurs.

        Raises:
            ArgumentTypeError: ``group_by_stack_n`` is not an int."""
        check_int("key_averages", "group_by_stack_n", group_by_stack_n)
        groups = {}
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shape else None
            stack = tuple(e.stack[:group_by_stack_n]) if group_by_stack_n > 0 else ()
            key = (e.key, shapes, stack)
            if key not in groups:
                groups[key] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape else None,
                                               list(stack))
            groups[key].add(e)
        return EventList(groups.values(), self.device_name, self.start_ns)

    def total_average(self):
        """All events summed into one :class:`FunctionEventAvg` with key ``"Total"``."""
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The events as PyTorch's plain-text table: name, self CPU % and time, CPU total %
        and time, CPU time per call, then (when any was measured) the device columns and
        the memory columns, the number of calls, and input shapes / source locations when
        the averages were grouped by them; a footer with the total self CPU (and device) time.

        Args:
            sort_by (str or None): a field to sort by, largest first (``"cpu_time_total"``,
                ``"self_cpu_time_total"``, ``"cuda_time_total"``/``"device_time_total"``,
                ``"cpu_memory_usage"``, ``"count"``, ...); None keeps the recorded order.
            row_limit (int): at most this many rows (-1 or 0: all).
            top_level_events_only (bool): only events without a parent.
            time_unit (str or None): ``"s"``, ``"ms"`` or ``"us"`` for every time; None picks
                one per value.

        Raises:
            ArgumentError: an unknown ``sort_by`` or ``time_unit``, a width below 1.
            ArgumentTypeError: a non-int ``row_limit`` or width, a ``sort_by``, ``header`` or
            ``time_unit`` that is neither a str nor None.
        """
        for name, value in (("sort_by", sort_by), ("header", header), ("time_unit", time_unit)):
            check_str("table", name, value)
        for name, value in (("row_limit", row_limit), ("max_src_column_width", max_src_column_width),
                            ("max_name_column_width", max_name_column_width),
                            ("max_shapes_column_width", max_shapes_column_width)):
            check_int("table", name, value, none=name == "row_limit", least=None if name == "row_limit" else 1)
        if time_unit not in (None, "s", "ms", "us"):
            raise ArgumentError(f"table: time_unit must be 's', 'ms', 'us' or None, got {time_unit!r}")
        events = [e for e in self if not top_level_events_only or getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            field = sort_by.replace("cuda", "device")
            if field not in _SORT_KEYS:
                raise ArgumentError(f"table: sort_by must be one of {', '.join(_SORT_KEYS)} (or their cuda_ "
                                    f"spellings), got {sort_by!r}")
            events.sort(key=lambda e: getattr(e, field), reverse=True)
        return _table(self, events, row_limit, max_src_column_width, max_name_column_width,
                      max_shapes_column_width, header, time_unit)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto): JSON with a
        ``traceEvents`` list of complete (``"ph": "X"``) events, ``ts``/``dur`` in
        microseconds; ops are ``cpu_op``, record_function spans ``user_annotation``, the
        CUDA-event spans ``kernel`` on the device's own row.

        Raises:
            ArgumentTypeError: ``path`` is not a path. PathNotWritableError: it cannot be written."""
        path = check_path("export_chrome_trace", path)
        pid = os.getpid()
        trace = []
        for e in self:
            args = {"External id": e.id}
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
            if e.stack:
                args["Call stack"] = ";".join(e.stack)
            trace.append({"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                          "name": e.name, "pid": pid, "tid": e.thread, "ts": e.time_range.start,
                          "dur": e.cpu_time_total, "args": args})
            if e.gpu_span is not None:
                trace.append({"ph": "X", "cat": "kernel", "name": e.name, "pid": f"GPU {e.device_index}",
                              "tid": "stream", "ts": e.gpu_span[0], "dur": e.gpu_span[1],
                              "args": {"External id": e.id, "device": e.device_index}})
        doc = {"schemaVersion": 1, "traceEvents": trace, "displayTimeUnit": "ms",
               "baseTimeNanoseconds": self.start_ns, "traceName": str(path)}
        try:
            with open(path, "w") as f:
                json.dump(doc, f)
        except OSError as exc:
            raise PathNotWritableError(f"export_chrome_trace: cannot write {path!r}: {exc}") from None
        return path


def _table(source, events, row_limit, src_width, name_width, shapes_width, header, unit):
    has_device = any(e.device_time_total > 0 for e in source)
    has_cpu_mem = any(e.cpu_memory_usage != 0 for e in source)
    has_device_mem = any(e.device_memory_usage != 0 for e in source)
    has_shapes = any(e.input_shapes for e in source)
    has_stack = any(e.stack for e in source)
    dev = source.device_name
    name_col = min(max([len(e.key) for e in source] + [4]) + 4, name_width)
    heads = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device:
        heads += [f"Self {dev}", f"Self {dev} %", f"{dev} total", f"{dev} time avg"]
    if has_cpu_mem:
        heads += ["CPU Mem", "Self CPU Mem"]
    if has_device_mem:
        heads += [f"{dev} Mem", f"Self {dev} Mem"]
    heads.append("# of Calls")
    widths = [name_col] + [_COL] * (len(heads) - 1)
    if has_shapes:
        heads.append("Input Shapes")
        widths.append(min(max(len(str(e.input_shapes)) for e in source) + 4, shapes_width))
    if has_stack:
        heads.append("Source Location")
        widths.append(min(max(len(s) for e in source for s in e.stack) + 4, src_width))
    cpu_total = sum(e.self_cpu_time_total for e in source)
    dev_total = sum(e.self_device_time_total for e in source)
    if row_limit and row_limit > 0:
        events = events[:row_limit]

    def line(cells):
        return "".join(f"{c:>{w}}  " for c, w in zip(cells, widths))

    sep = "".join("-" * w + "  " for w in widths)
    out = []
    if header is not None:
        out += ["=" * len(sep), header]
    out += [sep, line(heads), sep]
    for e in events:
        row = [_cut(e.key, name_col), _pct(e.self_cpu_time_total, cpu_total), _time(e.self_cpu_time_total, unit),
               _pct(e.cpu_time_total, cpu_total), _time(e.cpu_time_total, unit),
               _time(e.cpu_time_total / max(e.count, 1), unit)]
        if has_device:
            row += [_time(e.self_device_time_total, unit), _pct(e.self_device_time_total, dev_total),
                    _time(e.device_time_total, unit), _time(e.device_time_total / max(e.count, 1), unit)]
        if has_cpu_mem:
            row += [_memory(e.cpu_memory_usage), _memory(e.self_cpu_memory_usage)]
        if has_device_mem:
            row += [_memory(e.device_memory_usage), _memory(e.self_device_memory_usage)]
        row.append(str(e.count))
        if has_shapes:
            row.append(_cut(str(e.input_shapes or []), widths[len(row)]))
        if has_stack:
            row.append(_cut(e.stack[0] if e.stack else "", widths[len(row)]))
        out.append(line(row))
        for s in e.stack[1:] if has_stack else ():  # the further stack lines under the first
            out.append(line([""] * (len(row) - 1) + [_cut(s, widths[-1])]))
    out.append(sep)
    out.append(f"Self CPU time total: {_time(cpu_total, unit)}")
    if has_device:
        out.append(f"Self {dev} time total: {_time(dev_total, unit)}")
    return "\n".join(out) + "\n"
