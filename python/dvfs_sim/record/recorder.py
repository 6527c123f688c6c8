"""Recorder: a training run on one NVIDIA GPU, written in the layout `dvfs-sim validate` reads
(docs/recording-format.md): trace.json.gz (Kineto, a `step<i>` range per profiled step), telemetry.csv
(NVML samples from a separate process) and run.json (device read-outs, phases with counter energy,
profiled step bounds taken with the GPU synchronised).

    from dvfs_sim.record import Recorder
    with Recorder("out/my-run", warmup=3, profiled=6) as rec:
        for batch in data:
            train_step(batch)
            rec.step()              # end of a training step
            if rec.done:
                break

Steps: the first `warmup` steps run unprofiled; the profiler starts at the end of the last of them, so the
first profiled step begins at a GPU-synchronised bound and its profiler start-up lands outside it. Each
bound is marked in the trace with a zero-length range and the `step<i>` ranges are written between the
marks after the export (trace_file.py says why); the written trace is checked against run.json. Energy
figures follow the counter's resolution rule (energy.py). NVML is only read, never set (see nvml.py).
"""
import json
import os
import sys
import time

from . import energy as energy_io
from . import host as host_io
from . import nvml as nvml_io
from .lifecycle import PhaseLog
from .trace_file import TraceMismatch, finish_trace


class RecorderError(RuntimeError):
    """A recording cannot be made (no GPU, no NVML, no PyTorch, bad arguments, too few steps)."""


class StopRecording(BaseException):
    """Raised from the step hook once every profiled step is recorded, to end the user's script there.
    A BaseException, so that the script's own `except Exception` does not swallow it."""


