"""CUDA tensors passed to spawned processes share the parent's GPU memory
(tinynet/multiprocessing/cuda_ipc.py): hogwild training on the GPU, as PyTorch's CUDA IPC."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = """
import tinynet, tinynet.multiprocessing as mp

def work(rank, model, view, q):
    with tinynet.no_grad():
        for p in model.parameters():
            p.add_(rank + 1)
        view.mul_(10)  # a slice of a larger tensor: the offset travels with the handle
    q.put((model.weight.device.type, view.is_cuda))

if __name__ == "__main__":
    mp.set_start_method("spawn", force=True)
    model = tinynet.nn.Linear(3, 2).to("cuda")
    with tinynet.no_grad():
        for p in model.parameters():
            p.zero_()
    model.share_memory()  # a no-op for CUDA tensors, as in PyTorch
    t = tinynet.arange(6, dtype=tinynet.float32, device="cuda")
    q = mp.get_context("spawn").Queue()
    for rank in range(2):  # one after the other: the sum is exact
        p = mp.Process(target=work, args=(rank, model, t[2:5], q))
        p.start()
        p.join()
        assert p.exitcode == 0
        print(q.get(timeout=60))
    print(model.weight.tolist(), model.bias.tolist(), t.tolist())
    q.put(t)  # a tensor back to its own process: the same memory
    back = q.get(timeout=60)  # the feeder thread pickles it: a thread without a CUDA context yet
    back.add_(1)
    print(t.tolist())
"""


@pytest.mark.gpu
def test_spawned_processes_update_the_parents_cuda_model(tmp_path):
    prog = tmp_path / "hog_cuda.py"
    prog.write_text(PROGRAM)
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, str(prog)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=150)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[:2] == ["('cuda', True)", "('cuda', True)"]
    assert lines[2] == "[[3.0, 3.0, 3.0], [3.0, 3.0, 3.0]] [3.0, 3.0] [0.0, 1.0, 200.0, 300.0, 400.0, 5.0]"
    assert lines[3] == "[1.0, 2.0, 201.0, 301.0, 401.0, 6.0]"


class _FakeArray:
    """A stand-in for a CuPy array: what the export bookkeeping reads (data.ptr, nbytes)."""

    class _Ptr:
        def __init__(self, ptr):
            self.ptr = ptr

    def __init__(self, ptr, nbytes):
        self.data, self.nbytes = self._Ptr(ptr), nbytes


def test_exported_arrays_are_forgotten_when_freed_and_found_by_their_offset():
    """The sender's record of its exported arrays (several may share one allocation of
    CuPy's pool): a same-process receive finds the array that holds the offset; a freed
    array drops out, and the handle with its last array (no lasting growth)."""
    import weakref

    from tinynet.multiprocessing import cuda_ipc
    handle, start = b"h" * 64, 1 << 20
    a, b = _FakeArray(start, 256), _FakeArray(start + 512, 256)
    entry = cuda_ipc._exported.setdefault(handle, (start, 4096, {}))
    for arr in (a, b):  # as export() records them
        entry[2][id(arr)] = weakref.ref(arr)
        weakref.finalize(arr, cuda_ipc._forget, handle, id(arr))
    del arr
    try:
        assert cuda_ipc._own_array(handle, 600)[0] is b and cuda_ipc._own_array(handle, 600)[1:] == (start, 4096)
        assert cuda_ipc._own_array(handle, 16)[0] is a
        assert cuda_ipc._own_array(handle, 300) is None  # between the two arrays
        del a
        assert cuda_ipc._own_array(handle, 16) is None and handle in cuda_ipc._exported
        del b
        assert handle not in cuda_ipc._exported
    finally:
        cuda_ipc._exported.pop(handle, None)
