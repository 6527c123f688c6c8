"""Record a training run on an NVIDIA GPU in the layout `dvfs-sim validate` reads.

    python3 -m dvfs_sim.record -o DIR [--steps 3:6] [--gpu 0] [--sample-ms 5] -- python3 train.py ARGS
    with dvfs_sim.record.Recorder(DIR, warmup=3, profiled=6) as rec: ... rec.step() ...

Pure Python (PyTorch and nvidia-ml-py on the GPU machine); the compiled core is not needed. See
recorder.py for the sequence and nvml.py for what is read (never set).
"""
from .recorder import Recorder, RecorderError, StopRecording

__all__ = ["Recorder", "RecorderError", "StopRecording"]
