"""The bad-input walk's entry records and its entry points beyond the core API
(tests/test_bad_input_walk.py runs them with the rest).

The namespaces here: ``tinynet.profiler`` (the functions, a profile's constructor and run, and
the methods of a finished profile and its event lists), ``nn.utils.parametrize`` /
``parametrizations`` / ``prune`` (the functions and each pruning method's ``apply``),
``onnx.export``, ``accelerator``, ``multiprocessing``, ``vision`` (the datasets'
constructors, each transform's constructor and call, ``utils``) and ``serialization``
(``save``/``load``, ``add_safe_globals``/``safe_globals``).

Nothing here touches what lies outside the test: every path argument is put inside a
temporary folder (:func:`inside`), the datasets cannot download (:func:`offline`),
``spawn`` starts no process (:func:`no_children`: its arguments are checked, then the
first start is stopped), and what a call changes process-wide (the safe globals, the
current GPU) is put back.
"""
import atexit
import collections
import contextlib
import functools
import importlib
import inspect
import os
import shutil
import sys
import tempfile

import numpy
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinynet
import tinynet.data.datasets
from tinynet import accelerator, multiprocessing as tmp, nn, onnx, profiler, serialization, vision
from tinynet.nn.utils import parametrizations, parametrize, prune
from tinynet.vision import transforms as T

from bad_input_kinds import KINDS, Built, kind_of

mp_spawn = sys.modules["tinynet.multiprocessing.spawn"]  # (the package's ``spawn`` is the function)

Param = collections.namedtuple("Param", "name kind required star keyword", defaults=(True, False, False))


class Entry:
    """One public entry point: a name, the callable, and its :class:`Param` list; ``first`` is a
    fixed first argument (the module whose ``forward`` is walked)."""

    def __init__(self, name, fn, params, first=None):
        self.name, self.fn, self.params, self.first = name, fn, params, first

    def __repr__(self):
        return self.name


def signature_params(fn, skip_self=False):
    """A :class:`Param` for each parameter of ``fn`` (``**kwargs`` left out)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [Param("input", "tensor")]
    out = []
    for i, p in enumerate(sig.parameters.values()):
        if skip_self and i == 0 or p.kind is p.VAR_KEYWORD:
            continue
        star = p.kind is p.VAR_POSITIONAL
        out.append(Param(p.name, kind_of(p), p.default is p.empty and not star, star, p.kind is p.KEYWORD_ONLY))
    return out


# ---- keeping the walk inside the test ----------------------------------------------------
ROOT = tempfile.mkdtemp(prefix="tinynet-walk-")
atexit.register(shutil.rmtree, ROOT, True)


def inside(path):
    """A str or bytes path moved into the walk's temporary folder; an int (which ``open`` takes
    as a file descriptor) made one that is never open; other values unchanged."""
    if isinstance(path, int) and not isinstance(path, bool):
        return 1_000_000 + abs(path)
    if isinstance(path, (str, bytes)):
        sep, up, root = (b"/", b"..", os.fsencode(ROOT)) if isinstance(path, bytes) else ("/", "..", ROOT)
        return os.path.join(root, path.replace(up, up[:1]).lstrip(sep))
    return path


def _raise_offline(*args, **kwargs):
    raise tinynet.errors.DownloadError("download: the bad-input walk runs offline")


@contextlib.contextmanager
def offline():
    """The datasets' downloads fail at once (no network in the walk)."""
    real, tinynet.data.datasets.download = tinynet.data.datasets.download, _raise_offline
    try:
        yield
    finally:
        tinynet.data.datasets.download = real


class _WouldStart(Exception):
    pass


class _Process:
    def __init__(self, *args, **kwargs):
        pass

    def start(self):
        raise _WouldStart


class _Context:
    SimpleQueue = staticmethod(lambda: None)
    Process = _Process


@contextlib.contextmanager
def no_children():
    """spawn's checks run; the first process it would start is not started."""
    real = mp_spawn.multiprocessing.get_context
    mp_spawn.multiprocessing.get_context = lambda method: _Context()
    try:
        yield
    except _WouldStart:
        pass
    finally:
        mp_spawn.multiprocessing.get_context = real


# ---- built objects -------------------------------------------------------------------------
def built(label, make):
    return Built(label, lambda d: make(d))


