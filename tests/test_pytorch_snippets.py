"""Everyday PyTorch code, run with only its import changed.

Each snippet below is ordinary PyTorch code in the style of the PyTorch tutorials and
examples (tensors, devices, autograd, custom Functions, datasets and loaders). The test
runs it twice, with ``import torch`` and with ``import tinynet as torch``, and compares
what it computed. No line is adapted to tinynet.
"""
import textwrap

import numpy
import pytest

import tinynet
from helpers import torch as real_torch

SNIPPETS = {}


def snippet(fn):
    SNIPPETS[fn.__name__] = textwrap.dedent(fn.__doc__)
    return fn


@snippet
def tensor_basics():
    """
    import torch
    import numpy as np
    device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    data = [[1, 2], [3, 4]]
    x_data = torch.tensor(data)
    np_array = np.array(data)
    x_np = torch.from_numpy(np_array)
    x_ones = torch.ones_like(x_data)
    x_rand = torch.rand_like(x_data, dtype=torch.float)
    shape = (2, 3,)
    ones_tensor = torch.ones(shape)
    tensor = torch.ones(4, 4)
    tensor[:, 1] = 0
    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)
    y3 = torch.rand_like(y1)
    torch.matmul(tensor, tensor.T, out=None) if False else None
    z1 = tensor * tensor
    z2 = tensor.mul(tensor)
    agg = tensor.sum()
    agg_item = agg.item()
    tensor.add_(5)
    t = torch.ones(5)
    n = t.numpy()
    t.add_(1)
    n2 = np.ones(5)
    t2 = torch.from_numpy(n2)
    np.add(n2, 1, out=n2)
    result = dict(x_data=x_data.tolist(), x_np=x_np.tolist(), x_ones=x_ones.tolist(), shape=list(x_rand.shape),
                  dtype=str(x_rand.dtype).split(".")[-1], ones=ones_tensor.tolist(), t1=t1.tolist(), y1=y1.tolist(),
                  y2=y2.tolist(), z1=z1.tolist(), z2=z2.tolist(), agg=agg_item, tensor=tensor.tolist(),
                  n=n.tolist(), t2=t2.tolist(), device_type=str(torch.device(device).type),
                  size=list(tensor.size()), numel=tensor.numel(), dim=tensor.dim())
    """


@snippet
def autograd_tutorial():
    """
    import torch
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    out.backward()
    a = torch.tensor([2., 3.], requires_grad=True)
    b = torch.tensor([6., 4.], requires_grad=True)
    Q = 3*a**3 - b**2
    external_grad = torch.tensor([1., 1.])
    Q.backward(gradient=external_grad)
    with torch.no_grad():
        w = x * 2
    d = x.detach()
    result = dict(x_grad=x.grad.tolist(), a_grad=a.grad.tolist(), b_grad=b.grad.tolist(),
                  check=bool((9*a**2 == a.grad).all()), w_requires=w.requires_grad, d_requires=d.requires_grad,
                  y_leaf=y.is_leaf, has_fn=y.grad_fn is not None)
    """


@snippet
def polynomial_fit_with_tensors():
    """
    import torch
    import math
    dtype = torch.float
    device = torch.device("cpu")
    torch.manual_seed(0)
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.tensor(0.1, device=device, dtype=dtype, requires_grad=True)
    b = torch.tensor(-0.2, device=device, dtype=dtype, requires_grad=True)
    c = torch.tensor(0.05, device=device, dtype=dtype, requires_grad=True)
    d = torch.tensor(0.03, device=device, dtype=dtype, requires_grad=True)
    learning_rate = 1e-6
    for t in range(300):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    result = dict(loss=loss.item(), coef=[a.item(), b.item(), c.item(), d.item()])
    """


@snippet
def custom_autograd_function():
    """
    import torch
    import math

    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    dtype = torch.double
    x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
    y = torch.sin(x)
    a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, dtype=dtype, requires_grad=True)
    for t in range(200):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= 5e-6 * p.grad
                p.grad = None
    check = torch.autograd.gradcheck(LegendrePolynomial3.apply, (torch.randn(5, dtype=dtype, requires_grad=True),))
    result = dict(loss=loss.item(), coef=[a.item(), b.item(), c.item(), d.item()], check=check)
    """


