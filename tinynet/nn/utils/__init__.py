"""``tinynet.nn.utils``: PyTorch's ``torch.nn.utils`` helpers (:mod:`.rnn`: ``pad_sequence``;
:mod:`.fusion`: BatchNorm folding) and :func:`load_keras_weights` (:mod:`.keras`)."""
from . import fusion, keras, parametrizations, parametrize, prune, rnn
from .fusion import (fuse_conv_bn, fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,
                     fuse_linear_bn_weights)
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .keras import load_keras_weights
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm
