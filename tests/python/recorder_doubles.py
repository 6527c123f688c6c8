"""Test doubles for the recorder: a PyTorch backend that needs no PyTorch. It records the ranges the
recorder opens and, on export, writes a Kineto trace with GPU-like kernels inside each step range, so
that what the recorder writes can be read by `dvfs-sim validate` on a machine without a GPU."""
import json
import time

GEMM = "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN"
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>"


class FakeBackend:
    """drop_markers: a profiler that loses the recorder's step-bound marks (the ranges are then placed from the
    epoch-ns bounds); empty_steps: steps whose GPU work the trace lacks (the recorder must refuse the trace)."""

    def __init__(self, kernels_per_step=20, drop_markers=False, empty_steps=()):
        self.kernels_per_step = kernels_per_step
        self.drop_markers = drop_markers
        self.empty_steps = set(empty_steps)
        self.ranges = []       # [name, t0_ns, t1_ns or None]: ranges other than the marks
        self.marks = []        # [name, t_ns]
        self.calls = []        # what the recorder asked, in order
        self.profiling = False

    def synchronize(self):
        self.calls.append("synchronize")

    def device_info_args(self):
        return None, None

    def peak_memory(self):
        return None

    def start_profiler(self):
        self.calls.append("start_profiler")
        self.profiling = True

    def stop_profiler(self):
        self.calls.append("stop_profiler")
        self.profiling = False

    def open_range(self, name):
        assert self.profiling, f"range {name} opened while not profiling"
        r = [name, time.time_ns(), None]
        self.ranges.append(r)
        return r

    def close_range(self, r):
        r[2] = time.time_ns()

    def mark(self, name):
        assert self.profiling, f"mark {name} while not profiling"
        self.marks.append([name, time.time_ns()])

    def export_trace(self, path):
        base = self.marks[0][1] - 1_000_000
        us = lambda ns: (ns - base) / 1000.0  # noqa: E731
        events, corr = [], 1
        for i, (name, t) in enumerate(self.marks):
            if not self.drop_markers:
                events.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1, "ts": us(t), "dur": 0.5})
            if i + 1 == len(self.marks) or i in self.empty_steps:
                continue
            t0, t1 = t, self.marks[i + 1][1]
            slot = (t1 - t0) / 1000.0 / self.kernels_per_step
            for k in range(self.kernels_per_step):
                launch = us(t0) + 1.0 + k * slot
                events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                               "ts": launch, "dur": 1.0, "args": {"correlation": corr}})
                events.append({"ph": "X", "cat": "kernel", "name": GEMM if k % 2 == 0 else ELEMENTWISE, "pid": 0,
                               "tid": 7, "ts": launch + 2.0, "dur": 0.8 * slot,
                               "args": {"device": 0, "stream": 7, "correlation": corr, "grid": [132, 1, 1],
                                        "block": [384, 1, 1]}})
                corr += 1
        with open(path, "w") as f:
            json.dump({"schemaVersion": 1, "baseTimeNanoseconds": base,
                       "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "numSms": 132}], "traceEvents": events}, f)
