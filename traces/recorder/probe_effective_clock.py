#!/usr/bin/env python3
"""Measures the SM clock a kernel actually runs at, beside the clock NVML reports, under load (issue 16).

Why: the activity power model is fit and validated at "the recorded clocks", the SM clock NVML reported in the sample
before each kernel. Kernel loops at the 700 W cap then show tensor throughputs that the reported clock cannot deliver
(gemm-bf16-8192: 791 TFLOP/s at a reported 1485 MHz, 98 % of the dense peak at that clock), so the reported clock may
not be the delivered one. This records both, on the card as found (NVML is only read; no clock or limit is set).

How: a one-thread probe kernel (hand-written PTX, loaded through the CUDA driver API with ctypes: no compiler needed)
reads %globaltimer (ns) and %clock64 (SM cycles) at its start, spins until SPAN ns have passed and reads both again:
cycles / ns is the SM clock it ran at. Each workload runs as batches of its kernel with a probe after every batch on
the same stream (the probe runs in the power state the batch left), for --seconds, while a thread samples NVML
every --sample-ms (SM clock, power, instant power, energy, throttle reasons). CUDA events time every batch, so the
batch's throughput can be set beside the probe that follows it.

    python3 traces/recorder/probe_effective_clock.py --out DIR [--seconds 6] [--only REGEX]

Writes DIR/<workload>/probes.csv (gt_ns, span_ns, cycles, mhz: one row per probe, globaltimer ns), batches.csv
(i, ms, work per batch), telemetry.csv (host ns, NVML fields), DIR/clock_sync.csv (host time_ns vs globaltimer
around synchronised probes, to align the two clocks) and DIR/run.json (device, versions, workloads).
"""
import argparse
import ctypes
import csv
import json
import os
import re
import threading
import time

PTX = r"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry probe(.param .u64 out, .param .u64 span)
{
  .reg .u64 %rd<12>;
  .reg .pred %p;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [span];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u64 %rd3, %globaltimer;
  mov.u64 %rd4, %clock64;
LOOP:
  mov.u64 %rd5, %globaltimer;
  sub.u64 %rd6, %rd5, %rd3;
  setp.lt.u64 %p, %rd6, %rd2;
  @%p bra LOOP;
  mov.u64 %rd7, %clock64;
  sub.u64 %rd8, %rd7, %rd4;
  st.global.u64 [%rd1], %rd3;
  st.global.u64 [%rd1+8], %rd6;
  st.global.u64 [%rd1+16], %rd8;
  ret;
}
"""


class Probe:
    """The PTX probe through the driver API, on torch's current context and stream."""

    def __init__(self, torch, span_ns, capacity):
        self.torch = torch
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # makes torch's primary context current
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.mod = ctypes.c_void_p()
        self._check(self.cu.cuModuleLoadData(ctypes.byref(self.mod), ctypes.c_char_p(PTX.encode())), "cuModuleLoadData")
        self.fn = ctypes.c_void_p()
        self._check(self.cu.cuModuleGetFunction(ctypes.byref(self.fn), self.mod, b"probe"), "cuModuleGetFunction")
        self.buf = torch.zeros((capacity, 3), dtype=torch.int64, device="cuda")
        self.span = ctypes.c_uint64(int(span_ns))
        self.n = 0

    def _check(self, rc, what):
        if rc != 0:
            raise RuntimeError("%s failed: CUresult %d" % (what, rc))

    def launch(self):
        if self.n >= self.buf.shape[0]:  # a dropped probe would pair the next batches with the wrong probes
            raise RuntimeError("probe buffer full (%d probes): record fewer seconds per workload" % self.n)
        out = ctypes.c_uint64(self.buf[self.n].data_ptr())
        args = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(out), ctypes.c_void_p), ctypes.cast(ctypes.byref(self.span), ctypes.c_void_p))
        stream = ctypes.c_void_p(self.torch.cuda.current_stream().cuda_stream)
        self._check(self.cu.cuLaunchKernel(self.fn, 1, 1, 1, 1, 1, 1, 0, stream, args, None), "cuLaunchKernel")
        self.n += 1

    def rows(self):
        return self.buf[: self.n].cpu().tolist()


class Sampler(threading.Thread):
    """NVML read every period_s (read-only calls)."""

    def __init__(self, nv, handle, period_s):
        super().__init__(daemon=True)
        self.nv, self.h, self.period = nv, handle, period_s
        self.rows, self.stop_flag = [], threading.Event()

    def run(self):
        nv, h = self.nv, self.h
        while not self.stop_flag.is_set():
            t = time.time_ns()
            try:
                inst = nv.nvmlDeviceGetFieldValues(h, [nv.NVML_FI_DEV_POWER_INSTANT])[0].value.uiVal
            except Exception:
                inst = -1
            self.rows.append((t, nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM), nv.nvmlDeviceGetPowerUsage(h), inst,
                              nv.nvmlDeviceGetTotalEnergyConsumption(h), nv.nvmlDeviceGetCurrentClocksEventReasons(h)
                              if hasattr(nv, "nvmlDeviceGetCurrentClocksEventReasons") else nv.nvmlDeviceGetCurrentClocksThrottleReasons(h),
                              nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)))
            time.sleep(self.period)


