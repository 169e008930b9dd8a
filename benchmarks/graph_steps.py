"""Whole-step CUDA graphs for ``train_throughput.py --graph``: the same training step as
``make_step`` there, replayed from a graph in each framework.

* tinynet: ``tinynet.compile(step)`` (eager warm-up, one capture, then replays; the batch
  is copied into the graph's static inputs by ``compile``).
* PyTorch: the recipe of PyTorch's CUDA-graph docs ("whole network capture"): three
  warm-up steps on a side stream, ``torch.cuda.graph`` around zero_grad, forward,
  backward and optimizer step, then ``static_x.copy_(batch)`` and ``g.replay()``.

``gather=True`` (``train_throughput.py --gather``) is the loop users write: each step's batch
is ``X[idx]``, ``Y[idx]`` for a slice ``idx`` of a random permutation (an integer tensor on the
device), gathered outside the graph and handed to the graphed step; without it the batch is
a contiguous slice of the resident images.
"""


def make_graphed_step(framework, model_name, device, x, y, gather=False):
    """``(step(lo, hi) -> loss, sync, loss_value)`` as ``train_throughput.make_step``."""
    from models import LOGITS, RECIPES, tinynet_model, torch_model
    if device != "cuda":
        raise SystemExit("--graph needs --device cuda")
    if framework == "tinynet":
        import tinynet
        import tinynet.nn.functional as F
        tinynet.backends.cudnn.benchmark = True
        tinynet.manual_seed(0)
        model = tinynet_model(model_name).to(device)
        opt = tinynet.optim.SGD(model.parameters(), **RECIPES[model_name])
        xs, ys = tinynet.tensor(x, device=device), tinynet.tensor(y, device=device)
        criterion = F.cross_entropy if model_name in LOGITS else F.nll_loss

        @tinynet.compile(fullgraph=True)
        def train_step(bx, by):
            opt.zero_grad()
            loss = criterion(model(bx), by)
            loss.backward()
            opt.step()
            return loss

        perm = tinynet.randperm(len(x), device=device)

        def step(lo, hi):
            if gather:
                idx = perm[lo:hi]
                return train_step(xs[idx], ys[idx])
            return train_step(xs[lo:hi], ys[lo:hi])
        sync = tinynet.backend.cupy.cuda.get_current_stream().synchronize
        return step, sync, lambda loss: loss.item()

    import torch
    import torch.nn.functional as F
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    model = torch_model(model_name).to(device)
    opt = torch.optim.SGD(model.parameters(), **RECIPES[model_name])
    xs, ys = torch.tensor(x, device=device), torch.tensor(y, device=device)
    criterion = F.cross_entropy if model_name in LOGITS else F.nll_loss
    state = {}
    perm = torch.randperm(len(x), device=device)

    def body(bx, by):
        opt.zero_grad(set_to_none=True)
        loss = criterion(model(bx), by)
        loss.backward()
        opt.step()
        return loss

    def step(lo, hi):
        if "g" not in state:
            static_x, static_y = xs[lo:hi].clone(), ys[lo:hi].clone()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    body(static_x, static_y)
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            opt.zero_grad(set_to_none=True)
            with torch.cuda.graph(g):
                static_loss = body(static_x, static_y)
            state.update(g=g, x=static_x, y=static_y, loss=static_loss)
        if gather:
            idx = perm[lo:hi]
            state["x"].copy_(xs[idx])
            state["y"].copy_(ys[idx])
        else:
            state["x"].copy_(xs[lo:hi])
            state["y"].copy_(ys[lo:hi])
        state["g"].replay()
        return state["loss"]
    return step, torch.cuda.synchronize, lambda loss: loss.item()
