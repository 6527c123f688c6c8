"""Train a PPO power-budget controller on a scenario and write its policy file.

    python3 -m dvfs_sim.rl.train scenarios/power-budget/grpo-7b-16gpu.json -o models/controllers/grpo-7b-16gpu-ppo.json \\
        --steps 60000 --seed 0 --eval-seed 7

Training episodes use seeds 1000 + 100000 x seed + k (their own job offsets and response lengths); the
evaluation seed is not among them. After training the policy is written (with its provenance: command,
seed, steps, wall time, versions) and evaluated through the C++ `rl` controller, the same code path as
`dvfs-sim control ... --controller rl`, next to the uncontrolled run and the static cap.
"""
import argparse
import datetime
import os
import platform
import sys
import time


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario")
    p.add_argument("-o", "--output", required=True, help="policy file to write (JSON)")
    p.add_argument("--steps", type=int, default=60000, help="environment steps (control intervals) of training")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--episode-s", type=float, default=None, help="simulated seconds per training episode (default: the scenario's)")
    p.add_argument("--eval-seed", type=int, default=7)
    p.add_argument("--eval-duration", type=float, default=None, help="simulated seconds of the evaluation (default: the scenario's)")
    p.add_argument("--rollout", type=int, default=2048)
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)

    import torch  # python3-torch (Debian)

    from .. import control
    from .env import PowerBudgetEnv
    from .policy_file import write_policy
    from .ppo import train

    if a.eval_seed >= 1000:
        print("train: --eval-seed must be below 1000 (training seeds start at 1000)", file=sys.stderr)
        return 2
    # The scenario may name this very policy file as its controller: train without it.
    env = PowerBudgetEnv(a.scenario, duration_s=a.episode_s, overrides={"control.controller.name": "uncontrolled"})
    episode_steps = int(round((a.episode_s or env.duration_s) / env.interval_s))
    t0 = time.time()
    agent = train(env, a.steps, seed=a.seed, rollout=a.rollout, log=None if a.quiet else print)
    wall = time.time() - t0
    env.close()
    print(f"PPO training: {a.steps} environment steps in {wall:.1f} s wall ({1e3 * wall / a.steps:.2f} ms per step incl. updates)"
          f"   target < 600 s   ratio {600 / wall:.1f}x")
    provenance = {
        "what": "PPO actor (deterministic mean) trained by dvfs_sim.rl.train on the scenario below; dvfs-sim model output",
        "command": "python3 -m dvfs_sim.rl.train " + " ".join(argv if argv is not None else sys.argv[1:]),
        "scenario": os.path.relpath(a.scenario), "training_seed": a.seed, "training_steps": a.steps,
        "training_episode_seeds": f"{1000 + 100000 * a.seed} .. {1000 + 100000 * a.seed + -(-a.steps // episode_steps) - 1}",
        "training_episode_s": episode_steps * env.interval_s,
        "training_wall_s": round(wall, 1), "date": datetime.date.today().isoformat(),
        "versions": {"torch": torch.__version__, "python": platform.python_version()},
        "ppo": {"hidden": [64, 64], "rollout": a.rollout, "epochs": 10, "minibatch": 256, "clip": 0.2, "gamma": 0.99, "lambda": 0.95, "lr": 3e-4},
    }
    write_policy(a.output, agent.layers(), agent.norm.mean, agent.norm.std, env.observation_names, env.action_names, env.action_spec,
                 provenance)
    # Held-out evaluation through the C++ controller.
    rows = {}
    for c in ("uncontrolled", "static-cap", "rl"):
        r = control.run(a.scenario, controller=c, policy_file=os.path.abspath(a.output), seed=a.eval_seed, duration_s=a.eval_duration)
        b = next(x for x in r["budgets"] if x["controlled"])
        rows[c] = {"tokens_per_s": r["tokens_per_s"], "violation_rate": b["windows"][0]["violation_rate"], "tokens_per_mwh": r["tokens_per_mwh"]}
    u, s_, rl = rows["uncontrolled"], rows["static-cap"], rows["rl"]
    evaluation = {"seed": a.eval_seed, "duration_s": a.eval_duration, "rows": rows,
                  "violations_vs_uncontrolled": rl["violation_rate"] / u["violation_rate"] - 1 if u["violation_rate"] > 0 else None,
                  "throughput_vs_uncontrolled": rl["tokens_per_s"] / u["tokens_per_s"],
                  "throughput_vs_static_cap": rl["tokens_per_s"] / s_["tokens_per_s"]}
    provenance["held_out_evaluation"] = evaluation
    write_policy(a.output, agent.layers(), agent.norm.mean, agent.norm.std, env.observation_names, env.action_names, env.action_spec,
                 provenance)
    print(f"held-out seed {a.eval_seed}: violations {100 * rl['violation_rate']:.1f} % vs {100 * u['violation_rate']:.1f} % uncontrolled "
          f"({100 * (evaluation['violations_vs_uncontrolled'] or 0):+.1f} %), throughput {100 * evaluation['throughput_vs_uncontrolled']:.1f} % "
          f"of uncontrolled, {100 * evaluation['throughput_vs_static_cap']:.1f} % of the static cap")
    print(f"wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