def _ran_profile(d, **kw):
    with profiler.profile(record_shapes=True, with_stack=True, profile_memory=True, **kw) as prof:
        with profiler.record_function("block"):
            (tinynet.ones(2, 3, device=d) * 2).sum()
    return prof


def _pruned(d):
    m = nn.Linear(3, 2).to(d)
    prune.l1_unstructured(m, "weight", 2)
    return m


def _normed(d):
    return parametrizations.weight_norm(nn.Linear(3, 2).to(d))


def _with_buffer(d):
    m = nn.Module()
    m.register_buffer("weight", tinynet.ones(4, 4, device=d))
    return m


MODULES = [built("Linear(3, 2)", lambda d: nn.Linear(3, 2).to(d)),
           built("Linear(3, 2, bias=False)", lambda d: nn.Linear(3, 2, bias=False).to(d)),
           built("Conv2d(2, 3, 2)", lambda d: nn.Conv2d(2, 3, 2).to(d)),
           built("ConvTranspose2d(2, 3, 2)", lambda d: nn.ConvTranspose2d(2, 3, 2).to(d)),
           built("BatchNorm1d(3)", lambda d: nn.BatchNorm1d(3).to(d)),
           built("Embedding(4, 4)", lambda d: nn.Embedding(4, 4).to(d)),
           built("pruned Linear(3, 2)", _pruned), built("weight-normed Linear(3, 2)", _normed),
           built("a Module with a buffer 'weight'", _with_buffer)]
PARAMETRIZATIONS = [built("Identity()", lambda d: nn.Identity()), built("Tanh()", lambda d: nn.Tanh()),
                    built("Linear(3, 4)", lambda d: nn.Linear(3, 4).to(d)),
                    built("Flatten(0)", lambda d: nn.Flatten(0))]
PRUNING_METHODS = [prune.L1Unstructured, prune.RandomUnstructured, prune.LnStructured, prune.RandomStructured,
                   prune.Identity, prune.CustomFromMask, prune.PruningContainer]


def _pil(mode, shape):
    return built(f"PIL {mode}{shape}", lambda d: importlib.import_module("PIL.Image").fromarray(
        numpy.arange(numpy.prod(shape), dtype=numpy.uint8).reshape(shape), mode=mode))


IMAGES = st.one_of(
    KINDS["tensor"],
    hnp.arrays(st.sampled_from([numpy.uint8, numpy.float32, numpy.int64, numpy.bool_]),
               hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5)),
    st.sampled_from([_pil("L", (5, 4)), _pil("RGB", (4, 6, 3))] if vision._images.HAVE_PIL else [None]),
)

KINDS.update({
    "w.module": st.sampled_from(MODULES),
    "w.tensor_name": st.sampled_from(["weight", "bias", "running_mean", "num_batches_tracked", "nope", ""]),
    "w.parametrization": st.sampled_from(PARAMETRIZATIONS),
    "w.amount": st.one_of(st.integers(-1, 8), st.floats(-0.5, 1.5)),
    "w.pairs": st.lists(st.tuples(st.sampled_from(MODULES), st.sampled_from(["weight", "bias", "nope"])),
                        max_size=3),
    "w.pruning_method": st.sampled_from(PRUNING_METHODS),
    "w.path": st.sampled_from(["trace.json", "t.json.gz", "missing/x.json", "", "out.png", "m.onnx", "ckpt.pt",
                               "ckpt.safetensors", ".", "x.jpg"]),
    "w.activities": st.lists(st.sampled_from(list(profiler.ProfilerActivity)), max_size=3),
    "w.schedule": st.sampled_from([profiler.schedule(wait=1, warmup=1, active=1), lambda step: "record", abs]),
    "w.handler": st.sampled_from([lambda prof: None, Built("tensorboard_trace_handler",
                                                           lambda d: profiler.tensorboard_trace_handler(
                                                               inside("tb")))]),
    "w.sort_by": st.sampled_from(["cpu_time_total", "self_cuda_time_total", "count", "cpu_time_avg", "name"]),
    "w.image": IMAGES,
    "w.transform": st.sampled_from([None, T.ToTensor(), T.Compose([T.ToTensor(), T.Normalize((0.5,), (0.5,))]),
                                    T.Normalize((0.5,), (0.5,)), abs]),
    "w.globals": st.lists(st.sampled_from([tinynet.Tensor, nn.Linear, (nn.Linear, "x.Linear"), (abs, 5), abs]),
                          max_size=3),
    "w.saved": st.sampled_from(["saved.npz", "pickled.npz", "nope.npz", "", "corrupt.npz"]),
})