@snippet
def dataset_and_loader():
    """
    import torch
    from torch.utils.data import Dataset, DataLoader, TensorDataset, random_split, Subset

    class Squares(Dataset):
        def __init__(self, n):
            self.n = n
        def __len__(self):
            return self.n
        def __getitem__(self, idx):
            return torch.tensor([float(idx)]), idx * idx

    ds = Squares(10)
    loader = DataLoader(ds, batch_size=4, shuffle=False, drop_last=False)
    batches = [(x.tolist(), y.tolist()) for x, y in loader]
    g = torch.Generator().manual_seed(0)
    train, val = random_split(TensorDataset(torch.arange(10.0), torch.arange(10)), [8, 2], generator=g)
    sizes = [len(train), len(val)]
    sub = Subset(ds, [1, 3])
    total = 0
    for xb, yb in DataLoader(TensorDataset(torch.ones(6, 2), torch.zeros(6)), batch_size=4):
        total += xb.shape[0]
    result = dict(batches=batches, sizes=sizes, sub=[sub[0][1], sub[1][1]], total=total, n_batches=len(loader))
    """


@snippet
def accuracy_topk():
    """
    import torch

    def accuracy(output, target, topk=(1,)):
        with torch.no_grad():
            maxk = max(topk)
            batch_size = target.size(0)
            _, pred = output.topk(maxk, 1, True, True)
            pred = pred.t()
            correct = pred.eq(target.view(1, -1).expand_as(pred))
            res = []
            for k in topk:
                correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
                res.append(correct_k.mul_(100.0 / batch_size))
            return res

    torch.manual_seed(0)
    output = torch.tensor([[0.1, 0.5, 0.2, 0.9], [0.8, 0.1, 0.05, 0.3], [0.2, 0.3, 0.4, 0.1]])
    target = torch.tensor([1, 0, 3])
    top1, top2 = accuracy(output, target, topk=(1, 2))
    probs = output.softmax(dim=1)
    mask = probs > 0.3
    filled = output.masked_fill(~mask, float("-inf"))
    picked = output.gather(1, target.unsqueeze(1)).squeeze(1)
    pred = output.argmax(dim=1, keepdim=True)
    correct = pred.eq(target.view_as(pred)).sum().item()
    result = dict(top1=top1.tolist(), top2=top2.tolist(), filled=filled.tolist(), picked=picked.tolist(),
                  correct=correct, nonzero=mask.nonzero().tolist())
    """


@snippet
def gradient_penalty():
    """
    import torch
    torch.manual_seed(0)
    w = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]], requires_grad=True)
    real = torch.tensor([[1.0, 2.0, 3.0]])
    fake = torch.tensor([[0.0, -1.0, 0.5]])
    alpha = torch.tensor([[0.25]])
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_out = torch.tanh(interpolates @ w.t()).sum(dim=1)
    gradients = torch.autograd.grad(outputs=d_out, inputs=interpolates,
                                    grad_outputs=torch.ones_like(d_out),
                                    create_graph=True, retain_graph=True)[0]
    penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
    penalty.backward()
    result = dict(penalty=penalty.item(), w_grad=w.grad.tolist())
    """


