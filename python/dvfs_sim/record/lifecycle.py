"""Phase markers of a whole training job (issue 20): where its time goes between staging, data loading,
training steps, validation and checkpoints. Written to lifecycle.json beside telemetry.csv and host.csv;
per-phase time and energy come from those counters over the marked intervals (docs/recording-format.md
"lifecycle.json"; dvfs_sim.lifecycle_analysis).

    log = PhaseLog()
    with log.phase("staging", kind="staging"):
        copy_dataset()
    remove = log.install_auto(torch)      # DataLoader waits, validation, checkpoint saves
    ...
    log.write("out/lifecycle.json")

Automatic markers (install_auto):
- `data_wait`: every `next()` on a DataLoader iterator (the time the loop waited for a batch);
- `validation`: from a module's outermost `.eval()` / `.train(False)` to its next `.train()`;
- `checkpoint`: every `torch.save` call.
A marker that opens inside another phase nests (depth + 1); the analysis gives each instant to the
innermost phase open then (exclusive time), so that phases sum to the job.
"""
import contextlib
import json
import time

KINDS = ("staging", "data_wait", "train", "validation", "checkpoint", "setup", "idle", "other")


class PhaseLog:
    def __init__(self, clock=time.time_ns):
        self.clock = clock
        self.phases = []   # {name, kind, t0_ns, t1_ns, depth}
        self._open = []    # indices into phases of the open ones
        self.counts = {}

    def begin(self, name, kind="other"):
        if kind not in KINDS:
            raise ValueError(f"phase kind: expected one of {', '.join(KINDS)}, got {kind!r}")
        self.phases.append({"name": name, "kind": kind, "t0_ns": self.clock(), "t1_ns": None, "depth": len(self._open)})
        self._open.append(len(self.phases) - 1)
        return len(self.phases) - 1

    def end(self, index=None):
        if not self._open:
            return
        i = self._open.pop() if index is None or index == self._open[-1] else index
        if i in self._open:
            self._open.remove(i)
        self.phases[i]["t1_ns"] = self.clock()
        k = self.phases[i]["kind"]
        self.counts[k] = self.counts.get(k, 0) + 1

    @contextlib.contextmanager
    def phase(self, name, kind="other"):
        i = self.begin(name, kind)
        try:
            yield
        finally:
            self.end(i)

    def open_kinds(self):
        return [self.phases[i]["kind"] for i in self._open]

    def close_all(self):
        while self._open:
            self.end()

    # --- automatic markers ---------------------------------------------------------------------------
    def install_auto(self, torch, data_wait=True, validation=True, checkpoint=True):
        """Global hooks (the script unchanged); returns the remover."""
        removers = []
        if data_wait:
            removers.append(self._hook_dataloader(torch))
        if validation:
            removers.append(self._hook_validation(torch))
        if checkpoint:
            removers.append(self._hook_save(torch))

        def remove():
            for r in reversed(removers):
                r()
        return remove

    def _wrap_in_phase(self, owner, attr, kind):
        """Replaces owner.attr with a wrapper that marks a phase of `kind` around each call; returns the undo."""
        original = getattr(owner, attr)
        log = self

        def wrapped(*args, **kwargs):
            i = log.begin(kind, kind)
            try:
                return original(*args, **kwargs)
            finally:
                log.end(i)
        setattr(owner, attr, wrapped)
        return lambda: setattr(owner, attr, original)

    def _hook_dataloader(self, torch):
        return self._wrap_in_phase(torch.utils.data.dataloader._BaseDataLoaderIter, "__next__", "data_wait")

    def _hook_validation(self, torch):
        Module = torch.nn.Module
        original = Module.train
        log = self
        state = {"depth": 0, "open": None}

        def train(module, mode=True):
            state["depth"] += 1
            try:
                return original(module, mode)
            finally:
                state["depth"] -= 1
                if state["depth"] == 0 and any(True for _ in module.parameters()):
                    if not mode and state["open"] is None:
                        state["open"] = log.begin("validation", "validation")
                    elif mode and state["open"] is not None:
                        log.end(state["open"])
                        state["open"] = None
        Module.train = train

        def remove():
            Module.train = original
            if state["open"] is not None:
                log.end(state["open"])
        return remove

    def _hook_save(self, torch):
        return self._wrap_in_phase(torch, "save", "checkpoint")

    # --- output --------------------------------------------------------------------------------------
    def to_json(self):
        return {"format": "dvfs-sim lifecycle phases 1", "clock": "epoch ns (time.time_ns), as telemetry.csv and host.csv",
                "kinds": list(KINDS), "counts": self.counts,
                "phases": [p for p in self.phases if p["t1_ns"] is not None]}

    def write(self, path):
        with open(path, "w") as f:
            json.dump(self.to_json(), f, separators=(",", ":"))
