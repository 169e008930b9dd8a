"""The word-language-model Transformer's training step (pytorch/examples word_language_model's
recipe, rebuilt here): token embedding scaled by sqrt(d), a TransformerEncoder with a final
LayerNorm under the float causal mask ``log(tril(ones))``, log_softmax + NLLLoss,
``clip_grad_norm_`` and the manual SGD update ``p.data.add_(p.grad, alpha=-lr)`` at the
example's lr 20. With PyTorch's weights copied in, each step's loss, every gradient, the total
norm and the update agree with PyTorch to float32 rounding; the weights are re-synced from
PyTorch before each step, since at lr 20 rounding-level differences grow ~1.5x per step
(PyTorch against itself does the same)."""
import math

import numpy
import pytest

import tinynet

from helpers import assert_close, rng, torch

pytestmark = pytest.mark.skipif(torch is None, reason="needs PyTorch as the reference")

V, D, H, FF, S, N, LR, CLIP = 50, 16, 2, 24, 7, 3, 20.0, 0.25


def _model(lib):
    nn = lib.nn
    layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0)
    return nn.ModuleDict({"emb": nn.Embedding(V, D), "enc": nn.TransformerEncoder(layer, 2, nn.LayerNorm(D),
                                                                                  enable_nested_tensor=False),
                          "dec": nn.Linear(D, V)})


def _step(lib, model, x, y, pe):
    mask = lib.log(lib.tril(lib.ones(S, S)))  # the example's mask: 0 and -inf
    model.zero_grad()
    h = model["emb"](x) * math.sqrt(D) + pe
    out = lib.nn.functional.log_softmax(model["dec"](model["enc"](h, mask=mask)), dim=-1).view(-1, V)
    loss = lib.nn.NLLLoss()(out, y)
    loss.backward()
    grads = [p.grad.detach().numpy().copy() for p in model.parameters()]
    norm = lib.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-LR)
    return float(loss.detach()), grads, float(norm), [p.detach().numpy().copy() for p in model.parameters()]


def test_word_language_model_transformer_steps_match_torch(device):
    torch.manual_seed(0)
    ref = _model(torch).train()
    ours = _model(tinynet).to(device).train()
    g = rng(7)
    pe = g.standard_normal((S, 1, D)).astype(numpy.float32) * 0.1
    for step in range(4):
        state = {k: v.detach().numpy().copy() for k, v in ref.state_dict().items()}
        ours.load_state_dict({k: tinynet.tensor(v, device=device) for k, v in state.items()})
        x = g.integers(0, V, (S, N))
        y = g.integers(0, V, (S * N,))
        got = _step(tinynet, ours, tinynet.tensor(x, device=device), tinynet.tensor(y, device=device),
                    tinynet.tensor(pe, device=device))
        want = _step(torch, ref, torch.tensor(x), torch.tensor(y), torch.tensor(pe))
        assert_close(got[0], want[0], rtol=1e-5, what=f"step {step} loss")
        for i, (a, b) in enumerate(zip(got[1], want[1])):
            assert_close(a, b, rtol=1e-4, atol=1e-6, what=f"step {step} grad {i}")
        assert_close(got[2], want[2], rtol=1e-5, what=f"step {step} total norm")
        for i, (a, b) in enumerate(zip(got[3], want[3])):
            assert_close(a, b, rtol=1e-4, atol=1e-5, what=f"step {step} updated param {i}")
