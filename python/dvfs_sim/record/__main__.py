"""python3 -m dvfs_sim.record -o DIR [--steps WARMUP:PROFILED] [--step-on auto|optimizer|forward] [--gpu INDEX]
                            [--sample-ms MS] -- python3 train.py ARGS...

Runs the training script in this process (as `python3 train.py ARGS...` would, sys.argv set) and marks its
steps with global PyTorch hooks (the script is unchanged): --step-on optimizer, a step ends after every
optimizer step (gradient accumulation included: one step per optimizer step); forward, after every outermost
module call (an inference loop); auto (default), optimizer steps, or, in a script that runs its model with
gradients off (no_grad / inference_mode) before any optimizer steps, each such forward. A loop that steps
several optimizers per training step should use dvfs_sim.record.Recorder and rec.step() instead. Profiles the
PROFILED steps after WARMUP with Kineto, samples NVML in a separate process, writes DIR/trace.json.gz,
DIR/telemetry.csv and DIR/run.json (docs/recording-format.md) and checks the trace against run.json. The
script is stopped once the profiled steps are recorded (--run-to-end lets it finish). NVML is only read: no
card setting is changed. Exit code 2 with a one-line message when no usable recording can be made (no GPU, no
NVML, no PyTorch, too few steps, a trace that disagrees with its steps).
"""
import argparse
import os
import runpy
import shlex
import sys

from .recorder import Recorder, RecorderError, StopRecording


def _fail(msg):
    print(f"dvfs_sim.record: {msg}", file=sys.stderr)
    sys.exit(2)


def _steps(text):
    try:
        w, p = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WARMUP:PROFILED (two integers), got {text!r}") from None
    if w < 1 or p < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 warm-up and 1 profiled step, got {text!r}")
    return w, p


def parse_command(cmd):
    """`python3 train.py ARGS` / `train.py ARGS` / `python3 -m pkg.mod ARGS` -> ("path"|"module", target, argv)."""
    if cmd and os.path.basename(cmd[0]).startswith("python"):
        cmd = cmd[1:]
    if not cmd:
        raise RecorderError("no training command after --: expected e.g. -- python3 train.py ARGS")
    if cmd[0] == "-m":
        if len(cmd) < 2:
            raise RecorderError("-m needs a module name")
        return "module", cmd[1], [cmd[1], *cmd[2:]]
    if cmd[0].startswith("-"):
        raise RecorderError(f"{cmd[0]}: interpreter options are not supported (the script runs in this interpreter)")
    if not os.path.isfile(cmd[0]):
        raise RecorderError(f"{cmd[0]}: no such training script")
    return "path", cmd[0], list(cmd)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        _fail("expected the training command after --, e.g. -o DIR -- python3 train.py ARGS")
    cut = argv.index("--")
    p = argparse.ArgumentParser(prog="python3 -m dvfs_sim.record", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--out", required=True, help="recording directory (created)")
    p.add_argument("--steps", type=_steps, default=(3, 6), metavar="WARMUP:PROFILED", help="default 3:6")
    p.add_argument("--step-on", choices=Recorder.STEP_SOURCES, default="auto",
                   help="what ends a step: optimizer steps, outermost forwards, or auto (default; see above)")
    p.add_argument("--gpu", type=int, default=0, help="NVML index of the GPU (it becomes the script's cuda:0)")
    p.add_argument("--sample-ms", type=float, default=5.0, help="NVML sampling period (default 5 ms)")
    p.add_argument("--idle-s", type=float, default=1.0, help="idle time measured before and after (default 1 s)")
    p.add_argument("--phase-ranges", action="store_true",
                   help="add forward/backward/optimizer ranges (for scripts without record_function ranges)")
    p.add_argument("--host-sample-ms", type=float, default=50.0,
                   help="period of the host counters in host.csv (RAPL, CPU, disk, network, process I/O); 0 = none")
    p.add_argument("--lifecycle", action="store_true",
                   help="mark DataLoader waits, validation and checkpoint saves in lifecycle.json (implies --run-to-end)")
    p.add_argument("--run-to-end", action="store_true", help="let the script finish after the profiled steps")
    p.add_argument("--nvml-module", default="pynvml", help=argparse.SUPPRESS)  # tests inject a fake NVML
    a = p.parse_args(argv[:cut])
    try:
        kind, target, script_argv = parse_command(argv[cut + 1:])
    except RecorderError as e:
        _fail(str(e))

    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        # One process per GPU under torchrun: each rank records its own GPU into DIR/rank<RANK>/, the layout
        # of a multi-GPU recording; the script picks cuda:LOCAL_RANK itself, in PCI order like NVML.
        a.out = os.path.join(a.out, f"rank{int(os.environ['RANK'])}")
        if "--gpu" not in argv[:cut]:
            a.gpu = int(os.environ.get("LOCAL_RANK", 0))
        os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    elif "CUDA_VISIBLE_DEVICES" not in os.environ:
        # The script's cuda:0 is the GPU NVML samples (CUDA's own order need not be NVML's).
        os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
        os.environ["CUDA_VISIBLE_DEVICES"] = str(a.gpu)
    command = "python3 -m dvfs_sim.record " + shlex.join(argv)
    rec = Recorder(a.out, warmup=a.steps[0], profiled=a.steps[1], gpu=a.gpu, sample_ms=a.sample_ms, idle_s=a.idle_s,
                   nvml_module=a.nvml_module, command=command, stop_script=not (a.run_to_end or a.lifecycle),
                   host_sample_ms=a.host_sample_ms or None)
    try:
        rec.start()
        if a.phase_ranges:
            rec.install_phase_ranges()
        rec.install_step_hook(a.step_on)
        if a.lifecycle:
            rec.install_lifecycle_hooks()
    except Exception as e:  # a RecorderError, or e.g. TorchMissing from an old PyTorch
        rec.finish(failed=True)
        _fail(str(e))

    saved_argv, saved_path0 = sys.argv, sys.path[0]
    sys.argv = script_argv
    try:
        if kind == "path":
            sys.path[0] = os.path.dirname(os.path.abspath(target))
            runpy.run_path(target, run_name="__main__")
        else:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
    except StopRecording:
        pass
    except SystemExit as e:
        if e.code not in (0, None):
            rec.finish(failed=True)
            raise
    except BaseException:
        rec.finish(failed=True)
        raise
    finally:
        sys.argv, sys.path[0] = saved_argv, saved_path0
    try:
        rec.finish()
    except RecorderError as e:
        _fail(str(e))
    print(os.path.abspath(a.out))


if __name__ == "__main__":
    main()
