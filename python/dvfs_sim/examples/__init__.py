"""Example workloads (run them directly or under `python3 -m dvfs_sim.record`)."""
