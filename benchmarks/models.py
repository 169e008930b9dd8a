"""The reference models of shared/REFERENCE.md for both frameworks.

tinynet's versions are the ones in ``examples/`` (loaded from there, so there is one
definition); PyTorch's twins below mirror them layer for layer.
"""
import importlib.util
import os

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")
RECIPES = {"convnet": dict(lr=0.01, momentum=0.5), "mlp": dict(lr=0.05, momentum=0.0)}


def _example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tinynet_model(name):
    """A fresh tinynet ``Net`` (from examples/mnist_convnet.py) or ``MLP`` (mnist_mlp.py)."""
    if name == "convnet":
        return _example("mnist_convnet").Net()
    return _example("mnist_mlp").MLP()


def torch_model(name):
    """PyTorch's twin of :func:`tinynet_model` with PyTorch's default initialisation."""
    import torch.nn as nn
    import torch.nn.functional as F

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
            x = x.view(-1, 320)
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

    return {"convnet": Net, "mlp": MLP}[name]()


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
