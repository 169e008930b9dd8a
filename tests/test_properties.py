"""Property-based tests (hypothesis): broadcasting gradients and conv/pool output sizes."""
import numpy
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import tinynet
import tinynet.nn.functional as F


@settings(max_examples=40, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       st.sampled_from(["add", "sub", "mul", "div"]))
def test_binary_op_gradient_has_input_shape(shapes, op):
    (sa, sb), out_shape = shapes.input_shapes, shapes.result_shape
    rng = numpy.random.default_rng(0)
    a = tinynet.tensor(rng.uniform(1, 2, sa), requires_grad=True)
    b = tinynet.tensor(rng.uniform(1, 2, sb), requires_grad=True)
    y = getattr(F, op)(a, b)
    assert y.shape == tuple(out_shape)
    y.sum().backward()
    assert a.grad.shape == tuple(sa) and b.grad.shape == tuple(sb)
    if op == "add":  # d(sum(a+b))/da counts how often each element was broadcast
        assert numpy.allclose(a.grad.numpy(), numpy.prod(out_shape) / max(numpy.prod(sa), 1))


@settings(max_examples=40, deadline=None)
@given(h=st.integers(5, 12), w=st.integers(5, 12), k=st.integers(1, 4), s=st.integers(1, 3),
       p=st.integers(0, 2), d=st.integers(1, 2))
def test_conv_output_size_formula(h, w, k, s, p, d):
    span_h, span_w = h + 2 * p - d * (k - 1) - 1, w + 2 * p - d * (k - 1) - 1
    if span_h < 0 or span_w < 0:
        return
    x = tinynet.zeros(1, 2, h, w)
    wt = tinynet.zeros(3, 2, k, k)
    y = F.conv2d(x, wt, stride=s, padding=p, dilation=d)
    assert y.shape == (1, 3, span_h // s + 1, span_w // s + 1)


@settings(max_examples=40, deadline=None)
@given(h=st.integers(4, 11), k=st.integers(2, 4), s=st.integers(1, 3), ceil=st.booleans())
def test_max_pool_picks_window_maximum(h, k, s, ceil):
    x = numpy.random.default_rng(h * 100 + k).standard_normal((1, 1, h, h))
    y = F.max_pool2d(tinynet.tensor(x), k, s, ceil_mode=ceil).detach().numpy()
    for i in range(y.shape[2]):
        for j in range(y.shape[3]):
            assert y[0, 0, i, j] == x[0, 0, i * s:i * s + k, j * s:j * s + k].max()