@snippet
def tensor_manipulation():
    """
    import torch
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    parts = torch.chunk(x, 2, dim=2)
    pieces = x.split([1, 2], dim=1)
    rows = x.unbind(0)
    rep = x[0, :2, :2].repeat(2, 3)
    inter = torch.repeat_interleave(torch.tensor([1, 2]), 2)
    flipped = torch.flip(x[0], dims=[1])
    rolled = torch.roll(x[0], shifts=1, dims=0)
    lower = torch.tril(torch.ones(3, 3))
    upper = torch.ones(3, 3).triu(diagonal=1)
    di = torch.diag(torch.tensor([1.0, 2.0]))
    nar = x.narrow(2, 1, 2)
    win = torch.arange(6.0).unfold(0, 3, 2)
    srt = torch.sort(torch.tensor([3.0, 1.0, 2.0]), descending=True)
    cs = torch.cumsum(torch.tensor([1, 2, 3]), dim=0)
    e = torch.einsum("bij,bjk->bik", x[:, :, :3], x[:, :3, :])
    o = torch.outer(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0, 5.0]))
    result = dict(parts=[p.shape[2] for p in parts], pieces=[list(p.shape) for p in pieces], rows=len(rows),
                  rep=rep.tolist(), inter=inter.tolist(), flipped=flipped.tolist(), rolled=rolled.tolist(),
                  lower=lower.tolist(), upper=upper.tolist(), di=di.tolist(), nar=nar.tolist(), win=win.tolist(),
                  srt_values=srt.values.tolist(), srt_indices=srt.indices.tolist(), cs=cs.tolist(),
                  e=e.tolist(), o=o.tolist(), mean=x.mean(dim=(0, 2)).tolist(), std=x.std(dim=1).tolist(),
                  where=torch.where(x > 10, x, torch.zeros_like(x)).sum().item(), clamp=x.clamp(3, 5).sum().item())
    """


@snippet
def distributions_losses():
    """
    import torch
    mu = torch.tensor([0.5, -0.2], requires_grad=True)
    log_sigma = torch.tensor([0.1, -0.3], requires_grad=True)
    q = torch.distributions.Normal(mu, log_sigma.exp())
    prior = torch.distributions.Normal(torch.zeros(2), torch.ones(2))
    kl = torch.distributions.kl_divergence(q, prior).sum()
    logits = torch.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]], requires_grad=True)
    pi = torch.distributions.Categorical(logits=logits)
    actions = torch.tensor([1, 2])
    pg_loss = -(pi.log_prob(actions) * torch.tensor([1.5, -0.5])).sum() - 0.01 * pi.entropy().sum()
    (kl + pg_loss).backward()
    z = q.rsample((4,))
    mvn = torch.distributions.MultivariateNormal(torch.zeros(2), scale_tril=torch.tensor([[1.0, 0.0], [0.5, 2.0]]))
    result = dict(kl=kl.item(), pg=pg_loss.item(), mu_grad=mu.grad.tolist(), ls_grad=log_sigma.grad.tolist(),
                  logits_grad=logits.grad.tolist(), z_shape=list(z.shape), batch=list(pi.batch_shape),
                  mvn_lp=mvn.log_prob(torch.tensor([0.3, -1.0])).item(), mvn_h=mvn.entropy().item(),
                  beta_mean=torch.distributions.Beta(2.0, 3.0).mean.item())
    """

def _run(source, use_tinynet):
    if use_tinynet:
        assert "import torch\n" in source
        source = source.replace("import torch\n", "import tinynet as torch\n", 1)
        source = source.replace("from torch.utils.data import", "from tinynet.utils.data import")
    scope = {}
    exec(compile(source, "<snippet>", "exec"), scope)
    return scope["result"]


def _compare(a, b, path="result"):
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for k in a:
            _compare(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{path}: {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            _compare(x, y, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert numpy.isclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True), f"{path}: {a} != {b}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippet_runs_with_only_the_import_changed(name):
    ours = _run(SNIPPETS[name], use_tinynet=True)
    if real_torch is None:
        pytest.skip("PyTorch not installed: ran the snippet, nothing to compare with")
    theirs = _run(SNIPPETS[name], use_tinynet=False)
    if name == "tensor_basics":
        ours.pop("device_type"), theirs.pop("device_type")  # cpu for torch here; tinynet may see a GPU
        if tinynet.get_default_device().type == "cuda":  # tinynet's factories then make GPU tensors,
            ours.pop("n"), theirs.pop("n")               # whose numpy() is a copy, not shared memory
    _compare(ours, theirs)
