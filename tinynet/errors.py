"""Typed errors raised by tinynet.

Every error derives from :class:`TinynetError` *and* from the built-in exception a
Python user would expect, so ``except ValueError`` keeps working:

=======================  ==============================
error                    also a
=======================  ==============================
ShapeError               ValueError
DTypeError               TypeError
ArgumentError            ValueError
ArgumentTypeError        TypeError
IndexOutOfRangeError     IndexError
DeviceError              RuntimeError (a BackendError)
DeviceMismatchError      ValueError
BackendError             RuntimeError
AutogradError            RuntimeError
LinAlgError              RuntimeError
GradcheckError           RuntimeError (an AutogradError)
AnomalyError             RuntimeError (an AutogradError)
StateDictError           RuntimeError
SerializationError       ValueError
UnpicklingError          ValueError (a SerializationError)
DatasetNotFoundError     FileNotFoundError
ChecksumError            OSError
DownloadError            OSError
WorkerError              RuntimeError
MissingExtraError        ImportError
PathNotWritableError     OSError
GraphCaptureError        RuntimeError
GraphWarmupError         RuntimeError (a GraphCaptureError)
DistributedError         RuntimeError
ProcessGroupError        ValueError (a DistributedError)
FutureError              RuntimeError
ProfilerError            RuntimeError
OnnxExportError          RuntimeError
UnsupportedOperatorError RuntimeError (an OnnxExportError)
LazyModuleError          RuntimeError
=======================  ==============================

Messages name the operation and give the expected and the actual value, e.g.
``conv2d: expected input of shape (N, C, H, W), got (28, 28)``.
"""
import pickle


class TinynetError(Exception):
    """Base class of every error tinynet raises on purpose."""


class ShapeError(TinynetError, ValueError):
    """An argument has the wrong shape or number of dimensions."""


class DTypeError(TinynetError, TypeError):
    """An argument has the wrong dtype (e.g. float targets for ``nll_loss``)."""


class UnsupportedDTypeError(DTypeError, RuntimeError):
    """A dtype tinynet knows but cannot compute in here (bfloat16 on a CuPy without it;
    PyTorch raises RuntimeError for a device without bfloat16)."""


class ArgumentError(TinynetError, ValueError):
    """An argument has a value the op does not accept (a negative size, an unknown mode,
    ``randint`` with ``high <= low``, an ``einsum`` equation that does not fit, ...)."""


class ArgumentTypeError(TinynetError, TypeError):
    """An argument has the wrong Python type (a float where an int is needed, a list where
    a Tensor is needed, ...)."""


class IndexOutOfRangeError(TinynetError, IndexError):
    """An index (in ``gather``, ``index_select``, ``x[i]``, a ``dim``...) is outside the
    valid range; the message gives the range."""


class DeviceMismatchError(TinynetError, ValueError):
    """Tensors on different devices (NumPy host vs CuPy GPU) were mixed in one op."""


class BackendError(TinynetError, RuntimeError):
    """The requested array backend (or cuDNN) is unknown or cannot be used."""


class DeviceError(BackendError):
    """A device string does not parse, or names a device this machine does not have
    (``"cuda"`` without a GPU, ``"cuda:3"`` on a machine with one GPU)."""


class AutogradError(TinynetError, RuntimeError):
    """Misuse of autograd: backward through a freed graph, non-scalar backward, ..."""


class LinAlgError(TinynetError, RuntimeError):
    """A matrix the factorisation cannot take: ``linalg.solve``/``linalg.inv`` of a singular
    matrix, ``linalg.cholesky`` of one that is not positive-definite (PyTorch's
    ``torch.linalg.LinAlgError``, also a ``RuntimeError``; ``tinynet.linalg.LinAlgError``)."""


class AutocastError(TinynetError, RuntimeError):
    """An op that is unsafe under autocast was called in an autocast region
    (binary_cross_entropy on CUDA), or autocast was asked for a device type it lacks."""


class GradScalerError(TinynetError, RuntimeError):
    """A GradScaler method called out of order (``unscale_`` twice before ``update``, ``step``
    before ``scale``, ...), as PyTorch's GradScaler refuses it."""


class AnomalyError(AutogradError):
    """Anomaly detection (``tinynet.autograd.detect_anomaly``) found a NaN produced by an op's
    forward or backward; the message names the op and the user code that created it."""


class GradcheckError(AutogradError):
    """:func:`tinynet.autograd.gradcheck` found analytic and numerical gradients that differ."""


class StateDictError(TinynetError, RuntimeError):
    """``load_state_dict`` found missing/unexpected keys or mismatched shapes."""


