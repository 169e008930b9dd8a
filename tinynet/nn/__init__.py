"""``tinynet.nn``: Module, Parameter, the layers (:mod:`.modules`), ``functional`` and ``init``."""
from . import functional, init
from . import utils
from . import parallel
from .parallel import DataParallel  # torch.nn.DataParallel (one device, no replicas: nn/parallel/data_parallel.py)
from . import attention
from . import parameter  # PyTorch's torch.nn.parameter
from .modules import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .modules import ModuleDict, ParameterDict, ParameterList
from .modules import CosineSimilarity, Hardshrink, PairwiseDistance, RMSNorm, Softshrink, Threshold
from .modules import AdaptiveAvgPool1d, AvgPool1d, MaxPool1d
from .modules import AdaptiveMaxPool1d, AdaptiveMaxPool2d, Bilinear, ChannelShuffle, LPPool1d, LPPool2d
from .modules import EmbeddingBag, MaxUnpool1d, MaxUnpool2d
from .modules import MultiMarginLoss, TripletMarginWithDistanceLoss
from .modules import AlphaDropout, Dropout3d, FeatureAlphaDropout, RReLU
from .modules import Dropout1d, HingeEmbeddingLoss, MultiLabelSoftMarginLoss, TripletMarginLoss
from .modules import Fold, Unfold
from .modules import (CircularPad1d, CircularPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d, ReflectionPad2d,
                      ReplicationPad1d, ReplicationPad2d, ZeroPad1d, ZeroPad2d)
from .modules import (Conv1d, ConvTranspose1d, ConvTranspose2d, PixelShuffle, PixelUnshuffle, Unflatten, Upsample,
                      UpsamplingBilinear2d, UpsamplingNearest2d)
from .modules import (CELU, ELU, GLU, SELU, Embedding, GroupNorm, Hardsigmoid, Hardswish, Hardtanh, InstanceNorm1d,
                      InstanceNorm2d, LayerNorm, LocalResponseNorm, LogSigmoid, Mish, PReLU, ReLU6, SiLU, Softmax2d,
                      Softmin, Softplus, Softsign, Tanhshrink)
from .modules import (MultiheadAttention, Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                      TransformerEncoderLayer)
from .modules import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss, HuberLoss,
                      KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss,
                      SoftMarginLoss)
from .modules import (GELU, AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, Conv2d, Dropout, Dropout2d,
                      Flatten, Identity, LeakyReLU, Linear, LogSoftmax, MaxPool2d, Module, ModuleList, Parameter, ReLU,
                      Sequential, Sigmoid, Softmax, Tanh)

__all__ = ["functional", "init", "utils", "parallel", "AdaptiveAvgPool2d", "AvgPool2d", "BatchNorm1d", "BatchNorm2d",
           "BCELoss", "BCEWithLogitsLoss", "CELU", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d",
           "CosineEmbeddingLoss", "CrossEntropyLoss", "DataParallel", "Dropout", "Dropout2d", "ELU", "Embedding",
           "Flatten",
           "GaussianNLLLoss", "GELU", "GLU", "GroupNorm", "GRU", "GRUCell", "Hardsigmoid", "Hardswish",
           "Hardtanh", "HuberLoss", "Identity", "InstanceNorm1d", "InstanceNorm2d", "KLDivLoss", "L1Loss",
           "LayerNorm", "LeakyReLU", "Linear", "LocalResponseNorm", "LogSigmoid", "LogSoftmax", "LSTM",
           "LSTMCell", "MarginRankingLoss", "MaxPool2d", "Mish", "Module", "ModuleDict", "ModuleList",
           "MSELoss", "MultiheadAttention", "NLLLoss", "Parameter", "ParameterDict", "ParameterList",
           "PixelShuffle", "PixelUnshuffle", "PoissonNLLLoss", "PReLU", "ReLU", "ReLU6", "RNN", "RNNBase",
           "RNNCell", "RNNCellBase", "SELU", "Sequential", "Sigmoid", "SiLU", "SmoothL1Loss", "SoftMarginLoss",
           "Softmax", "Softmax2d", "Softmin", "Softplus", "Softsign", "Tanh", "Tanhshrink", "Transformer",
           "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer",
           "Unflatten", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]
__all__ += ["CosineSimilarity", "Hardshrink", "PairwiseDistance", "RMSNorm", "Softshrink", "Threshold"]
__all__ += ["AdaptiveAvgPool1d", "AvgPool1d", "MaxPool1d"]
__all__ += ["AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Bilinear", "ChannelShuffle", "LPPool1d", "LPPool2d"]
__all__ += ["MultiMarginLoss", "TripletMarginWithDistanceLoss"]
__all__ += ["AlphaDropout", "Dropout3d", "FeatureAlphaDropout", "RReLU"]
__all__ += ["HingeEmbeddingLoss", "TripletMarginLoss"]
__all__ += ["Fold", "Unfold"]
__all__ += ["Dropout1d", "MultiLabelSoftMarginLoss"]
__all__ += ["CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d",
            "ReplicationPad1d", "ReplicationPad2d", "ZeroPad1d", "ZeroPad2d"]
__all__ += ["MaxUnpool1d", "MaxUnpool2d"]
__all__ += ["EmbeddingBag"]

from .modules import (AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, BatchNorm3d, CircularPad3d,  # noqa: E402
                      ConstantPad3d, Conv3d, ConvTranspose3d, InstanceNorm3d, LPPool3d, MaxPool3d, MaxUnpool3d,
                      ReflectionPad3d, ReplicationPad3d, ZeroPad3d)
__all__ += ["AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "AvgPool3d", "BatchNorm3d", "CircularPad3d", "ConstantPad3d",
            "Conv3d", "ConvTranspose3d", "InstanceNorm3d", "LPPool3d", "MaxPool3d", "MaxUnpool3d", "ReflectionPad3d",
            "ReplicationPad3d", "ZeroPad3d"]
from .modules import Buffer, UninitializedBuffer, UninitializedParameter  # noqa: E402
from .modules import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d,  # noqa: E402
                      LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d, LazyInstanceNorm1d,
                      LazyInstanceNorm2d, LazyInstanceNorm3d, LazyLinear)
__all__ += ["Buffer", "UninitializedBuffer", "UninitializedParameter", "LazyBatchNorm1d", "LazyBatchNorm2d",
            "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
            "LazyConvTranspose3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear"]
from .modules import (CTCLoss, LinearCrossEntropyLoss, LinearCrossEntropyOptions, MultiLabelMarginLoss,  # noqa: E402
                      NLLLoss2d)
__all__ += ["CTCLoss", "LinearCrossEntropyLoss", "LinearCrossEntropyOptions", "MultiLabelMarginLoss", "NLLLoss2d"]
from .modules import CrossMapLRN2d, FractionalMaxPool2d, FractionalMaxPool3d  # noqa: E402
__all__ += ["CrossMapLRN2d", "FractionalMaxPool2d", "FractionalMaxPool3d"]
from .modules import AdaptiveLogSoftmaxWithLoss  # noqa: E402
__all__ += ["AdaptiveLogSoftmaxWithLoss"]
from .modules import Container, factory_kwargs  # noqa: E402
__all__ += ["Container", "factory_kwargs"]