def entry(name, fn, kinds=None, first=None, params=None, skip_self=False):
    """An :class:`Entry` for ``fn`` with the parameters of its signature (or ``params``), the
    kinds in ``kinds`` replacing the guessed ones by name; ``first`` prepends a built object."""
    params = signature_params(fn, skip_self) if params is None else params
    params = [p._replace(kind=(kinds or {}).get(p.name, p.kind)) for p in params]
    return Entry(name, fn, ([Param("self", "built")] if first is not None else []) + params, first=first)


def method(name, cls, attr, first, kinds=None):
    """The method ``attr`` of the object ``first`` builds (its signature from ``cls``)."""
    return entry(name, lambda obj, *a, **k: getattr(obj, attr)(*a, **k), kinds, first,
                 signature_params(getattr(cls, attr), skip_self=True))


# ---- profiler ------------------------------------------------------------------------------
RAN = built("profile (ran)", _ran_profile)
PROFILE_KINDS = {"activities": "w.activities", "schedule": "w.schedule", "on_trace_ready": "w.handler",
                 "use_cuda": "bool", "acc_events": "bool", "with_stack": "bool", "record_shapes": "bool"}


def _profile_run(**kwargs):
    """A profile made from ``kwargs`` and run for two steps; its table read."""
    with profiler.profile(**kwargs) as prof:
        for _ in range(2):
            (tinynet.ones(2) * 2).sum()
            prof.step()
    return prof.key_averages().table()


def _chrome_trace(prof, path):
    return prof.export_chrome_trace(inside(path))


def _stacks(prof, path, metric="self_cpu_time_total"):
    return prof.export_stacks(inside(path), metric)


def _events_trace(prof, path):
    return prof.events().export_chrome_trace(inside(path))


