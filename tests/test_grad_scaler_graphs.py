"""GradScaler inside CUDA graphs (tinynet/optim/amp_scaling.py, GradScaler._captured_step).

On a GPU: a float16 autocast step with a GradScaler, clipping and SGD/Adam/AdamW, compiled
with ``tinynet.compile``, equals the eager run bit for bit over steps that overflow (skipped
on the device, the step count taken back one step later) and steps that do not: losses,
parameters, optimizer state, the scale and its growth tracker. On every backend: the
settling of a replay's skipped step (with a capture record on the host), and the refusal of
optimizers that read the flag on the host."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet import capture, nn
from tinynet.errors import GraphCaptureError
from tinynet.optim import amp_scaling

gpu = pytest.mark.gpu


class _Opt:
    """The part of an optimizer the settling reads: its per-parameter state."""

    def __init__(self):
        self.state = {1: {"step": 5}, 2: {"step": 5}, 3: {}}


def test_a_skipped_replay_is_settled_at_the_next_replay_and_at_state_reads():
    cap = capture.Capture(numpy)
    opt = _Opt()
    flag = numpy.zeros((), numpy.float32)
    ids = amp_scaling.record(opt, cap, flag)  # on the host the recorded copy runs at once
    ids.extend([1, 2, 3])
    cap.cell_updates(True)                    # replay 1: nothing pending before it
    assert opt.state[1]["step"] == 5 and "_amp_pending" in opt.__dict__
    cap.cell_updates(False)                   # replay 2 settles replay 1 (flag 0: counted)
    assert opt.state[1]["step"] == 5
    cap.chunks  # the kept flag lives in a cell chunk of its own, outside any pool
    opt._amp_pending[0][0] = 1.0              # replay 2 found inf/NaN
    amp_scaling.settle(opt)                   # e.g. state_dict() or the next eager step
    assert opt.state[1]["step"] == opt.state[2]["step"] == 4 and opt.state[3] == {}
    assert "_amp_pending" not in opt.__dict__
    amp_scaling.settle(opt)                   # settled once only
    assert opt.state[1]["step"] == 4


def test_found_inf_outside_a_capture_is_refused():
    opt = _Opt()
    opt.found_inf = tinynet.zeros(())
    with pytest.raises(GraphCaptureError, match="only while a CUDA graph is captured"):
        amp_scaling.found_inf(opt)


def test_scaler_step_in_a_capture_refuses_host_flag_optimizers(device):
    m = nn.Linear(4, 3).to(device)
    opt = tinynet.optim.Adagrad(m.parameters(), lr=0.1)
    s = tinynet.amp.GradScaler(device="cuda" if device == "cuda" else "cpu")
    s.scale(m(tinynet.ones(2, 4, device=device)).sum()).backward()
    cap = capture.Capture(numpy)
    with pytest.raises(GraphCaptureError, match="GradScaler.step: .*Adagrad reads it on the host"):
        with capture.capturing(cap):
            s.step(opt)
    assert not hasattr(opt, "found_inf")


def _run(graphed, optim, steps=14, after=2):
    """A float16 autocast step with a GradScaler whose scale overflows again and again."""
    tinynet.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 10)).to("cuda")
    if optim == "sgd":
        opt = tinynet.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    else:
        opt = getattr(tinynet.optim, optim)(model.parameters(), lr=1e-3)
    # growth every 2 clean steps from 2**20: float16 gradients overflow every few steps
    scaler = tinynet.amp.GradScaler(init_scale=2.0**20, growth_interval=2)
    rng = numpy.random.default_rng(1)
    x = tinynet.tensor(rng.standard_normal((steps, 16, 32)).astype(numpy.float32), device="cuda")
    y = tinynet.tensor(rng.integers(0, 10, (steps, 16)), device="cuda")

    def step(bx, by):
        opt.zero_grad()
        with tinynet.autocast("cuda", dtype=tinynet.float16):
            loss = F.cross_entropy(model(bx), by)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        return loss

    run = tinynet.compile(step, fullgraph=True) if graphed else step
    losses, scales = [], []
    for k in range(steps):
        losses.append(run(x[k], y[k]).item())
        scales.append(scaler.get_scale())
    for k in range(after):  # then eager steps of the same optimizer: the last replay is settled first
        losses.append(step(x[k], y[k]).item())
        scales.append(scaler.get_scale())
    state = opt.state_dict()["state"]
    steps_seen = sorted({st.get("step") for st in state.values()} - {None})
    moments = [numpy.asarray(v.get() if hasattr(v, "get") else v) for st in state.values()
               for k, v in sorted(st.items()) if k != "step"]
    return (losses, scales, scaler._get_growth_tracker(), steps_seen,
            [p.detach().numpy().copy() for p in model.parameters()], moments, run)


@gpu
@pytest.mark.parametrize("optim", ["sgd", "Adam", "AdamW"])
def test_graphed_scaled_step_equals_eager_bit_for_bit(optim):
    eager, graphed = _run(False, optim), _run(True, optim)
    assert graphed[6].captures == 1  # captured, not run eagerly after a warning
    assert eager[0] == graphed[0] and eager[1] == graphed[1] and eager[2] == graphed[2]
    scales = eager[1]
    assert any(scales[k] < scales[k - 1] for k in range(4, 14))  # steps skipped among the replays
    assert any(scales[k] > scales[k - 1] for k in range(4, 14))
    assert eager[3] == graphed[3]     # step counts: the skipped steps are not counted
    if optim != "sgd":
        assert eager[3][0] < 14
    for a, b in zip(eager[4] + eager[5], graphed[4] + graphed[5]):
        assert numpy.array_equal(a, b)


@gpu
def test_state_dict_after_replays_settles_the_last_replay():
    """The step counts read by state_dict() right after the replays (no eager step after
    them) equal the eager run's: the last replay's skip is settled by the read."""
    graphed, eager = _run(True, "Adam", steps=9, after=0), _run(False, "Adam", steps=9, after=0)
    assert graphed[3] == eager[3] and graphed[1] == eager[1]
