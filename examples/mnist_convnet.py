"""Train the reference convnet on MNIST (or Fashion-MNIST) with tinynet.

The network and recipe of PyTorch's MNIST example: two 5x5 convolutions with max
pooling, channel dropout, two linear layers, log-softmax + nll_loss, SGD(lr=0.01,
momentum=0.5), batch 64, 10 epochs, inputs normalised with mean 0.1307 / std 0.3081.
Only tinynet's public API is used. The backend follows TINYNET_BACKEND.

    python examples/mnist_convnet.py --data-dir ../shared/datasets/mnist
    mpiexec -n 2 python examples/mnist_convnet.py --distributed --data-dir ../shared/datasets/mnist  # data-parallel
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tinynet.nn as nn  # noqa: E402
import tinynet.nn.functional as F  # noqa: E402
from common import build_parser, run  # noqa: E402


class Net(nn.Module):
    """conv(1->10, 5) -> maxpool 2 -> relu -> conv(10->20, 5) -> dropout2d -> maxpool 2 -> relu
    -> linear(320->50) -> relu -> dropout -> linear(50->10) -> log_softmax.

    Shape: (N, 1, 28, 28) -> (N, 10) log-probabilities.
    """

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def main(argv=None):
    parser = build_parser("Train the reference convnet on MNIST with tinynet.", lr=0.01, momentum=0.5)
    code = run(Net, parser, argv, title="reference convnet")
    main.results = run.results if code == 0 else None
    return code


if __name__ == "__main__":
    sys.exit(main())
