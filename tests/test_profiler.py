"""tinynet.profiler against torch.profiler on the same programs: call counts, memory, the
table's layout, the schedule's actions and trace-ready steps, the Chrome trace's nesting."""
import json
import re
import warnings

import numpy
import pytest

import tinynet
from helpers import torch
from tinynet import errors
from tinynet.autograd import node
from tinynet.autograd.function import FunctionCtx
from tinynet.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule
from tinynet.profiler import _record

X = numpy.random.default_rng(3).standard_normal((4, 8)).astype(numpy.float32)
W = numpy.random.default_rng(4).standard_normal((8, 3)).astype(numpy.float32)


def _program(lib, x, w):
    """The same ops in both libraries: a matmul, three relus, two adds, a sum, in a span."""
    with lib.profiler.record_function("block"):
        y = x @ w
        for _ in range(3):
            y = lib.relu(y)
        y = y + y
        y = y + 1.0
        return y.sum()


def _torch_profile(**kw):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], **kw) as prof:
        _program(torch, torch.tensor(X), torch.tensor(W))
    return prof


def test_counts_and_memory_match_torch(device):
    x, w = tinynet.tensor(X, device=device), tinynet.tensor(W, device=device)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True) as prof:
        _program(tinynet, x, w)
    ours = {e.key: e for e in prof.key_averages()}
    theirs = {e.key: e for e in _torch_profile(profile_memory=True).key_averages()}
    for name in ("relu", "add", "sum"):
        assert ours["tinynet::" + name].count == theirs["aten::" + name].count, name
        if device == "cpu":  # the bytes of the outputs (torch: what the op allocated)
            assert ours["tinynet::" + name].cpu_memory_usage == theirs["aten::" + name].cpu_memory_usage, name
    assert ours["block"].count == theirs["block"].count == 1
    assert ours["tinynet::matmul"].count == theirs["aten::matmul"].count == 1
    block = next(e for e in prof.events() if e.name == "block")
    assert block.cpu_parent is None and len(block.cpu_children) == 7  # matmul, 3 relu, 2 add, sum
    assert all(c.cpu_parent is block for c in block.cpu_children)
    assert abs(block.self_cpu_time_total - (block.cpu_time_total - sum(c.cpu_time_total
                                                                      for c in block.cpu_children))) < 1e-6
    mm = next(e for e in prof.events() if e.name == "tinynet::matmul")
    assert mm.input_shapes == [[4, 8], [8, 3]]
    key = "self_cpu_memory_usage" if device == "cpu" else "self_device_memory_usage"
    assert getattr(mm, key) == 4 * 3 * 4


def _header(table):
    return table.splitlines()[1].split("  ")


@pytest.mark.parametrize("kw,avg", [({}, {}), ({"profile_memory": True}, {}),
                                    ({"record_shapes": True}, {"group_by_input_shape": True})])
def test_table_layout_matches_torch(kw, avg):
    with profile(activities=[ProfilerActivity.CPU], **kw) as prof:
        _program(tinynet, tinynet.tensor(X, device="cpu"), tinynet.tensor(W, device="cpu"))
    ours = prof.key_averages(**avg).table(sort_by="cpu_time_total", row_limit=4)
    theirs = _torch_profile(**kw).key_averages(**avg).table(sort_by="cpu_time_total", row_limit=4)
    assert [h.strip() for h in _header(ours) if h.strip()] == [h.strip() for h in _header(theirs) if h.strip()]
    lines, tlines = ours.splitlines(), theirs.splitlines()
    assert len(lines) == len(tlines) == 3 + 4 + 2  # rule, header, rule, 4 rows, rule, footer
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    assert lines[-1].startswith("Self CPU time total: ") and tlines[-1].startswith("Self CPU time total: ")
    # every number column is 12 wide, then two spaces, as torch's
    assert [len(c) for c in lines[0].split("  ")[1:7]] == [len(c) for c in tlines[0].split("  ")[1:7]]
    rows = [re.split(r"\s{2,}", r.strip()) for r in lines[3:7]]
    for cells, trow in zip(rows, tlines[3:7]):
        assert len(cells) == len(re.split(r"\s{2,}", trow.strip()))
        assert re.fullmatch(r"[0-9.]+(us|ms|s)", cells[4]) and re.fullmatch(r"[0-9.]+%", cells[3])
    assert rows[0][0] == "block" and rows[0][3] == "100.00%"  # the outermost span is 100% of the total
    if avg:
        assert ["[[4, 8], [8, 3]]"] == [c[-1] for c in rows if c[0] == "tinynet::matmul"]


