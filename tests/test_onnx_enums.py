"""tinynet.onnx.TrainingMode and OperatorExportTypes against PyTorch's (names and values), and
export's refusal of training mode, which needs no onnx package (it is checked before the export)."""
import pytest

import tinynet
from tinynet import errors

torch = pytest.importorskip("torch")


def test_enums_match_torch():
    for ours, theirs in ((tinynet.onnx.TrainingMode, torch.onnx.TrainingMode),
                         (tinynet.onnx.OperatorExportTypes, torch.onnx.OperatorExportTypes)):
        assert {m.name: int(m) for m in ours} == {k: int(v) for k, v in theirs.__members__.items()}


def test_training_mode_is_refused_before_anything_is_written(tmp_path):
    pytest.importorskip("onnx", reason="export needs the onnx extra before it reads its arguments")
    model = tinynet.nn.Linear(2, 2)
    for mode in (tinynet.onnx.TrainingMode.TRAINING, torch.onnx.TrainingMode.TRAINING, True):
        with pytest.raises(errors.OnnxExportError, match="only eval-mode export"):
            tinynet.onnx.export(model, (tinynet.ones(1, 2),), tmp_path / "m.onnx", training=mode)
    assert not (tmp_path / "m.onnx").exists()
    for mode in (tinynet.onnx.TrainingMode.EVAL, tinynet.onnx.TrainingMode.PRESERVE, torch.onnx.TrainingMode.EVAL):
        tinynet.onnx.export(model, (tinynet.ones(1, 2),), tmp_path / "m.onnx", training=mode,
                            operator_export_type=tinynet.onnx.OperatorExportTypes.ONNX)
