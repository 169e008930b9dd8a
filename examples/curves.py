"""The examples' training curves: ``--logdir`` (TensorBoard event files) and ``--plot`` (a PNG).

What is recorded, with ``step`` = optimizer steps done since the start of the run (1-based):

* every ``--log-interval`` batches (every 50 in the CIFAR-10 example): ``train/loss`` (that
  batch's loss) and ``train/lr``; with ``--log-interval 0`` nothing, and the plot's loss panel
  has the epoch means only;
* at the end of each epoch, at the step that ends it: ``train/epoch_loss`` (the epoch's mean),
  ``test/loss``, ``test/accuracy`` (%) and ``perf/images_per_s``.

The PNG has two panels: the training loss per step (the logged batches as a line, each epoch's
mean as a dot) and the test accuracy per epoch. It is drawn with matplotlib's Agg canvas (no
display needed) and written atomically (:func:`tinynet.atomic.atomic_write`): a crash leaves the
previous file or none, never half a PNG.

A resumed run (``--resume``) continues both: the epochs restored from the checkpoint keep their
rows and their logged step losses (stored in the rows); only the steps logged in an epoch that
was interrupted mid-way, before its checkpoint, are lost from the plot. In TensorBoard, the new
writer purges the interrupted run's events from the resumed step on (``purge_step``), so the
curves join without overlap.
"""
import os

from tinynet.atomic import atomic_write
from tinynet.errors import MissingExtraError
from tinynet.utils.extras import import_optional


def add_arguments(parser, every="--log-interval"):
    """The ``--summary``, ``--logdir`` and ``--plot`` flags of the examples; ``every``: how
    often the batch loss is logged, for the help text."""
    parser.add_argument("--summary", action="store_true",
                        help="print the model's layers, output shapes, parameters and mult-adds before training")
    parser.add_argument("--logdir", metavar="DIR", default=None,
                        help=f"write TensorBoard event files to DIR: the loss and lr every {every} batches, "
                             "the test loss and accuracy every epoch (needs tinynet[tensorboard])")
    parser.add_argument("--plot", metavar="PATH", default=None,
                        help="save the training loss per step and the test accuracy per epoch as a PNG (needs "
                             "tinynet[plot])")


def check(args):
    """One line saying why ``--plot``/``--logdir`` cannot work, or None; checked before training.

    ``--plot`` needs matplotlib (the ``plot`` extra) and an existing folder; ``--logdir`` needs
    tensorboard (the ``tensorboard`` extra)."""
    try:
        if args.plot:
            import_optional("matplotlib", "plot", "--plot")
            folder = os.path.dirname(os.path.abspath(args.plot))
            if not os.path.isdir(folder):
                return f"--plot {args.plot}: the folder {folder} does not exist"
            if os.path.isdir(args.plot):
                return f"--plot {args.plot}: that is a folder; give a file name ending in .png"
        if args.logdir:
            import_optional("tensorboard", "tensorboard", "--logdir")
    except MissingExtraError as exc:
        return str(exc)
    return None


class Recorder:
    """Collects the logged step losses and writes them, and the epoch rows, to TensorBoard.

    Args:
        logdir (str or None): TensorBoard folder (None: no event files).
        steps_per_epoch (int): batches per epoch, to number the steps.
        purge_step (int or None): on a resumed run, the first step it will log.

    Raises:
        PathNotWritableError: ``logdir`` cannot be written.
    """

    def __init__(self, logdir, steps_per_epoch, purge_step=None):
        self.steps_per_epoch, self.steps, self.writer = steps_per_epoch, [], None
        if logdir:
            from tinynet.utils.tensorboard import SummaryWriter
            self.writer = SummaryWriter(logdir, purge_step=purge_step)

    def global_step(self, epoch, i):
        """The step number of batch ``i`` (0-based) of ``epoch`` (1-based)."""
        return (epoch - 1) * self.steps_per_epoch + i + 1

    def log_step(self, epoch, i, loss, lr):
        step = self.global_step(epoch, i)
        self.steps.append([step, loss])
        if self.writer:
            self.writer.add_scalar("train/loss", loss, step)
            self.writer.add_scalar("train/lr", lr, step)

    def log_epoch(self, row):
        """Move the epoch's step losses into ``row["steps"]`` (saved with the checkpoint's rows)."""
        row["steps"], self.steps = self.steps, []
        if self.writer:
            step = row["epoch"] * self.steps_per_epoch
            for tag, key in (("train/epoch_loss", "train_loss"), ("test/loss", "test_loss"),
                             ("test/accuracy", "accuracy"), ("perf/images_per_s", "images_per_s")):
                if key in row:
                    self.writer.add_scalar(tag, row[key], step)
            self.writer.flush()

    def close(self):
        if self.writer:
            self.writer.close()


def make_figure(rows, steps_per_epoch, title):
    """A matplotlib Figure (Agg canvas) of the rows: training loss per step, test accuracy per epoch."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(10, 4), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    loss_ax, acc_ax = fig.subplots(1, 2)
    steps = [s for r in rows for s in r.get("steps", [])]
    if steps:
        loss_ax.plot([s for s, _ in steps], [v for _, v in steps], lw=1, label="logged batches")
    loss_ax.plot([r["epoch"] * steps_per_epoch for r in rows], [r["train_loss"] for r in rows], "o",
                 label="epoch mean")
    loss_ax.set(xlabel="step", ylabel="training loss", title="training loss per step")
    loss_ax.legend()
    tested = [r for r in rows if "accuracy" in r]  # a run without a test set has none
    acc_ax.plot([r["epoch"] for r in tested], [r["accuracy"] for r in tested], "o-", color="tab:green")
    acc_ax.set(xlabel="epoch", ylabel="test accuracy (%)", title="test accuracy per epoch")
    for ax in (loss_ax, acc_ax):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    return fig


def save_plot(path, rows, steps_per_epoch, title):
    """Write :func:`make_figure`'s PNG to ``path`` atomically."""
    fig = make_figure(rows, steps_per_epoch, title)
    atomic_write(path, lambda f: fig.savefig(f, format="png"))
