"""L-BFGS with PyTorch's algorithm, argument names, defaults and state keys (Nocedal and
Wright, "Numerical Optimization", 2nd ed., algorithm 7.4, the two-loop recursion).

Each ``step(closure)`` runs up to ``max_iter`` iterations on the flattened parameters ``x``
with gradient ``g``. The direction is ``d = -H g``, where ``H`` applies the last
``history_size`` curvature pairs ``s = t d`` (the step taken) and ``y = g_new - g_old``
(kept only when ``y . s > 1e-10``) to the scaled identity ``(y . s / y . y) I``. The first
step is ``t = min(1, 1 / |g|_1) lr``, later ones ``t = lr``. Iterations stop when
``|g|_max <= tolerance_grad``, when ``g . d > -tolerance_change``, when the step or the
change in loss falls below ``tolerance_change``, or when ``max_eval`` closure calls are
spent. The line search ``strong_wolfe`` is not implemented: ``line_search_fn`` must be None.
"""
from .. import backend
from ..autograd import enable_grad, no_grad
from ..errors import ArgumentError
from .optimizer import Optimizer, check, check_numbers


class LBFGS(Optimizer):
    """Limited-memory BFGS (full-batch; ``step`` needs a closure that recomputes the loss).

    Args:
        params (iterable): parameters (one group only, as in PyTorch).
        lr (float): the step size, default 1.
        max_iter (int): iterations per ``step``, default 20.
        max_eval (int, optional): closure calls per ``step``, default ``max_iter * 5 // 4``.
        tolerance_grad (float): stop when the largest gradient entry is at most this, default 1e-7.
        tolerance_change (float): stop when the step or the change of the loss is below this,
            default 1e-9.
        history_size (int): curvature pairs kept, default 100.
        line_search_fn (str, optional): must be None (``"strong_wolfe"`` is not implemented).

    State (of the first parameter, as PyTorch keeps it): ``func_evals``, ``n_iter``, ``d``,
    ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``al``, ``H_diag``, ``prev_flat_grad``, ``prev_loss``.

    Raises:
        ArgumentError (a ValueError): lr < 0, more than one parameter group, or a line search.
        ArgumentTypeError: a non-number setting.
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        check_numbers("LBFGS", lr=lr, max_iter=max_iter, tolerance_grad=tolerance_grad,
                      tolerance_change=tolerance_change, history_size=history_size)
        check("LBFGS", lr >= 0, f"invalid learning rate: expected lr >= 0, got {lr}")
        if line_search_fn is not None:
            raise ArgumentError(f"LBFGS: line_search_fn={line_search_fn!r} is not implemented in tinynet; use None "
                                "(a fixed step of lr)")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        check("LBFGS", len(self.param_groups) == 1, "LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self, xp):
        parts = []
        for p in self._params:
            g = p.grad.array if p.grad is not None else xp.zeros(p.array.size, dtype=p.array.dtype)
            parts.append(g.reshape(-1))
        return xp.concatenate(parts)

    def _add_grad(self, step, direction):
        offset = 0
        for p in self._params:
            n = p.array.size
            p.array += step * direction[offset:offset + n].reshape(p.array.shape)
            offset += n

    @no_grad()
    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; returns the loss of the first closure call.

        Raises:
            ArgumentError: no closure.
        """
        if closure is None:
            raise ArgumentError("LBFGS.step: a closure that re-evaluates the model and returns the loss is required")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        xp = backend.array_module(self._params[0].array)
        state = self.state.setdefault(id(self._params[0]), {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad(xp)
        if float(xp.abs(flat_grad).max()) <= tolerance_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")
        al = state.get("al")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, h_diag = [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = float(y.dot(s))
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y.dot(y))
                al = [0.0] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):        # the two-loop recursion
                    al[i] = float(old_stps[i].dot(q)) * ro[i]
                    q = q - al[i] * old_dirs[i]
                r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = float(old_dirs[i].dot(r)) * ro[i]
                    r = r + (al[i] - be_i) * old_stps[i]
                d = r
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / float(xp.abs(flat_grad).sum())) * lr if state["n_iter"] == 1 else lr
            gtd = float(flat_grad.dot(d))
            if gtd > -tolerance_change:
                break
            ls_func_evals = 0
            self._add_grad(t, d)
            if n_iter != max_iter:
                with enable_grad():
                    loss = float(closure())
                flat_grad = self._flat_grad(xp)
                ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval:
                break
            if float(xp.abs(flat_grad).max()) <= tolerance_grad:
                break
            if float(xp.abs(d * t).max()) <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss, al=al)
        return orig_loss