def _tensorboard(prof, dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    return profiler.tensorboard_trace_handler(inside(dir_name), worker_name, use_gzip, use_python_export)(prof)


def _record(name, args=None):
    with profiler.record_function(name, args):
        return tinynet.ones(1) + 1


PATH = Param("path", "w.path")
PROFILER = [
    entry("profiler.schedule", profiler.schedule, dict.fromkeys(
        ["wait", "warmup", "active", "repeat", "skip_first", "skip_first_wait"], "int")),
    entry("profiler.record_function", _record, {"name": "w.tensor_name", "args": "str"}),
    entry("profiler.profile", profiler.profile, PROFILE_KINDS),
    entry("profiler.profile (a run)", _profile_run, params=[p._replace(kind=PROFILE_KINDS.get(p.name, p.kind))
                                                            for p in signature_params(profiler.profile)]),
    entry("profiler.tensorboard_trace_handler", _tensorboard, {"dir_name": "w.path", "worker_name": "w.tensor_name"},
          first=RAN, params=signature_params(profiler.tensorboard_trace_handler)),
    entry("profiler.profile.export_chrome_trace", _chrome_trace, first=RAN, params=[PATH]),
    entry("profiler.profile.export_stacks", _stacks, first=RAN, params=[PATH, Param("metric", "w.sort_by", False)]),
    entry("profiler.EventList.export_chrome_trace", _events_trace, first=RAN, params=[PATH]),
    method("profiler.profile.key_averages", profiler.profile, "key_averages", RAN),
    method("profiler.EventList.table", profiler.EventList, "table",
           built("key_averages()", lambda d: _ran_profile(d).key_averages()), {"sort_by": "w.sort_by"}),
    method("profiler.EventList.key_averages", profiler.EventList, "key_averages",
           built("events()", lambda d: _ran_profile(d).events())),
]

# ---- nn.utils: parametrize, parametrizations, prune ----------------------------------------
NN_KINDS = {"module": "w.module", "tensor_name": "w.tensor_name", "name": "w.tensor_name",
            "parametrization": "w.parametrization", "amount": "w.amount", "parameters": "w.pairs",
            "pruning_method": "w.pruning_method", "importance_scores": "tensor", "mask": "tensor",
            "orthogonal_map": "str", "n": "float", "leave_parametrized": "bool"}


def _global_unstructured(parameters, pruning_method, importance_scores=None, amount=0.5):
    return prune.global_unstructured(parameters, pruning_method, importance_scores, amount=amount)


def _cached(module, tensor_name, parametrization, *, unsafe=False):
    """register_parametrization inside ``cached()``, then the tensor read twice (one computation)."""
    with parametrize.cached():
        parametrize.register_parametrization(module, tensor_name, parametrization, unsafe=unsafe)
        return getattr(module, tensor_name) is getattr(module, tensor_name)


NN_UTILS = [
    *(entry(f"nn.utils.parametrize.{n}", getattr(parametrize, n), NN_KINDS)
      for n in ("register_parametrization", "remove_parametrizations", "is_parametrized",
                "type_before_parametrizations")),
    entry("nn.utils.parametrize.cached", _cached, NN_KINDS),
    *(entry(f"nn.utils.parametrizations.{n}", getattr(parametrizations, n), NN_KINDS)
      for n in parametrizations.__all__),
    *(entry(f"nn.utils.prune.{n}", getattr(prune, n), NN_KINDS)
      for n in ("identity", "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
                "custom_from_mask", "remove", "is_pruned")),
    entry("nn.utils.prune.global_unstructured", _global_unstructured, NN_KINDS),
    *(entry(f"nn.utils.prune.{cls.__name__}.apply", cls.apply, NN_KINDS) for cls in PRUNING_METHODS[:-1]),
    *(entry(f"nn.utils.prune.{cls.__name__}", cls, NN_KINDS) for cls in PRUNING_METHODS),
    method("nn.utils.prune.L1Unstructured.prune", prune.L1Unstructured, "prune",
           built("L1Unstructured(2)", lambda d: prune.L1Unstructured(2)), {"default_mask": "tensor"}),
    method("nn.utils.prune.LnStructured.compute_mask", prune.LnStructured, "compute_mask",
           built("LnStructured(1, 2, 0)", lambda d: prune.LnStructured(1, 2, 0)), {"default_mask": "tensor"}),
]


# ---- onnx, accelerator, multiprocessing ----------------------------------------------------
def _export(model, args=(), f=None, **kwargs):
    return onnx.export(model, args, inside(f), **kwargs)


EXPORT_KINDS = {"model": "w.module", "args": "tensors", "f": "w.path", "input_names": "tensors",
                "output_names": "tensors", "dynamic_axes": "dim", "opset_version": "int", "kwargs": "tensors",
                "training": "bool", "export_params": "bool", "keep_initializers_as_inputs": "bool"}
ONNX = [entry("onnx.export", _export, EXPORT_KINDS, params=signature_params(onnx.export))]


def _positional(fn):
    """``fn`` (positional-only parameters) called with the drawn keywords as positions."""
    return lambda *args, **kwargs: fn(*args, *kwargs.values())


def _device_index(device):
    with accelerator.device_index(device):
        return accelerator.current_device_index() if accelerator.is_available() else None


@contextlib.contextmanager
def _same_gpu():
    before = tinynet.cuda.current_device() if tinynet.cuda.is_available() else None
    try:
        yield
    finally:
        if before is not None:
            tinynet.cuda.set_device(before)


def _keeping_gpu(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        with _same_gpu():
            return fn(*args, **kwargs)
    return call


ACCELERATOR = [entry(f"accelerator.{n}", _keeping_gpu(_positional(getattr(accelerator, n))),
                     params=[p._replace(kind="device", keyword=False)
                             for p in signature_params(getattr(accelerator, n))])
               for n in accelerator.__all__ if n != "device_index"]
ACCELERATOR.append(entry("accelerator.device_index", _keeping_gpu(_device_index), {"device": "device"}))


def _spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    with no_children():
        return tmp.spawn(fn, args, nprocs, join, daemon, start_method)


def _start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    with no_children():
        return tmp.start_processes(fn, args, nprocs, join, daemon, start_method)


MP_KINDS = {"fn": "callable", "args": "tensors", "nprocs": "int", "join": "bool", "daemon": "bool",
            "start_method": "str", "new_strategy": "str"}
MULTIPROCESSING = [
    entry("multiprocessing.spawn", _spawn, MP_KINDS),
    entry("multiprocessing.start_processes", _start_processes, MP_KINDS),
    *(entry(f"multiprocessing.{n}", getattr(tmp, n), MP_KINDS)
      for n in ("set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies")),
    method("multiprocessing.ProcessContext.join", tmp.ProcessContext, "join",
           built("ProcessContext([], [])", lambda d: tmp.ProcessContext([], [])), {"timeout": "float"}),
]


# ---- vision --------------------------------------------------------------------------------
def _dataset(cls):
    def make(root, train=True, transform=None, target_transform=None, download=False):
        with offline():
            return cls(inside(root), train, transform, target_transform, download)
    return make


DATA_KINDS = {"root": "w.path", "transform": "w.transform", "target_transform": "w.transform", "train": "bool",
              "download": "bool", "image_size": "size", "num_classes": "int", "size": "int",
              "random_offset": "int"}


def _save_image(tensor, fp, format=None):
    return vision.utils.save_image(tensor, inside(fp), format)


TRANSFORMS = {"ToTensor": (), "Normalize": ((0.5,), (0.5,)), "Resize": (3,), "CenterCrop": (3,),
              "RandomCrop": (3,), "RandomHorizontalFlip": (), "Compose": ([T.ToTensor()],)}
TRANSFORM_KINDS = {"mean": "floats", "std": "floats", "transforms": "tensors", "lambd": "callable",
                   "interpolation": "str", "max_size": "int", "antialias": "bool", "fill": "float",
                   "pad_if_needed": "bool", "padding_mode": "str", "inplace": "bool", "p": "float",
                   "img": "w.image", "pic": "w.image", "tensor": "w.image"}
FAKE = built("FakeData(4, (3, 5, 6))", lambda d: vision.datasets.FakeData(4, (3, 5, 6)))
VISION = [
    *(entry(f"vision.datasets.{n}", _dataset(getattr(vision.datasets, n)), DATA_KINDS)
      for n in ("MNIST", "FashionMNIST", "CIFAR10")),
    entry("vision.datasets.FakeData", vision.datasets.FakeData, DATA_KINDS),
    method("vision.datasets.FakeData.__getitem__", vision.datasets.FakeData, "__getitem__", FAKE, {"index": "int"}),
    method("vision.datasets.FakeData.__getitems__", vision.datasets.FakeData, "__getitems__", FAKE,
           {"indices": "size"}),
    # (InterpolationMode is an Enum: calling it is Python's enum lookup, as torchvision's)
    *(entry(f"vision.transforms.{n}", getattr(T, n), TRANSFORM_KINDS) for n in T.__all__ if n != "InterpolationMode"),
    *(method(f"vision.transforms.{n}.__call__", getattr(T, n), "__call__",
             built(f"{n}{args}", lambda d, n=n, args=args: getattr(T, n)(*args)), TRANSFORM_KINDS)
      for n, args in TRANSFORMS.items()),
    entry("vision.utils.make_grid", vision.utils.make_grid, {"value_range": "floats", **TRANSFORM_KINDS}),
    entry("vision.utils.save_image", _save_image, {"fp": "w.path", **TRANSFORM_KINDS}),
]


# ---- serialization -------------------------------------------------------------------------
def _saved_files():
    """Files for ``load`` in the walk's folder: a state dict, a pickled module, a corrupt file."""
    tinynet.save({"w": tinynet.ones(2), "n": 3}, inside("saved.npz"))
    tinynet.save(nn.Linear(2, 2), inside("pickled.npz"))
    with open(inside("corrupt.npz"), "wb") as f:
        f.write(b"PK\x03\x04 not a zip")


def _load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None):
    return tinynet.load(inside(f), map_location, pickle_module, weights_only=weights_only, mmap=mmap)


def _save(obj, f, pickle_module=None, pickle_protocol=None, format=None):
    return tinynet.save(obj, inside(f) if not isinstance(f, Built) else f, pickle_module, pickle_protocol, format)


def _keeping_safe_globals(fn):
    def call(*args, **kwargs):
        before = serialization.get_safe_globals()
        try:
            with fn(*args, **kwargs) if fn is serialization.safe_globals else contextlib.nullcontext():
                pass
            if fn is not serialization.safe_globals:
                fn(*args, **kwargs)
        finally:
            serialization.clear_safe_globals()
            serialization.add_safe_globals(before)
    return call


SER_KINDS = {"f": "w.saved", "obj": "tensors", "map_location": "device", "pickle_module": "str",
             "pickle_protocol": "int", "format": "str", "weights_only": "bool", "mmap": "bool",
             "safe_globals": "w.globals"}
SERIALIZATION = [
    entry("serialization.load", _load, SER_KINDS),
    entry("serialization.save", _save, {**SER_KINDS, "f": "w.path"}),
    *(entry(f"serialization.{n}", _keeping_safe_globals(getattr(serialization, n)), SER_KINDS,
            params=signature_params(getattr(serialization, n)))
      for n in ("add_safe_globals", "safe_globals")),
]
_saved_files()

TOOL_ENTRIES = [*PROFILER, *NN_UTILS, *ONNX, *ACCELERATOR, *MULTIPROCESSING, *VISION, *SERIALIZATION]
# ``tinynet.multiprocessing``'s other public names are the standard library's own objects
# (``Process``, ``Queue``, ``set_start_method``, ...), as ``torch.multiprocessing``'s are: not walked.

# Built-in errors an entry may raise by contract: the filesystem's failures on the user's own
# file, re-raised unchanged (tinynet.save/load's docstrings; PyTorch and ``open`` do the same).
ALLOWED = {"serialization.load": (FileNotFoundError,), "serialization.save": (OSError,)}


# ---- no silence: PyTorch refuses these and so does tinynet (test_refused_like_pytorch) -----
def _linear(m):
    return m.nn.Linear(3, 2)


def _ran(m):
    with m.profiler.profile() as prof:
        m.ones(2) * 2
    return prof


def _nn(m):
    return m.nn.utils


TOOL_RAISES = {
    "profiler.schedule active 0": lambda m: m.profiler.schedule(wait=0, warmup=0, active=0),
    "profiler.schedule wait -1": lambda m: m.profiler.schedule(wait=-1, warmup=0, active=1),
    "profiler.schedule wait str": lambda m: m.profiler.schedule(wait="a", warmup=0, active=1),
    "profiler.record_function of an int": lambda m: m.profiler.record_function(3).__enter__(),
    "profiler.profile schedule str": lambda m: m.profiler.profile(schedule="a"),
    "profiler.profile activities 1.5": lambda m: m.profiler.profile(activities=1.5),
    "profiler table sort_by 'x'": lambda m: _ran(m).key_averages().table(sort_by="x"),
    "profiler table sort_by 3": lambda m: _ran(m).key_averages().table(sort_by=3),
    "profiler key_averages group_by_stack_n str": lambda m: _ran(m).key_averages(group_by_stack_n="a"),
    "profiler export_chrome_trace(5)": lambda m: _ran(m).export_chrome_trace(5),
    "register_parametrization of a missing name": lambda m: _nn(m).parametrize.register_parametrization(
        _linear(m), "nope", m.nn.Identity()),
    "register_parametrization of a function": lambda m: _nn(m).parametrize.register_parametrization(
        _linear(m), "weight", abs),
    "register_parametrization on a str": lambda m: _nn(m).parametrize.register_parametrization(
        "a", "weight", m.nn.Identity()),
    "register_parametrization of a list name": lambda m: _nn(m).parametrize.register_parametrization(
        _linear(m), [], m.nn.Identity()),
    "register_parametrization changing the shape": lambda m: _nn(m).parametrize.register_parametrization(
        _linear(m), "weight", m.nn.Linear(3, 4)),
    "remove_parametrizations of a plain weight": lambda m: _nn(m).parametrize.remove_parametrizations(
        _linear(m), "weight"),
    "weight_norm dim 5": lambda m: _nn(m).parametrizations.weight_norm(_linear(m), dim=5),
    "weight_norm name 5": lambda m: _nn(m).parametrizations.weight_norm(_linear(m), name=5),
    "weight_norm of a str": lambda m: _nn(m).parametrizations.weight_norm("a"),
    "spectral_norm n_power_iterations 0": lambda m: _nn(m).parametrizations.spectral_norm(
        _linear(m), n_power_iterations=0),
    "spectral_norm eps str": lambda m: _nn(m).parametrizations.spectral_norm(_linear(m), eps="a"),
    "spectral_norm dim 1.5": lambda m: _nn(m).parametrizations.spectral_norm(_linear(m), dim=1.5),
    "orthogonal of a vector": lambda m: _nn(m).parametrizations.orthogonal(m.nn.LayerNorm(3)),
    "orthogonal map 'x'": lambda m: _nn(m).parametrizations.orthogonal(_linear(m), orthogonal_map="x"),
    "l1_unstructured amount -1": lambda m: _nn(m).prune.l1_unstructured(_linear(m), "weight", -1),
    "l1_unstructured amount 1.5": lambda m: _nn(m).prune.l1_unstructured(_linear(m), "weight", 1.5),
    "l1_unstructured amount str": lambda m: _nn(m).prune.l1_unstructured(_linear(m), "weight", "a"),
    "l1_unstructured amount 7 of 6": lambda m: _nn(m).prune.l1_unstructured(_linear(m), "weight", 7),
    "l1_unstructured name 5": lambda m: _nn(m).prune.l1_unstructured(_linear(m), 5, 1),
    "l1_unstructured of a str": lambda m: _nn(m).prune.l1_unstructured("a", "weight", 1),
    "l1_unstructured scores str": lambda m: _nn(m).prune.l1_unstructured(_linear(m), "weight", 1,
                                                                         importance_scores="a"),
    "l1_unstructured scores shape": lambda m: _nn(m).prune.l1_unstructured(_linear(m), "weight", 1,
                                                                           importance_scores=m.ones(3)),
    "ln_structured of a vector": lambda m: _nn(m).prune.ln_structured(_linear(m), "bias", 1, 2, 0),
    "ln_structured dim str": lambda m: _nn(m).prune.ln_structured(_linear(m), "weight", 1, 2, "a"),
    "ln_structured dim 1.5": lambda m: _nn(m).prune.ln_structured(_linear(m), "weight", 1, 2, 1.5),
    "ln_structured dim 5": lambda m: _nn(m).prune.ln_structured(_linear(m), "weight", 1, 2, 5),
    "random_structured dim 5": lambda m: _nn(m).prune.random_structured(_linear(m), "weight", 1, 5),
    "custom_from_mask shape": lambda m: _nn(m).prune.custom_from_mask(_linear(m), "weight", m.ones(3)),
    "custom_from_mask str": lambda m: _nn(m).prune.custom_from_mask(_linear(m), "weight", "a"),
    "prune.remove of an unpruned weight": lambda m: _nn(m).prune.remove(_linear(m), "weight"),
    "prune.remove on a str": lambda m: _nn(m).prune.remove("a", "weight"),
    "prune.is_pruned of a str": lambda m: _nn(m).prune.is_pruned("a"),
    "global_unstructured of a structured method": lambda m: _nn(m).prune.global_unstructured(
        [(_linear(m), "weight")], _nn(m).prune.LnStructured, amount=1, n=2, dim=0),
    "global_unstructured of an int": lambda m: _nn(m).prune.global_unstructured(5, _nn(m).prune.L1Unstructured,
                                                                                 amount=1),
    "global_unstructured of [5]": lambda m: _nn(m).prune.global_unstructured([5], _nn(m).prune.L1Unstructured,
                                                                              amount=1),
    "global_unstructured method str": lambda m: _nn(m).prune.global_unstructured([(_linear(m), "weight")], "a",
                                                                                  amount=1),
    "set_sharing_strategy('x')": lambda m: m.multiprocessing.set_sharing_strategy("x"),
    "set_sharing_strategy([])": lambda m: m.multiprocessing.set_sharing_strategy([]),
    "spawn nprocs str": lambda m: m.multiprocessing.spawn(print, nprocs="a"),
    "start_processes method 'x'": lambda m: m.multiprocessing.start_processes(print, start_method="x"),
    "save to an int": lambda m: m.save({}, 5),
    "load of an int": lambda m: m.load(5),
}
