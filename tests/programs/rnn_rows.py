"""An LSTM reads 28x28 images row by row (batch_first), batch norm and dropout (p=0) on its last
output, a classifier on top; Adadelta and a StepLR schedule, as PyTorch's MNIST-RNN recipe."""
import numpy
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR

from _common import arguments, dump, init_from_numpy


class RowReader(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(input_size=28, hidden_size=32, batch_first=True)
        self.norm = nn.BatchNorm1d(32)
        self.drop = nn.Dropout2d(0.0)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        out, (h, c) = self.rnn(x.reshape(-1, 28, 28))
        last = self.drop(self.norm(out[:, -1, :]))
        return F.log_softmax(self.fc(F.relu(last)), dim=1)


def main():
    args = arguments("RNN over image rows", steps=6)
    rng = numpy.random.default_rng(args.seed)
    images = torch.from_numpy(rng.random((6, 16, 1, 28, 28), dtype=numpy.float32))
    labels = torch.from_numpy(rng.integers(0, 10, size=(6, 16)).astype(numpy.int64))
    model = RowReader()
    init_from_numpy(model, args.seed)
    opt = torch.optim.Adadelta(model.parameters(), lr=0.5)
    sched = StepLR(opt, step_size=2, gamma=0.7)
    losses = []
    for step in range(args.steps):
        model.train()
        opt.zero_grad()
        loss = F.nll_loss(model(images[step]), labels[step])
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        print(f"step {step}: loss {loss.item():.6f}")
    model.eval()
    with torch.no_grad():
        pred = model(images[0]).argmax(dim=1, keepdim=True)
        correct = pred.eq(labels[0].view_as(pred)).sum().item()
    dump(args.out, losses=losses, correct=correct)


if __name__ == "__main__":
    main()
