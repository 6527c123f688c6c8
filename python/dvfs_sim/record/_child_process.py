"""A sampler child process and its driver: the recording process starts it, waits for its "ready" line, and ends it by
writing "stop" (or by closing its input). Shared by the NVML sampler (nvml.Sampler) and the host sampler
(host.HostSampler)."""
import os
import subprocess
import sys
import threading


class ChildProcess:
    """Runs `python -m MODULE ARGS...` with this package importable; start() returns the child's first line (or None
    when it said nothing within the timeout); stop() returns its exit code."""

    def __init__(self, module, args):
        self.module, self.args, self.proc = module, [str(a) for a in args], None

    @property
    def pid(self):
        """The child's process id while it runs (the host sampler leaves it out of the process tree it counts)."""
        return self.proc.pid if self.proc is not None else None

    def start(self, timeout_s):
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in [package_root, env.get("PYTHONPATH", "")] if p)
        self.proc = subprocess.Popen([sys.executable, "-m", self.module] + self.args,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        first = []
        reader = threading.Thread(target=lambda: first.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout_s)
        line = first[0] if first else None
        if line is None or line.strip() != "ready":
            self.proc.kill()
        return line

    def stop(self, timeout_s):
        """None when it was never started (or already stopped), else its exit code."""
        if self.proc is None:
            return None
        try:
            self.proc.stdin.write("stop\n")
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        rc = self.proc.wait(timeout_s)
        self.proc = None
        return rc


def stop_on_input():
    """In the child: an event set on "stop" or at the end of input (the recording process is gone)."""
    stop = threading.Event()

    def wait_for_stop():
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stop.set()
    threading.Thread(target=wait_for_stop, daemon=True).start()
    return stop