def _log(msg):
    print(f"[dvfs_sim.record {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Recorder:
    """out_dir: the recording directory (created). warmup (>= 1) and profiled (>= 1): steps. gpu: NVML
    index of the GPU the loop runs on. sample_ms: NVML sampling period. idle_s: idle time measured before
    and after (idle power for calibration). stop_script: raise StopRecording from step() once done (the
    CLI does, to end the script). backend: the PyTorch adapter (torch_backend.TorchBackend by default).
    command: how the recording was made, kept in run.json. host_sample_ms: period of the host counters
    (host.csv: RAPL, /proc CPU, disk, network, process I/O; None = not sampled). Phase markers of the whole
    job (lifecycle.json): rec.phase(name, kind) and rec.install_lifecycle_hooks() (lifecycle.py)."""

    def __init__(self, out_dir, warmup=3, profiled=6, gpu=0, sample_ms=5.0, idle_s=1.0, nvml_module="pynvml",
                 backend=None, command=None, stop_script=False, quiet=False, host_sample_ms=50.0):
        if not (isinstance(warmup, int) and warmup >= 1):
            raise RecorderError(f"warmup: expected >= 1 step (the first profiled step starts where a warm-up step ends), got {warmup!r}")
        if not (isinstance(profiled, int) and profiled >= 1):
            raise RecorderError(f"profiled: expected >= 1 step, got {profiled!r}")
        if not (sample_ms > 0):
            raise RecorderError(f"sample_ms: expected a period > 0 ms, got {sample_ms!r}")
        self.out_dir, self.warmup, self.profiled, self.gpu = os.fspath(out_dir), warmup, profiled, gpu
        self.sample_ms, self.idle_s, self.nvml_module = float(sample_ms), float(idle_s), nvml_module
        self.backend, self.command, self.stop_script, self.quiet = backend, command, stop_script, quiet
        self.steps_seen = 0
        self.bounds = []        # profiled steps: {t0_ns, t1_ns, energy_mj}
        self.phases = []        # {name, t0_ns, t1_ns, energy_mj}
        self._nv = self._h = self._sampler = self._device = None
        self._open_step = None  # (t0_ns, e0_mj) of the profiled step in progress
        self._last_end = None   # (t1_ns, e1_mj) of the last profiled step
        self._profiling = False
        self._phase_start = None
        self._removers = []
        self.step_source = None  # what marked the steps: "optimizer", "forward" or None (the API's rec.step())
        self.energy = None      # energy.summarize() of the profiled steps, once written
        self.trace_check = None  # trace_file.check_steps() of the written trace
        self.started = self.finished = False
        self.host_sample_ms = host_sample_ms
        self._host = None
        self.lifecycle = PhaseLog()

    # --- life cycle ----------------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.finish(failed=exc_type is not None and not issubclass(exc_type, StopRecording))
        return exc_type is not None and issubclass(exc_type, StopRecording)

    @property
    def done(self):
        """True once every profiled step is recorded."""
        return len(self.bounds) >= self.profiled

    def _say(self, msg):
        if not self.quiet:
            _log(msg)

    def _energy(self):
        return self._nv.nvmlDeviceGetTotalEnergyConsumption(self._h)  # mJ since the driver loaded

    def counter(self):
        """(epoch ns, NVML energy counter in mJ) now: for scripts that mark windows of their own."""
        return time.time_ns(), self._energy()

    def _begin_phase(self):
        self._phase_start = (time.time_ns(), self._energy())

    def _end_phase(self, name, at=None):
        t0, e0 = self._phase_start
        t1, e1 = at or (time.time_ns(), self._energy())
        self.phases.append({"name": name, "t0_ns": t0, "t1_ns": t1, "energy_mj": e1 - e0})
        self._phase_start = (t1, e1)
        self._say(f"{name}: {(t1 - t0) / 1e9:.2f} s, {(e1 - e0) / 1e3:.1f} J")

    def start(self):
        """Opens NVML and the GPU, starts the sampler, measures idle_s of idle."""
        if self.started:
            raise RecorderError("this Recorder was already started")
        try:
            self._nv = nvml_io.load_nvml(self.nvml_module)
            self._h = nvml_io.open_device(self._nv, self.gpu)
        except nvml_io.NvmlUnavailable as e:
            raise RecorderError(str(e)) from None
        if self.backend is None:
            from .torch_backend import TorchBackend, TorchMissing
            try:
                self.backend = TorchBackend()
            except TorchMissing as e:
                raise RecorderError(str(e)) from None
        os.makedirs(self.out_dir, exist_ok=True)
        self._sampler = nvml_io.Sampler(os.path.join(self.out_dir, "telemetry.csv"), self.gpu, self.sample_ms / 1e3,
                                        self.nvml_module)
        try:
            self._sampler.start()
        except nvml_io.NvmlUnavailable as e:
            raise RecorderError(str(e)) from None
        if self.host_sample_ms:
            self._host = host_io.HostSampler(os.path.join(self.out_dir, "host.csv"), os.getpid(), self.host_sample_ms / 1e3,
                                            exclude=[self._sampler.proc.pid] if self._sampler.proc else [])
            try:
                self._host.start()
            except RuntimeError as e:
                self._sampler.stop()
                raise RecorderError(str(e)) from None
        self.started = True
        self._say(f"sampling NVML GPU {self.gpu} every {self.sample_ms:g} ms into {self.out_dir}")
        self._begin_phase()
        time.sleep(self.idle_s)
        self._end_phase("idle:start")

    def phase(self, name, kind="other"):
        """A context manager marking one phase of the job in lifecycle.json (lifecycle.py)."""
        return self.lifecycle.phase(name, kind)

    def install_lifecycle_hooks(self):
        """Automatic phase markers: DataLoader waits, validation (eval() .. train()), checkpoint saves."""
        self._removers.append(self.lifecycle.install_auto(self.backend.torch))

    STEP_SOURCES = ("auto", "optimizer", "forward")

    def install_step_hook(self, on="auto"):
        """Marks steps without changing the script (the CLI's way). on="optimizer": a step ends after every
        optimizer step of any optimizer. on="forward": after every outermost module call (a model's forward,
        e.g. an inference loop). on="auto": optimizer steps; in a script whose model runs with gradients off
        (torch.no_grad / inference_mode) before any optimizer has stepped, each such forward is a step, until
        an optimizer steps during the warm-up (the counting then restarts on optimizer steps)."""
        if on not in self.STEP_SOURCES:
            raise RecorderError(f"step source: expected one of {', '.join(self.STEP_SOURCES)}, got {on!r}")
        if on in ("auto", "optimizer"):
            self._removers.append(self.backend.on_optimizer_step(self._optimizer_stepped))
        if on in ("auto", "forward"):
            self._removers.append(self.backend.on_forward(lambda grad: self._forward_done(grad, on == "forward")))
        self.step_source = None if on == "auto" else on

    def _optimizer_stepped(self):
        if self.step_source == "forward":
            if self._profiling or self.bounds:
                return
            self._say("an optimizer stepped: counting optimizer steps from here (the forwards before were warm-up)")
            self.steps_seen = 0
        self.step_source = "optimizer"
        self.step()

    def _forward_done(self, grad_enabled, always):
        if always or (self.step_source in (None, "forward") and not grad_enabled):
            self.step_source = "forward"
            self.step()

    def install_phase_ranges(self):
        """Adds forward/backward/optimizer ranges while profiling (for scripts without ranges of their own).
        Install before install_step_hook, so that the optimizer range closes before its step does."""
        self._removers.append(self.backend.phase_ranges(lambda: self._profiling))

    # --- steps ---------------------------------------------------------------------------------------
    def _open_profiled_step(self, t0_ns, e0_mj):
        self._open_step = (t0_ns, e0_mj)

    def _bound_now(self, index):
        """(epoch ns, energy mJ) of a step bound, with the profiler's mark #index placed right at that time: the
        energy counter's read (an NVML call, slow under load) comes after both, so that a trace whose marks are lost
        is placed by bounds that match them."""
        t = time.time_ns()
        self.backend.mark(f"dvfs_sim.step_bound#{index}")
        return t, self._energy()

    def step(self):
        """Marks the end of one training step. Returns False once every profiled step is recorded."""
        if not self.started or self.done:
            return not self.done
        self.steps_seen += 1
        if self.steps_seen < self.warmup:
            return True
        b = self.backend
        if self.steps_seen == self.warmup:
            b.synchronize()
            self._end_phase("train:until_profiled")
            b.start_profiler()
            self._profiling = True
            b.synchronize()
            t0, e0 = self._bound_now(0)
            self._phase_start = (t0, e0)
            self._open_profiled_step(t0, e0)
            return True
        b.synchronize()
        t1, e1 = self._bound_now(len(self.bounds) + 1)
        t0, e0 = self._open_step
        self.bounds.append({"t0_ns": t0, "t1_ns": t1, "energy_mj": e1 - e0})
        self._last_end = (t1, e1)
        self._open_step = None
        if not self.done:
            self._open_profiled_step(t1, e1)
            return True
        self._end_phase("train:profiled", at=(t1, e1))  # the profiler's shutdown belongs to the next phase
        self._stop_profiling()
        self._say(f"recorded {len(self.bounds)} profiled steps (ended by {self.step_source or 'rec.step()'})")
        if self.stop_script:
            raise StopRecording()
        return False

    def _stop_profiling(self):
        if not self._profiling:
            return
        self._profiling = False
        if self._open_step is not None:  # a step cut short by the end of the script: not a step
            self._open_step = None
            self._end_phase("train:profiled", at=self._last_end if self.bounds else None)
        self.backend.synchronize()
        self.backend.stop_profiler()

    # --- output --------------------------------------------------------------------------------------
    def finish(self, failed=False):
        """Stops profiling and sampling and writes the recording. With failed (the training raised), stops
        everything and writes nothing more."""
        if not self.started or self.finished:
            return
        self.finished = True
        for remove in reversed(self._removers):
            remove()
        self._removers = []
        try:
            self._stop_profiling()
            if not failed:
                self._end_phase("train:after_profiled" if self.bounds else "train:until_end")
                time.sleep(self.idle_s)
                self._end_phase("idle:end")
                self._device = nvml_io.device_info(self._nv, self._h, *self.backend.device_info_args())
        finally:
            try:
                self._sampler.stop()
                if self._host is not None:
                    self._host.stop()
            finally:
                self._nv_shutdown()
        if failed:
            return
        self.lifecycle.close_all()
        if self.lifecycle.phases:
            self.lifecycle.write(os.path.join(self.out_dir, "lifecycle.json"))
        if not self.bounds:
            raise RecorderError(f"the training made {self.steps_seen} step(s); a recording needs warm-up ({self.warmup}) "
                                f"+ at least 1 profiled step: use a longer run, --steps with fewer warm-up steps, or "
                                f"--step-on forward for a loop without an optimizer (steps counted: "
                                f"{self.step_source or 'none marked'})")
        if not self.done:
            self._say(f"the training ended after {len(self.bounds)} of {self.profiled} profiled steps: keeping those")
        self._write()

    def _nv_shutdown(self):
        try:
            self._nv.nvmlShutdown()
        except Exception:
            pass

    def _energy_summary(self):
        tel = os.path.join(self.out_dir, "telemetry.csv")
        idle = next(((p["t0_ns"], p["t1_ns"]) for p in self.phases if p["name"] == "idle:start"), None)
        return energy_io.summarize(self.bounds, energy_io.read_counter(tel), idle)

    def _write(self):
        """Writes trace.json.gz and run.json, then checks the trace against the steps: RecorderError (one
        line) when they disagree, the files kept for a look."""
        raw = os.path.join(self.out_dir, "trace.json")
        self.backend.export_trace(raw)
        mismatch = None
        try:
            self.trace_check = finish_trace(raw, self.bounds, self._say)
        except TraceMismatch as e:
            mismatch = str(e)
        n = len(self.bounds)
        s = (self.bounds[-1]["t1_ns"] - self.bounds[0]["t0_ns"]) / 1e9
        self.energy = self._energy_summary()
        j = self.energy["window_energy_j"]
        run = {"profiled_steps": self.bounds, "profiled_s": s, "profiled_energy_j": j,
               "s_per_step": s / n, "j_per_step": j / n if j is not None else None,
               "energy_counter": self.energy, "step_source": self.step_source or "Recorder.step()",
               "warmup_steps": self.warmup, "steps_seen": self.steps_seen, "sample_ms": self.sample_ms,
               "peak_mem": self.backend.peak_memory(), "recorder": self.command or "dvfs_sim.record.Recorder"}
        if self.trace_check is not None:
            run["trace_check"] = self.trace_check
        doc = {"device": self._device, "phases": self.phases, "run": run}
        with open(os.path.join(self.out_dir, "run.json"), "w") as f:
            json.dump(doc, f, indent=1)
        if mismatch:
            raise RecorderError(f"the recording in {self.out_dir} is not usable: {mismatch}")
        k = self.trace_check["kernels_per_step"]
        kernels = (f", {min(k)}-{max(k)} GPU kernels per step" if self.trace_check["device"] else ", no GPU activity (CPU run)")
        self._say(f"wrote {self.out_dir}: {n} steps checked against the trace{kernels}; "
                  + energy_io.describe(self.energy, n))
