"""What the recorder needs from PyTorch, in one place: GPU synchronisation, the Kineto profiler, named
ranges, and global hooks that see every optimizer step (and, optionally, forward/backward passes)
without changing the user's script. Tests replace this object with a double."""
import contextlib


class TorchMissing(RuntimeError):
    pass


class TorchBackend:
    def __init__(self):
        try:
            import torch
        except ImportError:
            raise TorchMissing("PyTorch is not installed: the recorder profiles PyTorch training") from None
        self.torch = torch
        self._prof = None

    # --- GPU ---------------------------------------------------------------------------------------
    def cuda(self):
        return self.torch.cuda.is_available()

    def synchronize(self):
        """Waits for the GPU, so that a host timestamp bounds the device work before it (a no-op before the
        script has touched CUDA: it must not initialise CUDA itself)."""
        if self.cuda() and self.torch.cuda.is_initialized():
            self.torch.cuda.synchronize()

    def device_info_args(self):
        """(torch, CUDA device index) for nvml.device_info; (None, None) without CUDA."""
        return (self.torch, self.torch.cuda.current_device()) if self.cuda() else (None, None)

    def peak_memory(self):
        return self.torch.cuda.max_memory_allocated() if self.cuda() and self.torch.cuda.is_initialized() else None

    # --- profiler ----------------------------------------------------------------------------------
    def start_profiler(self):
        import inspect
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.cuda() else [])
        # record_shapes: each operator's input shapes and dtypes (`Input Dims`, `Input type`), from which
        # dvfs-sim estimates every kernel's FLOPs and bytes (traces/src/kernel_activity).
        kwargs = {"activities": acts, "record_shapes": True}
        if "acc_events" in inspect.signature(profile.__init__).parameters:
            kwargs["acc_events"] = True  # one cycle (no schedule); keeps events should a PyTorch cycle anyway
        self._prof = profile(**kwargs)
        self._prof.__enter__()

    def stop_profiler(self):
        if self._prof is not None:
            self._prof.__exit__(None, None, None)

    def export_trace(self, path):
        self._prof.export_chrome_trace(path)

    def open_range(self, name):
        r = self.torch.autograd.profiler.record_function(name)
        r.__enter__()
        return r

    def close_range(self, r):
        r.__exit__(None, None, None)

    def mark(self, name):
        """A zero-length range `name` in the trace: nests wherever it is emitted."""
        with self.torch.autograd.profiler.record_function(name):
            pass

    # --- hooks -------------------------------------------------------------------------------------
    def _optimizer_hooks(self):
        """(register pre hook, register post hook) for every optimizer, or TorchMissing."""
        import torch.optim.optimizer as optimizer_module
        pre = getattr(optimizer_module, "register_optimizer_step_pre_hook", None)
        post = getattr(optimizer_module, "register_optimizer_step_post_hook", None)
        if pre is None or post is None:
            raise TorchMissing(f"PyTorch {self.torch.__version__} has no global optimizer step hooks (2.0 or later has): "
                               "--phase-ranges needs them; leave it out")
        return pre, post

    def on_optimizer_step(self, callback):
        """Calls callback() after every optimizer step of any optimizer; returns the remover. PyTorch 2.0+:
        its global post hook; older (Debian's 1.13): Optimizer._optimizer_step_code, the no-op every
        optimizer's profiled step() calls after stepping."""
        import torch.optim.optimizer as optimizer_module
        post = getattr(optimizer_module, "register_optimizer_step_post_hook", None)
        if post is not None:
            return post(lambda optimizer, args, kwargs: callback()).remove
        cls = optimizer_module.Optimizer
        if not hasattr(cls, "_optimizer_step_code"):
            raise TorchMissing(f"PyTorch {self.torch.__version__} has neither global optimizer step hooks (2.0+) nor "
                               "Optimizer._optimizer_step_code: mark steps with the Recorder API (rec.step())")
        original = cls._optimizer_step_code

        def step_code(optimizer):
            original(optimizer)
            callback()
        cls._optimizer_step_code = step_code

        def remove():
            cls._optimizer_step_code = original
        return remove

    def on_forward(self, callback):
        """Calls callback(grad_enabled) after every outermost module call (a model's forward; the modules it
        calls inside are not counted); returns the remover."""
        mod = self.torch.nn.modules.module
        state = {"depth": 0}

        def pre(module, args):
            state["depth"] += 1

        def post(module, args, out):
            state["depth"] -= 1
            if state["depth"] == 0:
                callback(self.torch.is_grad_enabled())
        handles = [mod.register_module_forward_pre_hook(pre), mod.register_module_forward_hook(post)]

        def remove():
            for h in handles:
                h.remove()
        return remove

    def phase_ranges(self, active):
        """`forward` over each outermost module call, `backward` over each autograd.backward and `optimizer`
        over each optimizer step, while active() is true; returns the remover. For scripts that have no
        record_function ranges of their own."""
        register_pre_step, register_post_step = self._optimizer_hooks()
        torch = self.torch
        mod = torch.nn.modules.module
        state = {"depth": 0, "forward": None, "optimizer": None}

        def pre_forward(module, args):
            state["depth"] += 1
            if state["depth"] == 1 and active():
                state["forward"] = self.open_range("forward")

        def post_forward(module, args, out):
            state["depth"] -= 1
            if state["depth"] == 0 and state["forward"] is not None:
                self.close_range(state["forward"])
                state["forward"] = None

        def pre_step(optimizer, args, kwargs):
            if active():
                state["optimizer"] = self.open_range("optimizer")

        def post_step(optimizer, args, kwargs):
            if state["optimizer"] is not None:
                self.close_range(state["optimizer"])
                state["optimizer"] = None

        original_backward = torch.autograd.backward

        def backward(*args, **kwargs):
            ctx = torch.autograd.profiler.record_function("backward") if active() else contextlib.nullcontext()
            with ctx:
                return original_backward(*args, **kwargs)

        handles = [mod.register_module_forward_pre_hook(pre_forward), mod.register_module_forward_hook(post_forward),
                   register_pre_step(pre_step), register_post_step(post_step)]
        torch.autograd.backward = backward

        def remove():
            for h in handles:
                h.remove()
            torch.autograd.backward = original_backward
        return remove
