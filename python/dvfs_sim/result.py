"""What one simulation gives back, as Python objects: the summary dict, tables as DataFrames and the
timeline as numpy arrays. pandas is imported only when a table is asked for."""

TIMELINE_COLUMNS = ("gpu", "t_s", "power_w", "sm_mhz", "mem_mhz", "energy_j")


class Result:
    """summary: the summary dict (what summary.json holds); timeline: dict of numpy arrays
    (gpu, t_s, power_w, sm_mhz, mem_mhz, energy_j; each the mean over one interval, energy
    cumulative; timeline.csv holds the same) or None when not asked for or for synthesised runs."""

    def __init__(self, summary, timeline=None):
        self.summary = summary
        self.timeline = timeline

    @property
    def synthetic(self):
        """True for a synthesised multi-GPU run (its summary has stages, not steps)."""
        return "stages" in self.summary and "steps" not in self.summary

    @property
    def totals(self):
        return self.summary.get("totals", {})

    @property
    def steps(self):
        """One row per replayed step and GPU: rank, index, label, start_s, time_s, energy_j, mean_power_w,
        mean_sm_mhz, busy_s, kernels (empty for synthesised runs)."""
        import pandas as pd
        return pd.DataFrame(self.summary.get("steps", []))

    @property
    def gpus(self):
        """One row per GPU: rank, time_s, energy_j, mean_power_w, mean_sm_mhz, busy_s, kernel_events,
        clock_switches (requests), switches_applied, switch_latency_s, switch_energy_j, policy_ticks, ... (empty for
        synthesised runs)."""
        import pandas as pd
        return pd.DataFrame(self.summary.get("per_gpu", []))

    @property
    def stages(self):
        """Synthesised runs: one row per pipeline stage (waits, all-reduce, energy per GPU)."""
        import pandas as pd
        return pd.DataFrame(self.summary.get("stages", []))

    def timeline_frame(self):
        """The timeline as a DataFrame (one row per interval and GPU)."""
        import pandas as pd
        if self.timeline is None:
            raise ValueError("this result has no timeline: run it with timeline=True (replayed traces only)")
        return pd.DataFrame({k: self.timeline[k] for k in TIMELINE_COLUMNS})

    def __getitem__(self, key):
        return self.summary[key]

    def __repr__(self):
        t = self.totals
        if t:
            return (f"<Result {self.summary.get('scenario')}: policy {self.summary.get('policy')}, "
                    f"{t.get('time_s', 0):.4f} s, {t.get('energy_j', 0):.1f} J>")
        return f"<Result {self.summary.get('model', '')} synthetic: {self.summary.get('iteration_s', 0):.4f} s per iteration>"
