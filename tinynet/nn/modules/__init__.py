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
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .linear import Bilinear, Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss, HuberLoss,
                   KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss)
from .loss import HingeEmbeddingLoss, MultiLabelSoftMarginLoss, TripletMarginLoss
from .resample import Fold, Unfold
from .module import Module, Parameter
from .param_container import ParameterDict, ParameterList
from .normalization import BatchNorm1d, BatchNorm2d
from .padding import (CircularPad1d, CircularPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d, ReflectionPad2d,
                      ReplicationPad1d, ReplicationPad2d, ZeroPad1d, ZeroPad2d)
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .pooling import AdaptiveMaxPool1d, AdaptiveMaxPool2d, LPPool1d, LPPool2d, MaxUnpool1d, MaxUnpool2d
from .resample import ChannelShuffle
from .loss_margin import MultiMarginLoss, TripletMarginWithDistanceLoss
from .embedding import Embedding, EmbeddingBag
from .distance import CosineSimilarity, Hardshrink, PairwiseDistance, RMSNorm, Softshrink, Threshold
from .norm_layers import GroupNorm, InstanceNorm1d, InstanceNorm2d, LayerNorm, LocalResponseNorm
from .piecewise_activations import Hardsigmoid, Hardswish, Hardtanh, PReLU, ReLU6, RReLU
from .smooth_activations import (CELU, ELU, GLU, SELU, LogSigmoid, Mish, SiLU, Softmax2d, Softmin, Softplus, Softsign,
                                 Tanhshrink)
from .rnn import GRU, LSTM, RNN, RNNBase
from .rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "MaxPool1d", "BatchNorm1d",
           "BatchNorm2d", "BCELoss", "BCEWithLogitsLoss", "CELU",
           "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "CosineEmbeddingLoss", "CosineSimilarity",
           "CrossEntropyLoss", "Hardshrink", "PairwiseDistance", "RMSNorm", "Softshrink", "Threshold",
           "Dropout", "Dropout2d", "ELU", "Embedding", "Flatten", "GaussianNLLLoss", "GELU", "GLU", "GroupNorm",
           "GRU", "GRUCell", "Hardsigmoid", "Hardswish", "Hardtanh", "HuberLoss", "Identity", "InstanceNorm1d",
           "InstanceNorm2d", "KLDivLoss", "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LocalResponseNorm",
           "LogSigmoid", "LogSoftmax", "LSTM", "LSTMCell", "MarginRankingLoss", "MaxPool2d", "Mish", "Module",
           "ModuleDict", "ModuleList", "MSELoss", "MultiheadAttention", "NLLLoss", "Parameter", "ParameterDict",
           "ParameterList", "PixelShuffle", "PixelUnshuffle", "PoissonNLLLoss", "PReLU", "ReLU", "ReLU6", "RNN",
           "RNNBase", "RNNCell", "RNNCellBase", "SELU", "Sequential", "Sigmoid", "SiLU", "SmoothL1Loss",
           "SoftMarginLoss", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softsign", "Tanh", "Tanhshrink",
           "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer", "Unflatten", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]
__all__ += ["HingeEmbeddingLoss", "TripletMarginLoss"]
__all__ += ["Fold", "Unfold"]
__all__ += ["Dropout1d", "MultiLabelSoftMarginLoss"]
__all__ += ["CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d",
            "ReplicationPad1d", "ReplicationPad2d", "ZeroPad1d", "ZeroPad2d"]
__all__ += ["AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Bilinear", "ChannelShuffle", "LPPool1d", "LPPool2d"]
__all__ += ["MultiMarginLoss", "TripletMarginWithDistanceLoss"]
__all__ += ["AlphaDropout", "Dropout3d", "FeatureAlphaDropout", "RReLU"]
__all__ += ["MaxUnpool1d", "MaxUnpool2d"]
__all__ += ["EmbeddingBag"]
from .conv import Conv3d  # noqa: E402
from .conv_transpose import ConvTranspose3d  # noqa: E402
from .pooling import (AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, LPPool3d, MaxPool3d,  # noqa: E402
                      MaxUnpool3d)
from .padding import CircularPad3d, ConstantPad3d, ReflectionPad3d, ReplicationPad3d, ZeroPad3d  # noqa: E402
from .normalization import BatchNorm3d  # noqa: E402
from .norm_layers import InstanceNorm3d  # noqa: E402
__all__ += ["Conv3d", "ConvTranspose3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "AvgPool3d", "LPPool3d",
            "MaxPool3d", "MaxUnpool3d", "CircularPad3d", "ConstantPad3d", "ReflectionPad3d", "ReplicationPad3d",
            "ZeroPad3d", "BatchNorm3d", "InstanceNorm3d"]
from .parameter import Buffer, UninitializedBuffer, UninitializedParameter  # noqa: E402
from .lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d,  # noqa: E402
                   LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d, LazyInstanceNorm1d,
                   LazyInstanceNorm2d, LazyInstanceNorm3d, LazyLinear)
__all__ += ["Buffer", "UninitializedBuffer", "UninitializedParameter", "LazyBatchNorm1d", "LazyBatchNorm2d",
            "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
            "LazyConvTranspose3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear"]
from .loss import NLLLoss2d  # noqa: E402
from .loss_margin import CTCLoss, MultiLabelMarginLoss  # noqa: E402
from .linear_cross_entropy import LinearCrossEntropyLoss, LinearCrossEntropyOptions  # noqa: E402
__all__ += ["NLLLoss2d", "CTCLoss", "MultiLabelMarginLoss", "LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]
from .pooling import FractionalMaxPool2d, FractionalMaxPool3d  # noqa: E402
from .norm_layers import CrossMapLRN2d  # noqa: E402
__all__ += ["FractionalMaxPool2d", "FractionalMaxPool3d", "CrossMapLRN2d"]
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
__all__ += ["AdaptiveLogSoftmaxWithLoss"]
from .container import Container  # noqa: E402
from .factory import factory_kwargs  # noqa: E402
__all__ += ["Container", "factory_kwargs"]
from . import adaptive, batchnorm, flatten, instancenorm, lazy, linear_cross_entropy, sparse  # noqa: E402  (PyTorch's paths)
