"""torchvision's MNIST dataset with Compose/ToTensor/Normalize through a DataLoader into a small
CNN trained by SGD; Resize/CenterCrop on the PIL images, make_grid and save_image of a batch."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms
from torchvision.utils import make_grid, save_image

from _common import arguments, dump, init_from_numpy


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 5)
        self.fc = nn.Linear(4 * 12 * 12, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return F.log_softmax(self.fc(torch.flatten(x, 1)), dim=1)


def main():
    args = arguments("torchvision pipeline", root="data", batches=4, image="grid.png")
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    train = datasets.MNIST(args.root, train=True, download=False, transform=transform)
    loader = torch.utils.data.DataLoader(train, batch_size=32, shuffle=False)
    model = Net()
    init_from_numpy(model, args.seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses, first = [], None
    for i, (data, target) in enumerate(loader):
        if i == args.batches:
            break
        first = data if first is None else first
        opt.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        print(f"batch {i}: loss {loss.item():.6f}")
    small = datasets.MNIST(args.root, train=True, transform=transforms.Compose(
        [transforms.Resize(14), transforms.CenterCrop(12), transforms.ToTensor()]))
    crops = torch.stack([small[i][0] for i in range(8)])
    grid = make_grid(first[:8], nrow=4, normalize=True)
    save_image(first[:8], args.image, nrow=4, normalize=True)
    dump(args.out, losses=losses, n=len(train), label0=int(train[0][1]), batch_mean=float(first.mean()),
         crop_shape=list(crops.shape), crop_sum=float(crops.sum()), grid_shape=list(grid.shape),
         grid_mean=float(grid.mean()), data_shape=list(train.data.shape),
         targets=[int(t) for t in train.targets[:10]])


if __name__ == "__main__":
    main()
