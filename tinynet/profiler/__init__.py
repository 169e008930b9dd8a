"""``tinynet.profiler``: PyTorch's ``torch.profiler`` on tinynet's ops.

``with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof: ...`` records
each op applied (named ``tinynet::<op>``) and each :class:`record_function` span;
``prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)`` prints PyTorch's
plain-text table and ``prof.export_chrome_trace("trace.json")`` writes a Chrome trace.
Without an active profiler the ops run exactly as before (see :mod:`._record`).
"""
from ._events import EventList, FunctionEvent, FunctionEventAvg, Interval
from ._record import record_function
from .profiler import (ProfilerAction, ProfilerActivity, kineto_available, profile, schedule,
                       supported_activities, tensorboard_trace_handler)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "kineto_available", "record_function", "EventList", "FunctionEvent",
           "FunctionEventAvg", "Interval"]
