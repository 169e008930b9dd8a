"""``tinynet.nn``: Module, Parameter, the layers (:mod:`.modules`), ``functional`` and ``init``."""
from . import functional, init
from . import utils
from .modules import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .modules import ModuleDict, ParameterDict, ParameterList
from .modules import (Conv1d, ConvTranspose1d, ConvTranspose2d, PixelShuffle, PixelUnshuffle, Unflatten, Upsample,
                      UpsamplingBilinear2d, UpsamplingNearest2d)
from .modules import (CELU, ELU, GLU, SELU, Embedding, GroupNorm, Hardsigmoid, Hardswish, Hardtanh, InstanceNorm1d,
                      InstanceNorm2d, LayerNorm, LogSigmoid, Mish, PReLU, ReLU6, SiLU, Softmax2d, Softmin, Softplus,
                      Softsign, Tanhshrink)
from .modules import (MultiheadAttention, Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                      TransformerEncoderLayer)
from .modules import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss, HuberLoss,
                      KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss,
                      SoftMarginLoss)
from .modules import (GELU, AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, Conv2d, Dropout, Dropout2d,
                      Flatten, Identity, LeakyReLU, Linear, LogSoftmax, MaxPool2d, Module, ModuleList, Parameter, ReLU,
                      Sequential, Sigmoid, Softmax, Tanh)

__all__ = ["functional", "init", "Module", "Parameter", "AdaptiveAvgPool2d", "AvgPool2d", "BatchNorm1d",
           "BatchNorm2d", "Conv2d", "Dropout", "Dropout2d", "Flatten", "GELU", "Identity", "LeakyReLU",
           "Linear", "LogSoftmax", "MaxPool2d", "ModuleList", "ReLU", "Sequential", "Sigmoid", "Softmax",
           "Tanh"]
__all__ += ["utils", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
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
