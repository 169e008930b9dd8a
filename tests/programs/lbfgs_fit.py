"""Two stacked LSTM cells predict a sine wave one step ahead, in float64, fitted by LBFGS with
a closure, as PyTorch's time-sequence recipe; then they predict the future with no_grad."""
import numpy
import torch
import torch.nn as nn
import torch.optim as optim

from _common import arguments, dump, init_from_numpy


class Sequence(nn.Module):
    def __init__(self, hidden=12):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, x, future=0):
        outputs = []
        h1 = torch.zeros(x.size(0), self.hidden, dtype=torch.double)
        c1 = torch.zeros(x.size(0), self.hidden, dtype=torch.double)
        h2 = torch.zeros(x.size(0), self.hidden, dtype=torch.double)
        c2 = torch.zeros(x.size(0), self.hidden, dtype=torch.double)
        for x_t in x.split(1, dim=1):
            h1, c1 = self.lstm1(x_t, (h1, c1))
            h2, c2 = self.lstm2(h1, (h2, c2))
            output = self.linear(h2)
            outputs.append(output)
        for _ in range(future):
            h1, c1 = self.lstm1(output, (h1, c1))
            h2, c2 = self.lstm2(h1, (h2, c2))
            output = self.linear(h2)
            outputs.append(output)
        return torch.cat(outputs, dim=1)


def main():
    args = arguments("LBFGS fit", steps=3)
    rng = numpy.random.default_rng(args.seed)
    t = numpy.arange(40)[None, :] + rng.integers(-10, 10, size=(6, 1))
    data = numpy.sin(t / 4.0)
    x, y = torch.from_numpy(data[1:, :-1]), torch.from_numpy(data[1:, 1:])
    test_x, test_y = torch.from_numpy(data[:1, :-1]), torch.from_numpy(data[:1, 1:])
    seq = Sequence()
    seq.double()
    init_from_numpy(seq, args.seed)
    criterion = nn.MSELoss()
    opt = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=5)
    losses, tests = [], []
    for i in range(args.steps):
        def closure():
            opt.zero_grad()
            loss = criterion(seq(x), y)
            loss.backward()
            return loss
        losses.append(opt.step(closure).item())
        with torch.no_grad():
            pred = seq(test_x, future=5)
            tests.append(criterion(pred[:, :-5], test_y).item())
        print(f"step {i}: loss {losses[-1]:.8f} test {tests[-1]:.8f}")
    dump(args.out, losses=losses, tests=tests)


if __name__ == "__main__":
    main()
