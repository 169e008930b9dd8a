"""tinynet.jit (torch.jit's eager pass-throughs), torch._assert and cuda.is_bf16_supported against
PyTorch: the decorators' forms, script/trace of a module and a function giving the eager results
(PyTorch's compiled ones on the same weights), fork/wait, Attribute, annotations, and the typed
errors where PyTorch refuses. One body per case for every device."""
import typing

import numpy
import pytest

import tinynet
from helpers import as_numpy, assert_close, rng
from tinynet import errors, jit, nn

torch = pytest.importorskip("torch")
R = rng(37)


def _mlp(m):
    class Net(m.nn.Module):
        scale: m.jit.Final[float]

        def __init__(self):
            super().__init__()
            self.scale = 0.5
            self.fc = m.nn.Linear(4, 3)

        @m.jit.ignore
        def no_weight_decay(self):
            return {"fc.bias"}

        @m.jit.ignore(drop=False)
        def spare(self):
            return 1

        @m.jit.unused
        def unused_path(self, x):
            return x

        @m.jit.export
        def half(self, x):
            return self.fc(x) * self.scale

        def forward(self, x):
            out = m.jit.annotate(typing.List[m.Tensor], [])
            out.append(self.fc(x).relu() * self.scale)
            if not m.jit.is_scripting() and not m.jit.is_tracing():
                out.append(x.sum(1, keepdim=True))
            return m.cat(out, 1)
    return Net()


def test_script_and_trace_give_pytorchs_results(device):
    ref = _mlp(torch).double()
    ours = _mlp(tinynet).double()
    ours.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    ours.to(device)
    x = R.standard_normal((5, 4))
    scripted, traced = jit.script(ours), jit.trace(ours, tinynet.tensor(x, device=device))
    assert scripted is ours and traced is ours  # eager: the module itself
    out = scripted(tinynet.tensor(x, device=device))
    assert_close(out, ref(torch.tensor(x)), rtol=1e-12, atol=1e-12)  # is_scripting() False: both columns parts
    # PyTorch's compiled module takes the is_scripting() branch: the same first three columns
    assert_close(out[:, :3], torch.jit.script(ref)(torch.tensor(x)), rtol=1e-12, atol=1e-12)
    assert_close(ours.half(tinynet.tensor(x, device=device)), ref.half(torch.tensor(x)), rtol=1e-12, atol=1e-12)
    assert ours.no_weight_decay() == ref.no_weight_decay() and ours.spare() == 1
    assert not jit.is_scripting() and not jit.is_tracing() and jit.is_scripting() == torch.jit.is_scripting()

    def affine(a, b):
        return a * 2 + b
    assert jit.script(affine) is affine
    assert jit.trace(affine, (tinynet.ones(2, device=device), tinynet.ones(2, device=device))) is affine
    assert jit.trace(affine, example_kwarg_inputs={"a": tinynet.ones(1), "b": tinynet.ones(1)}) is affine


def test_trace_runs_the_module_once_as_pytorchs_does(device):
    # a BatchNorm in training mode updates its running mean during the trace in both (once: PyTorch's
    # default check_trace=True runs it four more times to check the graph it recorded)
    ref, ours = torch.nn.BatchNorm1d(3).double(), nn.BatchNorm1d(3).double().to(device)
    x = R.standard_normal((8, 3))
    torch.jit.trace(ref, torch.tensor(x), check_trace=False)
    jit.trace(ours, tinynet.tensor(x, device=device))
    assert_close(ours.running_mean, ref.running_mean, rtol=1e-12, atol=1e-12)
    assert int(ours.num_batches_tracked) == int(ref.num_batches_tracked) == 1


def test_fork_wait_attribute_annotations_and_final(device):
    x = tinynet.tensor([1.0, 2.0], device=device)
    fut = jit.fork(lambda a, k=1: a + k, x, k=3)
    assert as_numpy(jit.wait(fut)).tolist() == [4.0, 5.0]
    assert torch.jit.wait(torch.jit.fork(lambda a, k=1: a + k, torch.tensor([1.0, 2.0]), k=3)).tolist() == [4.0, 5.0]

    def fails():
        raise KeyError("inside")
    with pytest.raises(KeyError, match="inside"):
        jit.wait(jit.fork(fails))
    a, t = jit.Attribute(3, int), torch.jit.Attribute(3, int)
    assert (a.value, a.type) == (t.value, t.type) and a._fields == t._fields
    assert jit.Final is torch.jit.Final is typing.Final
    for name in jit.annotations.__all__:
        assert getattr(jit.annotations, name) is getattr(torch.jit.annotations, name)
    assert not isinstance(nn.Linear(2, 2), jit.ScriptModule) and issubclass(jit.ScriptModule, nn.Module)
    assert not isinstance(len, jit.ScriptFunction)


def test_assert_and_bf16_support(device):
    tinynet._assert(True, "fine")
    tinynet._assert(tinynet.tensor(1.0, device=device) > 0, "fine")
    for lib in (tinynet, torch):
        with pytest.raises(AssertionError, match="width 3"):
            lib._assert(False, "width 3")
    assert isinstance(tinynet.cuda.is_bf16_supported(), bool)
    if device == "cpu" and not tinynet.cuda.is_available():
        assert tinynet.cuda.is_bf16_supported() is False
    if device == "cuda" and torch.cuda.is_available():  # a CUDA build of PyTorch on the GPU machine
        assert tinynet.cuda.is_bf16_supported() == torch.cuda.is_bf16_supported()
        assert (tinynet.cuda.is_bf16_supported(including_emulation=False)
                == torch.cuda.is_bf16_supported(including_emulation=False))


REFUSED = {
    "script(3)": lambda m: m.jit.script(3),
    "script('x')": lambda m: m.jit.script("x"),
    "trace(3, ...)": lambda m: m.jit.trace(3, (m.ones(1),)),
    "trace without inputs": lambda m: m.jit.trace(lambda x: x * 2),
    "ignore(3)": lambda m: m.jit.ignore(3),
    "fork(3)": lambda m: m.jit.fork(3),
    "wait(3)": lambda m: m.jit.wait(3),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_like_pytorch(name, device):
    with pytest.raises(Exception):
        REFUSED[name](torch)
    with pytest.raises(errors.TinynetError, match="jit."):
        REFUSED[name](tinynet)


def test_trace_refuses_example_kwarg_inputs_not_a_dict():
    with pytest.raises(errors.ArgumentTypeError, match="example_kwarg_inputs must be a dict"):
        jit.trace(lambda a: a, example_kwarg_inputs=[1])
    numpy.testing.assert_equal(jit.annotate(list, [1]), [1])
