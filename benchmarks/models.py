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
