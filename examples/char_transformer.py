"""A small GPT-style character model trained on a text file with tinynet.

Token embedding + learned positions, pre-norm transformer blocks (causal
``scaled_dot_product_attention``, LayerNorm, GELU MLP), AdamW with weight decay on the
matrices only, ``clip_grad_norm_``, and a linear warm-up into a cosine decay. The model
code is written as PyTorch code: ``benchmarks/char_transformer.py`` runs this very file
with ``import torch`` in place of the tinynet import to compare the two.

    python examples/char_transformer.py                      # Hamlet, examples/data/hamlet.txt
    python examples/char_transformer.py --text my.txt --steps 3000 --n-layer 4
"""
import argparse
import math
import os
import sys
import time

import tinynet as torch
import tinynet.nn as nn
import tinynet.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head, self.dropout = n_head, dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                           is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                 nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class CharGPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer=2, n_head=4, n_embd=128, dropout=0.1):
        super().__init__()
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Embedding(block_size, n_embd)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([Block(n_embd, n_head, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        B, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.block_size:])
            probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


def configure_optimizer(model, lr, weight_decay):
    """AdamW; weight decay on the matrices (dim >= 2) only, as in GPT-2 training code."""
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))


def warmup_cosine(warmup, total, floor=0.1):
    """The learning-rate factor: linear warm-up over ``warmup`` steps, then a cosine decay to ``floor``."""
    def factor(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, total - warmup))
        return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))
    return factor


def load_text(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(data))
    return chars, data[:n], data[n:]


def get_batch(data, block_size, batch_size, device):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix.tolist()])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix.tolist()])
    return x.to(device), y.to(device)


@torch.no_grad()
def estimate_loss(model, data, args, device, iters=10):
    model.eval()
    losses = [model(*get_batch(data, args.block_size, args.batch_size, device))[1].item() for _ in range(iters)]
    model.train()
    return sum(losses) / len(losses)


def build_parser():
    p = argparse.ArgumentParser(description="Train a small character-level GPT on a text file.")
    p.add_argument("--text", default=os.path.join(HERE, "data", "hamlet.txt"), help="UTF-8 text file")
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--block-size", type=int, default=64, help="context length in characters")
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=128)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--clip", type=float, default=1.0, help="max gradient norm")
    p.add_argument("--eval-interval", type=int, default=250)
    p.add_argument("--sample-chars", type=int, default=300)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--device", default=None, help="cpu or cuda (default: the default device)")
    p.add_argument("--summary", action="store_true",
                   help="print the model's layers, output shapes, parameters and mult-adds before training")
    return p


def train(args, log=print, on_step=None):
    """Train per ``args``; return (model, chars, [(step, train loss, val loss or None)], tokens/s).

    ``log`` prints the evaluation lines; ``on_step()``, when given, is called after every step.
    """
    torch.manual_seed(args.seed)
    device = torch.device(args.device) if args.device else torch.get_default_device()
    chars, train_data, val_data = load_text(args.text)
    model = CharGPT(len(chars), args.block_size, args.n_layer, args.n_head, args.n_embd, args.dropout).to(device)
    optimizer = configure_optimizer(model, args.lr, args.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_cosine(args.warmup, args.steps))
    history, start = [], time.perf_counter()
    for step in range(args.steps):
        x, y = get_batch(train_data, args.block_size, args.batch_size, device)
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        scheduler.step()
        if on_step is not None:
            on_step()
        last = step == args.steps - 1
        if step % args.eval_interval == 0 or last:
            val = estimate_loss(model, val_data, args, device)
            history.append((step, loss.item(), val))
            log(f"step {step:5d}: train loss {loss.item():.4f}, val loss {val:.4f}, "
                f"lr {scheduler.get_last_lr()[0]:.2e}")
    seconds = time.perf_counter() - start
    return model, chars, history, args.steps * args.batch_size * args.block_size / seconds


def main(argv=None):
    args = build_parser().parse_args(argv)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    console = Console()
    console.print(f"tinynet {torch.__version__}: training a {args.n_layer}-layer character GPT on "
                  f"{os.path.basename(args.text)}, {args.steps} steps of {args.batch_size} x {args.block_size}")
    if args.summary:  # a model like the one train() builds (train() seeds the generator again first)
        from tinynet.utils import summary
        model = CharGPT(len(load_text(args.text)[0]), args.block_size, args.n_layer, args.n_head, args.n_embd,
                        args.dropout)
        console.print(summary(model, input_size=(args.batch_size, args.block_size), dtypes=[torch.long],
                              col_names=("output_size", "num_params", "mult_adds"), verbose=0), crop=False)
    columns = (TextColumn("training"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("training", total=args.steps)
        model, chars, history, tps = train(args, log=progress.console.print,
                                           on_step=lambda: progress.advance(task))
    console.print(f"{tps:,.0f} tokens/s")
    start = torch.tensor([[chars.index("\n") if "\n" in chars else 0]], dtype=torch.long,
                         device=next(model.parameters()).device)
    model.eval()
    text = "".join(chars[i] for i in model.generate(start, args.sample_chars, temperature=0.8)[0].tolist())
    console.print("[bold]sample:[/]")
    console.print(text, markup=False, highlight=False)
    main.history, main.tokens_per_s = history, tps
    return 0


if __name__ == "__main__":
    sys.exit(main())
