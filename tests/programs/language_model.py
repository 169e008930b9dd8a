"""A small word-level language model (embedding, 2-layer LSTM, decoder) trained by hand-written
SGD with gradient clipping and truncated backpropagation through time; the whole model is saved
with ``torch.save(model, f)`` and loaded back under ``torch.serialization.safe_globals``, as
PyTorch's word-language-model recipe does; a load without them must be refused."""
import math
import pickle

import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import arguments, dump, init_from_numpy

TEXT = ("the cat sat on the mat . the dog sat on the log . a cat and a dog met on the mat . "
        "the log was on the mat and the cat was on the log . ") * 6


class LM(nn.Module):
    def __init__(self, ntoken, ninp=16, nhid=16, nlayers=2):
        super().__init__()
        self.drop = nn.Dropout(0.0)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=0.0)
        self.decoder = nn.Linear(nhid, ntoken)
        self.ntoken, self.nhid, self.nlayers = ntoken, nhid, nlayers

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
        return F.log_softmax(self.decoder(self.drop(out)).view(-1, self.ntoken), dim=1), hidden

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(self.nlayers, bsz, self.nhid), w.new_zeros(self.nlayers, bsz, self.nhid))


def repackage(h):
    return h.detach() if isinstance(h, torch.Tensor) else tuple(repackage(v) for v in h)


def evaluate(model, data, bptt, criterion):
    model.eval()
    total, hidden = 0.0, model.init_hidden(data.size(1))
    with torch.no_grad():
        for i in range(0, data.size(0) - 1, bptt):
            n = min(bptt, len(data) - 1 - i)
            out, hidden = model(data[i:i + n], hidden)
            total += n * criterion(out, data[i + 1:i + 1 + n].reshape(-1)).item()
    return total / (len(data) - 1)


def main():
    args = arguments("word language model", epochs=2, path="lm.pt")
    words = TEXT.split()
    vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
    ids = torch.tensor([vocab[w] for w in words]).type(torch.int64)
    bsz, bptt = 4, 6
    data = ids.narrow(0, 0, (ids.size(0) // bsz) * bsz).view(bsz, -1).t().contiguous()
    model = LM(len(vocab))
    init_from_numpy(model, args.seed)
    criterion = nn.NLLLoss()
    lr, losses = 2.0, []
    for epoch in range(args.epochs):
        model.train()
        hidden = model.init_hidden(bsz)
        for i in range(0, data.size(0) - 1, bptt):
            n = min(bptt, len(data) - 1 - i)
            hidden = repackage(hidden)
            model.zero_grad()
            out, hidden = model(data[i:i + n], hidden)
            loss = criterion(out, data[i + 1:i + 1 + n].reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            losses.append(loss.item())
        print(f"epoch {epoch}: loss {losses[-1]:.5f} ppl {math.exp(losses[-1]):.2f}")
    before = evaluate(model, data, bptt, criterion)
    with open(args.path, "wb") as f:
        torch.save(model, f)
    refused = False
    try:
        with open(args.path, "rb") as f:
            torch.load(f)  # weights_only by default: LM is not an allowed global
    except pickle.UnpicklingError as exc:
        refused = "LM" in str(exc)
    with open(args.path, "rb") as f:
        with torch.serialization.safe_globals([LM, nn.Dropout, nn.Embedding, nn.LSTM, nn.Linear]):
            loaded = torch.load(f)
    after = evaluate(loaded, data, bptt, criterion)
    print(f"eval before save {before:.6f}, after load {after:.6f}, plain load refused: {refused}")
    dump(args.out, losses=losses, eval_before=before, eval_after=after, refused=refused,
         same_class=type(loaded) is LM)


if __name__ == "__main__":
    main()