def test_schedule_matches_torch():
    cases = [dict(wait=1, warmup=1, active=2), dict(wait=2, warmup=1, active=3, repeat=2),
             dict(wait=0, warmup=2, active=1, repeat=1, skip_first=3), dict(wait=3, warmup=1, active=1,
                                                                                skip_first=2, skip_first_wait=1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in cases:
            ours, theirs = schedule(**c), torch.profiler.schedule(**c)
            assert [ours(s).name for s in range(30)] == [theirs(s).name for s in range(30)], c


def _trace_steps(lib, sched_kw, steps, prof_cls, make_x):
    ready, counts = [], []

    def on_ready(p):
        ready.append(p.step_num)
        counts.append(sum(e.count for e in p.key_averages() if e.key.endswith("::mul")))
    with prof_cls(activities=[lib.profiler.ProfilerActivity.CPU], schedule=lib.profiler.schedule(**sched_kw),
                  on_trace_ready=on_ready) as p:
        x = make_x()
        for _ in range(steps):
            x * 2.0
            p.step()
    return ready, counts


@pytest.mark.parametrize("kw,steps", [(dict(wait=1, warmup=1, active=2, repeat=2), 10),
                                      (dict(wait=0, warmup=1, active=3), 9), (dict(wait=1, warmup=1, active=2), 7)])
def test_schedule_steps_and_trace_ready_match_torch(kw, steps):
    ours = _trace_steps(tinynet, kw, steps, profile, lambda: tinynet.ones(3))
    theirs = _trace_steps(torch, kw, steps, torch.profiler.profile, lambda: torch.ones(3))
    assert ours == theirs


def test_step_spans_and_warmup_dropped():
    with profile(schedule=schedule(wait=1, warmup=1, active=2), on_trace_ready=lambda p: None) as prof:
        for _ in range(4):
            tinynet.ones(2) + 1
            prof.step()
    names = [e.name for e in prof.events()]
    assert names == ["ProfilerStep#2", "tinynet::add", "ProfilerStep#3", "tinynet::add"]


def test_chrome_trace_is_valid_and_nested(tmp_path, device):
    x = tinynet.tensor(X, device=device, requires_grad=True)
    with profile(record_shapes=True) as prof:
        with record_function("outer"):
            with record_function("inner"):
                y = tinynet.relu(x).sum()
        y.backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    events = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] != "kernel"]
    by = {e["name"]: e for e in events}
    assert {"outer", "inner", "tinynet::relu", "tinynet::sum"} <= set(by)
    assert any(n.startswith("autograd::engine::evaluate_function: ") for n in by)
    for e in events:
        assert isinstance(e["ts"], float) and e["dur"] >= 0 and isinstance(e["pid"], int)

    def inside(a, b):  # a nested in b on one thread
        return a["tid"] == b["tid"] and b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"] + 1e-3
    assert inside(by["inner"], by["outer"]) and inside(by["tinynet::relu"], by["inner"])
    assert not inside(by["outer"], by["inner"])
    assert by["tinynet::relu"]["args"]["Input Dims"] == [[4, 8]]
    assert by["inner"]["cat"] == "user_annotation" and by["tinynet::sum"]["cat"] == "cpu_op"
    gz = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(str(gz))
    import gzip
    assert json.loads(gzip.open(gz).read())["traceEvents"] == doc["traceEvents"]


def test_record_function_as_decorator_and_stack(tmp_path):
    @record_function("helper")
    def helper(t):
        return t * 3.0

    with profile(with_stack=True) as prof:
        helper(tinynet.ones(2))
        helper(tinynet.ones(2))
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["helper"].count == 2 and avg["tinynet::mul"].count == 2
    mul = next(e for e in prof.events() if e.name == "tinynet::mul")
    assert mul.cpu_parent.name == "helper"
    assert any("test_profiler.py" in s and "helper" in s for s in mul.stack)
    table = prof.key_averages(group_by_stack_n=1).table()
    assert "Source Location" in table and "test_profiler.py" in table
    prof.export_stacks(str(tmp_path / "stacks.txt"))
    assert "tinynet::mul" in (tmp_path / "stacks.txt").read_text()
    assert helper(tinynet.ones(1)).tolist() == [3.0]  # no profiler: the function just runs


def test_tensorboard_trace_handler(tmp_path):
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
                 on_trace_ready=tinynet.profiler.tensorboard_trace_handler(str(tmp_path), "w0")) as prof:
        for _ in range(3):
            tinynet.ones(2).exp()
            prof.step()
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name.startswith("w0.") and files[0].name.endswith(".pt.trace.json")
    assert any(e["name"] == "tinynet::exp" for e in json.loads(files[0].read_text())["traceEvents"])


