"""The layers of ``tinynet.nn``, by family (PyTorch's ``torch.nn.modules``)."""
from .attention import MultiheadAttention
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .activation import GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import Flatten, ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d
from .conv_transpose import ConvTranspose1d, ConvTranspose2d
from .resample import (PixelShuffle, PixelUnshuffle, Unflatten, Upsample, UpsamplingBilinear2d,
                       UpsamplingNearest2d)
from .dropout import Dropout, Dropout2d
from .linear import Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss, HuberLoss,
                   KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss)
from .module import Module, Parameter
from .param_container import ParameterDict, ParameterList
from .normalization import BatchNorm1d, BatchNorm2d
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .embedding import Embedding
from .norm_layers import GroupNorm, InstanceNorm1d, InstanceNorm2d, LayerNorm
from .piecewise_activations import Hardsigmoid, Hardswish, Hardtanh, PReLU, ReLU6
from .smooth_activations import (CELU, ELU, GLU, SELU, LogSigmoid, Mish, SiLU, Softmax2d, Softmin, Softplus, Softsign,
                                 Tanhshrink)
from .rnn import GRU, LSTM, RNN, RNNBase
from .rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase

__all__ = ["GELU", "LeakyReLU", "LogSoftmax", "ReLU", "Sigmoid", "Softmax", "Tanh", "Flatten", "ModuleList",
           "Sequential", "Conv2d", "Dropout", "Dropout2d", "Identity", "Linear", "Module", "Parameter",
           "BatchNorm1d", "BatchNorm2d", "AdaptiveAvgPool2d", "AvgPool2d", "MaxPool2d"]
__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
__all__ += ["BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "GaussianNLLLoss", "HuberLoss",
            "KLDivLoss", "L1Loss", "MarginRankingLoss", "MSELoss", "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss",
            "SoftMarginLoss"]
__all__ += ["ModuleDict", "ParameterDict", "ParameterList"]
__all__ += ["MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerEncoderLayer", "TransformerDecoder",
            "TransformerDecoderLayer"]
__all__ += ["Embedding", "LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "SiLU", "Softplus", "ELU", "SELU",
            "CELU", "Mish", "Hardtanh", "ReLU6", "Hardswish", "Hardsigmoid", "PReLU", "LogSigmoid", "Softsign",
            "Tanhshrink", "GLU", "Softmax2d", "Softmin"]
__all__ += ["Conv1d", "ConvTranspose1d", "ConvTranspose2d", "Upsample", "UpsamplingNearest2d",
            "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "Unflatten"]
