"""The reference models of shared/REFERENCE.md for both frameworks.

tinynet's versions are the ones in ``examples/`` (loaded from there, so there is one
definition); PyTorch's twins below mirror them layer for layer.
"""
import importlib.util
import os

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")
RECIPES = {"convnet": dict(lr=0.01, momentum=0.5), "mlp": dict(lr=0.05, momentum=0.0),
           "cifar10": dict(lr=0.1, momentum=0.0),
           # time_to_accuracy.py's BatchNorm convnet and its SGD (its one-cycle peak as a constant rate)
           "tta_convnet": dict(lr=0.2, momentum=0.9, nesterov=True, weight_decay=5e-4)}
INPUTS = {"convnet": (1, 28, 28), "mlp": (1, 28, 28), "cifar10": (3, 24, 24), "tta_convnet": (1, 28, 28)}
LOGITS = {"cifar10", "tta_convnet"}  # models ending in logits (cross_entropy); the others in log_softmax (nll_loss)


def _example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tinynet_model(name):
    """A fresh tinynet ``Net`` (from examples/mnist_convnet.py), ``MLP`` (mnist_mlp.py) or
    the CIFAR-10 tutorial net (cifar10_convnet.py: 64-channel 5x5 convolutions, where tensor
    cores matter)."""
    if name == "convnet":
        return _example("mnist_convnet").Net()
    if name == "cifar10":
        return _example("cifar10_convnet").Net()
    if name == "tta_convnet":
        import tinynet
        from time_to_accuracy import build
        return build(tinynet, tinynet.nn)
    return _example("mnist_mlp").MLP()


def reference_model(lib, name):
    """The reference convnet, the MLP or the CIFAR-10 net written once against ``lib``'s
    ``nn``/``nn.functional`` (PyTorch, or any tinynet checkout: ``eager_ab.py`` builds it with
    an older one), with that library's default initialisation."""
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
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
            x = x.flatten(1)  # a view, as view(-1, 320); also of a channels-last x (--channels-last)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, training=self.training)
            return F.log_softmax(self.fc2(x), dim=1)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 256)
            self.fc2 = nn.Linear(256, 10)

        def forward(self, x):
            return F.log_softmax(self.fc2(F.relu(self.fc1(x.flatten(1)))), dim=1)

    class Cifar10(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 5, padding=2)
            self.norm1 = nn.LocalResponseNorm(9, alpha=0.001, beta=0.75, k=1.0)
            self.conv2 = nn.Conv2d(64, 64, 5, padding=2)
            self.norm2 = nn.LocalResponseNorm(9, alpha=0.001, beta=0.75, k=1.0)
            self.local3 = nn.Linear(64 * 6 * 6, 384)
            self.local4 = nn.Linear(384, 192)
            self.softmax_linear = nn.Linear(192, 10)

        @staticmethod
        def pool(x):
            return F.max_pool2d(F.pad(x, (0, 1, 0, 1)), 3, 2)

        def forward(self, x):
            x = self.norm1(self.pool(F.relu(self.conv1(x))))
            x = self.pool(self.norm2(F.relu(self.conv2(x))))
            x = F.relu(self.local3(x.flatten(1)))
            return self.softmax_linear(F.relu(self.local4(x)))

    if name == "tta_convnet":
        from time_to_accuracy import build
        return build(lib, nn)
    return {"convnet": Net, "mlp": MLP, "cifar10": Cifar10}[name]()


def torch_model(name):
    """PyTorch's twin of :func:`tinynet_model` with PyTorch's default initialisation."""
    import torch
    return reference_model(torch, name)


def _bn_convnet(nn, width=1):
    """The reference convnet with BatchNorm after each convolution, as one Sequential (the
    inference benchmark's fused-vs-unfused model; ``width`` multiplies the channels). The
    same code builds tinynet's and PyTorch's version (``nn`` is either namespace)."""
    c1, c2 = 10 * width, 20 * width
    return nn.Sequential(
        nn.Sequential(nn.Conv2d(1, c1, 5), nn.BatchNorm2d(c1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(c1, c2, 5), nn.BatchNorm2d(c2), nn.ReLU(), nn.MaxPool2d(2)),
        nn.Flatten(), nn.Linear(16 * c2, 50), nn.ReLU(), nn.Linear(50, 10))


def bn_convnet(width=1):
    """tinynet's BatchNorm convnet (see :func:`_bn_convnet`); ``model[0]`` holds the convolutions."""
    import tinynet.nn as nn
    return _bn_convnet(nn, width)


def torch_bn_convnet(width=1):
    """PyTorch's twin of :func:`bn_convnet`."""
    import torch.nn as nn
    return _bn_convnet(nn, width)