def test_no_profiler_leaves_the_dispatch_untouched():
    plain = node.Op.apply
    assert plain is _record._plain_apply
    with profile():
        assert node.Op.apply is not plain
    assert node.Op.apply is plain and FunctionCtx.run is _record._plain_run
    with pytest.raises(ZeroDivisionError):
        with profile():
            1 / 0
    assert node.Op.apply is plain and _record.STATE[0] is None
    assert not any(hasattr(cls.__dict__.get("backward"), "profiled") for cls in node.Op.__subclasses__())


def test_custom_function_is_recorded():
    class Twice(tinynet.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    with profile() as prof:
        Twice.apply(tinynet.ones(2, requires_grad=True)).sum().backward()
    names = [e.name for e in prof.events()]
    assert "Twice" in names and "tinynet::mul" in names


def test_bad_input():
    with pytest.raises(errors.ArgumentTypeError, match="record_function: name"):
        record_function(3)
    with pytest.raises(errors.ArgumentError, match="schedule: active"):
        schedule(wait=0, warmup=1, active=0)
    with pytest.raises(errors.ArgumentTypeError, match="schedule: wait"):
        schedule(wait=1.5, warmup=1, active=1)
    with pytest.raises(errors.ArgumentError, match="profile: activities"):
        profile(activities=[ProfilerActivity.XPU])
    # not a ProfilerActivity at all: refused here; PyTorch's CPU build refuses it too, its CUDA build (the GPU
    # machine's) accepts it, so this row is not in the bad-input walk's PyTorch-refusal table
    with pytest.raises(errors.ArgumentError, match="profile: activities may hold"):
        profile(activities=["a"])
    with profile() as prof:
        tinynet.ones(1) + 1
        with pytest.raises(errors.ProfilerError, match="another profiler"):
            with profile():
                pass
        with pytest.raises(errors.ProfilerError, match="still recording"):
            prof.key_averages()
    with pytest.raises(errors.ArgumentError, match="table: sort_by"):
        prof.key_averages().table(sort_by="bogus")
    with pytest.warns(UserWarning, match="with_flops"):
        profile(with_flops=True)
    assert ProfilerAction.RECORD_AND_SAVE.name == "RECORD_AND_SAVE"


def test_bad_paths_and_callables(tmp_path):
    """Paths and callables are checked where they are given; a file that cannot be written
    is one PathNotWritableError naming the path once, and a .gz export leaves no temporary file."""
    with profile() as prof:
        tinynet.ones(2) * 2
    with pytest.raises(errors.PathNotWritableError, match=r"^export_chrome_trace: cannot write '[^']*': \[Errno"):
        prof.export_chrome_trace(tmp_path)  # a folder
    with pytest.raises(errors.PathNotWritableError, match="export_chrome_trace: cannot write"):
        prof.export_chrome_trace(tmp_path / "missing" / "t.json.gz")
    prof.export_chrome_trace(tmp_path / "t.json.gz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json.gz"]
    for call, match in [(lambda: prof.export_chrome_trace(7), "export_chrome_trace: path must be a str"),
                        (lambda: prof.export_stacks(None), "export_stacks: path must be a str"),
                        (lambda: prof.key_averages(group_by_stack_n="a"), "key_averages: group_by_stack_n"),
                        (lambda: prof.key_averages().table(row_limit="a"), "table: row_limit"),
                        (lambda: schedule(wait=0, warmup=1, active=1, repeat=None), "schedule: repeat"),
                        (lambda: profile(activities=1.5), "profile: activities must be a list"),
                        (lambda: profile(schedule="a"), "profile: schedule must be callable"),
                        (lambda: profile(schedule=lambda step: "record"), r"schedule\(0\) must return a"),
                        (lambda: profile(record_shapes="yes"), "profile: record_shapes must be a bool"),
                        (lambda: tinynet.profiler.tensorboard_trace_handler(None), "tensorboard_trace_handler: path")]:
        with pytest.raises(errors.ArgumentTypeError, match=match):
            call()
    with profile() as again:  # nothing above left a profiler recording
        tinynet.ones(1) + 1
    assert [e.name for e in again.events()] == ["tinynet::add"]


@pytest.mark.gpu
def test_cuda_event_times():
    x = tinynet.tensor(X, device="cuda")
    w = tinynet.tensor(W, device="cuda", requires_grad=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True) as prof:
        with record_function("block"):
            (x @ w).relu().sum().backward()
    mm = next(e for e in prof.events() if e.name == "tinynet::matmul")
    assert mm.device_time_total > 0 and mm.self_device_time_total > 0 and mm.device_memory_usage == 48
    block = next(e for e in prof.events() if e.name == "block")
    assert block.device_time_total >= mm.device_time_total
    table = prof.key_averages().table(sort_by="cuda_time_total")
    assert "Self CUDA" in table and "CUDA total" in table and "Self CUDA time total" in table
