"""Whole-step CUDA graphs for ``train_throughput.py --graph``: the same training step as
``make_step`` there, replayed from a graph in each framework.

* tinynet: ``tinynet.compile(step)`` (eager warm-up, one capture, then replays; the batch
  is copied into the graph's static inputs by ``compile``).
* PyTorch: the recipe of PyTorch's CUDA-graph docs ("whole network capture"): three
  warm-up steps on a side stream, ``torch.cuda.graph`` around zero_grad, forward,
  backward and optimizer step, then ``static_x.copy_(batch)`` and ``g.replay()``.

``gather=True`` (``train_throughput.py --gather``) is the loop users write, the same in both
frameworks::

    perm = randperm(n, device=...)            # at the start of each epoch
    for i in range(0, n - b + 1, b):          # full batches only: one captured shape
        idx = perm[i:i + b]
        loss = step(X[idx], Y[idx])           # gathered outside the graph, then the graphed step

(:func:`plain_loop`: the harness's calls walk through the permutation and draw a new one when
an epoch's full batches are used up); without it the batch is a contiguous slice of the
resident images at the harness's offsets.
"""


def plain_loop(n, randperm):
    """``next_index(b)``: the index of the next batch of the loop above, ``perm[i:i + b]``, with
    ``perm = randperm()`` drawn again when the epoch has no full batch of ``b`` left."""
    perm, pos = randperm(), 0

    def next_index(b):
        nonlocal perm, pos
        if pos + b > n:
            perm, pos = randperm(), 0
        pos += b
        return perm[pos - b:pos]
    return next_index


def graphed_parts(framework, model_name, device, x, y):
    """The pieces of the graphed training loop in ``framework``: ``(xs, ys, randperm,
    train_step, sync, loss_value)``, with the images ``xs`` and labels ``ys`` on the GPU,
    ``randperm()`` a new permutation of their rows on the GPU, ``train_step(bx, by) -> loss``
    the graphed step on a batch (tinynet: ``tinynet.compile``; PyTorch: its CUDA-graph recipe,
    capturing at the first call, then ``static.copy_(batch)`` and ``replay()``),
    ``sync()`` a device synchronisation and ``loss_value(loss)`` the loss as a float."""
    from models import LOGITS, RECIPES, tinynet_model, torch_model
    if device != "cuda" and framework != "tinynet":  # tinynet.compile runs the step eagerly on the CPU
        raise SystemExit("--graph needs --device cuda")
    n = len(x)
    if framework == "tinynet":
        import tinynet
        import tinynet.nn.functional as F
        if device == "cuda":
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

        sync = tinynet.backend.cupy.cuda.get_current_stream().synchronize if device == "cuda" else (lambda: None)
        return (xs, ys, lambda: tinynet.randperm(n, device=device), train_step, sync,
                lambda loss: loss.item())

    import torch
    import torch.nn.functional as F
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    model = torch_model(model_name).to(device)
    opt = torch.optim.SGD(model.parameters(), **RECIPES[model_name])
    xs, ys = torch.tensor(x, device=device), torch.tensor(y, device=device)
    criterion = F.cross_entropy if model_name in LOGITS else F.nll_loss
    state = {}

    def body(bx, by):
        opt.zero_grad(set_to_none=True)
        loss = criterion(model(bx), by)
        loss.backward()
        opt.step()
        return loss

    def train_step(bx, by):
        if "g" not in state:
            static_x, static_y = bx.clone(), by.clone()
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
        state["x"].copy_(bx)
        state["y"].copy_(by)
        state["g"].replay()
        return state["loss"]
    return (xs, ys, lambda: torch.randperm(n, device=device), train_step, torch.cuda.synchronize,
            lambda loss: loss.item())


def make_graphed_step(framework, model_name, device, x, y, gather=False):
    """``(step(lo, hi) -> loss, sync, loss_value)`` as ``train_throughput.make_step``."""
    xs, ys, randperm, train_step, sync, loss_value = graphed_parts(framework, model_name, device, x, y)
    next_index = plain_loop(len(x), randperm)

    def step(lo, hi):
        if gather:
            idx = next_index(hi - lo)
            return train_step(xs[idx], ys[idx])
        return train_step(xs[lo:hi], ys[lo:hi])
    return step, sync, loss_value


def replay_of(framework, train_step):
    """The captured graph's replay alone, once ``train_step`` (from :func:`graphed_parts`) has
    been captured; None when nothing was (tinynet on the CPU runs the step eagerly)."""
    if framework == "tinynet":
        cache = getattr(train_step, "_cache", None)
        entry = next(iter(cache.values())) if cache else None
        if entry is None or entry.graph is None:
            return None
        if entry.bound:
            # the graph's first kernel copies the arguments from the addresses of the last call;
            # point it at live copies of the batch, so the replays alone do that copy too
            batch = [s.array.copy() for s in entry.static[1]]
            entry.ptrs = [a.data.ptr for a in batch]
            return lambda: (batch, entry.graph.replay())
        return entry.graph.replay
    state = [c.cell_contents for c in train_step.__closure__ if isinstance(c.cell_contents, dict)][0]
    return state["g"].replay