def workloads(torch):
    """name -> (make() -> (step callable, FLOPs or bytes per step, unit), steps per batch)."""
    dev = "cuda"

    def gemm(m, n, k, dt):
        def make():
            a = torch.randn(m, k, device=dev, dtype=dt)
            b = torch.randn(k, n, device=dev, dtype=dt)
            return (lambda: torch.mm(a, b)), 2.0 * m * n * k, "flop"
        return make

    def unary(fn, numel, dt):
        def make():
            x = torch.randn(numel, device=dev, dtype=dt)
            return (lambda: fn(x)), 2.0 * numel * x.element_size(), "byte"
        return make

    def fill(numel, value, dt):
        def make():
            x = torch.empty(numel, device=dev, dtype=dt)
            return (lambda: x.fill_(value)), float(numel * x.element_size()), "byte"
        return make

    bf16, fp16 = torch.bfloat16, torch.float16
    return {
        "gemm-bf16-8192": (gemm(8192, 8192, 8192, bf16), 4),
        "gemm-bf16-m1024": (gemm(1024, 8192, 8192, bf16), 20),
        "gemm-fp16-8192": (gemm(8192, 8192, 8192, fp16), 4),
        "gemm-bf16-4096": (gemm(4096, 4096, 4096, bf16), 20),
        "gemm-bf16-2048": (gemm(2048, 2048, 2048, bf16), 100),
        "gemm-bf16-1024": (gemm(1024, 1024, 1024, bf16), 200),
        "gelu-bf16": (unary(torch.nn.functional.gelu, 1 << 28, bf16), 10),
        "tanh-bf16": (unary(torch.tanh, 1 << 28, bf16), 10),
        "add-bf16": (unary(lambda x: x + x, 1 << 28, bf16), 10),
        "fill-fp32-1g": (fill(1 << 28, 1.5, torch.float32), 10),
        "idle-probe": (None, 1),
    }


def run_one(torch, probe, make, per_batch, seconds):
    first = probe.n
    batches = []
    t_end = time.time() + seconds
    if make is None:  # the probe alone, GPU otherwise idle: the clock NVML reports at rest vs the probe's
        while time.time() < t_end:
            probe.launch()
            torch.cuda.synchronize()
            time.sleep(0.02)
        return probe.rows()[first:], batches
    step, work, unit = make()
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    events = []
    while time.time() < t_end:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(per_batch):
            step()
        e.record()
        probe.launch()
        events.append((s, e))
        if len(events) % 8 == 0:
            events[-8][1].synchronize()  # keeps the queue a few batches deep, not seconds
    torch.cuda.synchronize()
    for i, (s, e) in enumerate(events):
        batches.append((i, s.elapsed_time(e), work * per_batch, unit))
    return probe.rows()[first:], batches


def clock_sync(torch, probe, n=20):
    """(host ns before, globaltimer ns at the probe's start, host ns after) around synchronised probes."""
    out = []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.time_ns()
        probe.launch()
        torch.cuda.synchronize()
        t1 = time.time_ns()
        out.append((t0, probe.rows()[-1][0], t1))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--seconds", type=float, default=6.0, help="run time per workload")
    p.add_argument("--sample-ms", type=float, default=5.0)
    p.add_argument("--span-ns", type=int, default=100000, help="how long each probe spins (globaltimer ticks are ~1 us)")
    p.add_argument("--only", default="", help="regex over workload names")
    p.add_argument("--rest-s", type=float, default=2.0, help="idle pause between workloads")
    a = p.parse_args()
    import pynvml as nv
    import torch
    nv.nvmlInit()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    os.makedirs(a.out, exist_ok=True)
    probe = Probe(torch, a.span_ns, 200000)
    wl = {k: v for k, v in workloads(torch).items() if re.search(a.only, k)}
    meta = {"device": nv.nvmlDeviceGetName(h), "driver": nv.nvmlSystemGetDriverVersion(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "power_limit_mw": nv.nvmlDeviceGetEnforcedPowerLimit(h),
            "max_sm_mhz": nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM), "span_ns": a.span_ns,
            "sample_ms": a.sample_ms, "seconds": a.seconds, "workloads": {}, "recorder": "traces/recorder/probe_effective_clock.py",
            "note": "NVML read only; no clock, limit or setting changed"}
    with open(os.path.join(a.out, "clock_sync.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["host_before_ns", "globaltimer_ns", "host_after_ns"])
        w.writerows(clock_sync(torch, probe))
    for name, (make, per_batch) in wl.items():
        time.sleep(a.rest_s)
        sampler = Sampler(nv, h, a.sample_ms / 1000.0)
        sampler.start()
        t0 = time.time_ns()
        probes, batches = run_one(torch, probe, make, per_batch, a.seconds)
        sampler.stop_flag.set()
        sampler.join()
        d = os.path.join(a.out, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "probes.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["globaltimer_ns", "span_ns", "cycles", "mhz"])
            for g, span, cyc in probes:
                w.writerow([g, span, cyc, "%.1f" % (cyc / span * 1e3 if span > 0 else 0)])
        with open(os.path.join(d, "batches.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["batch", "ms", "work", "unit"])
            w.writerows(batches)
        with open(os.path.join(d, "telemetry.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["t_ns", "sm_mhz", "power_mw", "power_instant_mw", "energy_mj", "clocks_event_reasons", "temp_c"])
            w.writerows(sampler.rows)
        mhz = [c / s * 1e3 for _, s, c in probes if s > 0]
        meta["workloads"][name] = {"t0_ns": t0, "probes": len(probes), "batches": len(batches), "per_batch": per_batch,
                                   "probe_mhz_median": sorted(mhz)[len(mhz) // 2] if mhz else None,
                                   "nvml_mhz_median": sorted(r[1] for r in sampler.rows)[len(sampler.rows) // 2] if sampler.rows else None}
        print(name, json.dumps(meta["workloads"][name]), flush=True)
    with open(os.path.join(a.out, "run.json"), "w") as f:
        json.dump(meta, f, indent=1)
    nv.nvmlShutdown()


if __name__ == "__main__":
    main()