class SerializationError(TinynetError, ValueError):
    """A checkpoint file is not a valid tinynet ``.npz`` file, or an object can't be saved."""


class UnpicklingError(SerializationError, pickle.UnpicklingError):
    """``load`` with ``weights_only=True`` (the default) found a global in a pickled checkpoint
    that is not on the allow-list; the message names it and the opt-ins (``add_safe_globals``,
    the ``safe_globals`` context manager, ``weights_only=False``), as PyTorch 2.6+ does."""


class DatasetNotFoundError(TinynetError, FileNotFoundError, RuntimeError):
    """Dataset files are missing and could not (or may not) be downloaded. Also a
    ``RuntimeError``, which is what torchvision's datasets raise in this case, so a program
    written for torchvision catches it too."""


class ChecksumError(TinynetError, OSError):
    """A file's MD5 digest differs from the published value."""


class DownloadError(TinynetError, OSError):
    """Every mirror failed while downloading a file."""


class WorkerError(TinynetError, RuntimeError):
    """A DataLoader worker process exited unexpectedly, a batch did not arrive within the
    loader's ``timeout``, or a worker's error could not be rebuilt in the main process
    (PyTorch raises a plain ``RuntimeError`` in these cases)."""


class MissingExtraError(TinynetError, ImportError):
    """An optional package is not installed; the message names the extra that installs it
    (``pip install 'tinynet[tensorboard]'``)."""


class PathNotWritableError(TinynetError, OSError):
    """A folder or file tinynet was asked to write (a TensorBoard ``log_dir``, ...) cannot be
    created or written; the message gives the path and the operating system's reason."""


class GraphCaptureError(TinynetError, RuntimeError):
    """Work that a CUDA graph cannot hold was asked for while one was being captured: a
    host synchronisation (``.item()``, ``print(tensor)``, a transfer to or from host memory,
    a data-dependent shape), a first optimizer step, or a replay whose frozen settings
    changed. The message names the op and the line of user code (docs/gpu.md)."""


class GraphWarmupError(GraphCaptureError):
    """A capture came too early: the step makes state at its first real run (an optimizer's
    moments or momentum buffers), and no eager call has made it yet, e.g. because a
    GradScaler skipped every warm-up step. ``tinynet.compile`` runs more calls eagerly and
    captures again."""


class DistributedError(TinynetError, RuntimeError):
    """A collective of :mod:`tinynet.distributed` failed: another rank failed or exited, no
    answer came within the process group's ``timeout``, the tensors differ across ranks
    (``TINYNET_DISTRIBUTED_DEBUG=1``), or DistributedDataParallel found parameters that
    received no gradient (PyTorch raises a plain ``RuntimeError`` in these cases)."""


class ProcessGroupError(DistributedError, ValueError):
    """The process group is not set up as asked: a collective before ``init_process_group``,
    a second ``init_process_group``, an unsupported backend, a launcher variable missing, or
    ``rank``/``world_size`` disagreeing with the launcher; the message says what to run or
    set (PyTorch raises ``ValueError`` for most of these)."""


class FutureError(TinynetError, RuntimeError):
    """A :class:`tinynet.futures.Future` misused: its value read before it completed, a
    second ``set_result``, a callback that is not callable (PyTorch raises ``RuntimeError``)."""


def check_type(op, name, value, types, expected):
    """Raise :class:`ArgumentTypeError` naming ``op`` when ``value`` is not an instance of ``types``."""
    if not isinstance(value, types):
        raise ArgumentTypeError(f"{op}: {name} must be {expected}, got {type(value).__name__}")


class ProfilerError(TinynetError, RuntimeError):
    """:mod:`tinynet.profiler` misused: a second profiler started while one runs, a
    ``record_function`` left out of order, or an export before the profiler stopped
    (PyTorch raises ``RuntimeError`` in these cases)."""


class OnnxExportError(TinynetError, RuntimeError):
    """:func:`tinynet.onnx.export` cannot write the model: the traced run produced no tensor
    output, or an argument (``dynamic_axes``, ``input_names``, the opset) does not fit
    (PyTorch's ``torch.onnx.errors.OnnxExporterError``)."""


class UnsupportedOperatorError(OnnxExportError):
    """:func:`tinynet.onnx.export` met an op with no ONNX translation; the message names the
    op's class (PyTorch's ``torch.onnx.errors.UnsupportedOperatorError``)."""


class LazyModuleError(TinynetError, RuntimeError):
    """A lazy module (``nn.LazyLinear``, ``nn.LazyConv2d``, ...) or one of its placeholders
    (``UninitializedParameter``) used before its first forward has inferred the shapes,
    or a first forward that could not initialise it (PyTorch raises ``RuntimeError``)."""
