"""A variational autoencoder (Kingma and Welling 2014) on NumPy "images": BCE + KL loss, the
reparameterisation with noise drawn by NumPy (so both libraries add the same noise), Adam."""
import numpy
import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import arguments, dump, init_from_numpy


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(64, 32)
        self.mu = nn.Linear(32, 4)
        self.logvar = nn.Linear(32, 4)
        self.dec1 = nn.Linear(4, 32)
        self.dec2 = nn.Linear(32, 64)

    def forward(self, x, eps):
        h = F.relu(self.enc(x.view(-1, 64)))
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + eps * torch.exp(0.5 * logvar)
        return torch.sigmoid(self.dec2(F.relu(self.dec1(z)))), mu, logvar


def loss_function(recon, x, mu, logvar):
    bce = F.binary_cross_entropy(recon, x.view(-1, 64), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def main():
    args = arguments("VAE", steps=8)
    rng = numpy.random.default_rng(args.seed)
    data = torch.from_numpy(rng.random((args.steps, 20, 1, 8, 8), dtype=numpy.float32))
    noise = torch.from_numpy(rng.standard_normal((args.steps, 20, 4)).astype(numpy.float32))
    model = VAE()
    init_from_numpy(model, args.seed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step in range(args.steps):
        opt.zero_grad()
        recon, mu, logvar = model(data[step], noise[step])
        loss = loss_function(recon, data[step], mu, logvar)
        loss.backward()
        opt.step()
        losses.append(loss.item() / len(data[step]))
        print("step {}: loss {:.6f}".format(step, loss.item() / len(data[step])))
    with torch.no_grad():
        sample = model.dec2(F.relu(model.dec1(noise[0]))).sigmoid()
    dump(args.out, losses=losses, sample_mean=float(sample.mean()))


if __name__ == "__main__":
    main()
