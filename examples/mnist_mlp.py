"""Train the reference MLP (784 -> 256 -> ReLU -> 10) on MNIST with plain SGD.

The model of the "MNIST in CUDA" document: one hidden layer of 256 ReLU units and a
softmax cross-entropy loss (here ``log_softmax`` + ``nll_loss``), trained with plain SGD
(no momentum by default). Same command line as ``mnist_convnet.py``.

    python examples/mnist_mlp.py --data-dir ../shared/datasets/mnist
    mpiexec -n 2 python examples/mnist_mlp.py --distributed --data-dir ../shared/datasets/mnist  # data-parallel
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tinynet.nn as nn  # noqa: E402
import tinynet.nn.functional as F  # noqa: E402
from common import build_parser, run  # noqa: E402


class MLP(nn.Module):
    """flatten -> linear(784->256) -> relu -> linear(256->10) -> log_softmax.

    Shape: (N, 1, 28, 28) -> (N, 10) log-probabilities.
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x.flatten(1)))
        return F.log_softmax(self.fc2(x), dim=1)


def main(argv=None):
    parser = build_parser("Train the reference MLP on MNIST with tinynet.", lr=0.05, momentum=0.0)
    code = run(MLP, parser, argv, title="reference MLP")
    main.results = run.results if code == 0 else None
    return code


if __name__ == "__main__":
    sys.exit(main())
