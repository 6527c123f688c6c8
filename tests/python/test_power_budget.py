"""Power-budget control from Python: the gym-style environment over the C++ session, policy files shared
with the C++ `rl` controller, and a short PPO run (python3-torch)."""
import json
import subprocess

import numpy as np
import pytest

import dvfs_sim
from dvfs_sim import control
from dvfs_sim.rl import PowerBudgetEnv
from dvfs_sim.rl.policy_file import PolicyFile, write_policy
from repo_paths import BIN, ROOT


def tiny(duration_s=20, **controller):
    """Two DP ranks of a small GRPO job under one budget."""
    job = {"name": "tiny", "model": "qwen2.5-7b", "dp": 2, "prompts_per_step": 8, "group_size": 4, "concurrency": 16,
           "concurrency_range": [4, 32], "max_response_tokens": 256, "response_median_tokens": 80, "step_host_s": 0.5}
    return {"name": "tiny", "gpu": "h200",
            "control": {"duration_s": duration_s, "jobs": [job],
                        "budgets": [{"name": "all", "budget_frac_of_tdp": 0.8}],
                        "controller": {"name": "uncontrolled", "actions": ["power_target", "concurrency"], **controller},
                        "reward": {"tokens_scale": 20000}}}


def random_policy(path, seed=0):
    rng = np.random.default_rng(seed)
    obs, act = control.observation_names(), ["power_target", "concurrency"]
    layers = [(rng.normal(0, 0.5, (8, len(obs))), rng.normal(0, 0.1, 8), "tanh"), (rng.normal(0, 0.5, (2, 8)), np.zeros(2), "tanh")]
    write_policy(path, layers, np.full(len(obs), 0.5), np.ones(len(obs)), obs, act, {"target_span": 0.25, "headroom_w": 30},
                 {"what": "random weights (test)"})
    return path


def test_the_environment_steps_one_control_interval_at_a_time():
    with PowerBudgetEnv(tiny()) as env:
        assert env.observation_size == 10 and env.action_size == 2
        assert env.observation_names[0] == "measured_over_budget"
        obs, info = env.reset(seed=3)
        assert obs.shape == (10,) and info["seed"] == 3
        steps, rewards, t = 0, [], []
        while True:
            obs, r, terminated, truncated, info = env.step(env.action_space_sample())
            steps += 1
            rewards.append(r)
            t.append(info["t_s"])
            assert not terminated
            if truncated:
                break
        assert steps == 40 and t[0] == 0.5 and t[-1] == 20.0
        assert {"measured_w", "budget_w", "violated", "generated_tokens"} <= set(info)
        s = env.summary(series=True)
        assert s["duration_s"] == 20 and s["generated_tokens"] > 0 and len(s["series"]["t_s"]) == 40
        assert s["reward"] == pytest.approx(sum(rewards))
        with pytest.raises(dvfs_sim.InputError, match="action"):
            env.reset()
            env.step([0.0])


def test_a_policy_file_acts_the_same_in_python_and_in_the_cpp_controller(tmp_path):
    path = random_policy(str(tmp_path / "p.json"))
    pol = PolicyFile(path, observation=control.observation_names(), action=["power_target", "concurrency"])
    with PowerBudgetEnv(tiny()) as env:
        obs, _ = env.reset(seed=5)
        done = False
        while not done:
            obs, _, _, done, _ = env.step(pol.act(obs))
        mine = env.summary()
    cpp = control.run(tiny(), controller="rl", policy_file=path, seed=5)
    assert cpp["controller"] == "rl"
    assert mine["generated_tokens"] == cpp["generated_tokens"]
    assert mine["energy_j"] == pytest.approx(cpp["energy_j"], rel=1e-9)
    assert mine["budgets"][0]["windows"][0]["violation_rate"] == cpp["budgets"][0]["windows"][0]["violation_rate"]


def test_a_policy_file_for_another_observation_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "other.json"
    write_policy(path, [(np.ones((2, 3)), np.zeros(2), "tanh")], np.zeros(3), np.ones(3), ["a", "b", "c"],
                 ["power_target", "concurrency"], {}, {})
    with pytest.raises(dvfs_sim.InputError, match="other.json.*observation"):
        control.run(tiny(), controller="rl", policy_file=str(path))
    with pytest.raises(dvfs_sim.InputError, match="observation"):
        PolicyFile(path, observation=control.observation_names())
    with pytest.raises(dvfs_sim.InputError, match="control.controller.name"):
        control.run(tiny(), controller="clairvoyant")


def test_a_duration_given_beside_the_scenario_is_checked_as_the_files_own():
    # a simulated year through the Python argument ran for hours before the limit applied to it
    with pytest.raises(dvfs_sim.InputError, match="duration_s: expected at most 86400 s"):
        control.run(tiny(), duration_s=3e7)
    with pytest.raises(dvfs_sim.InputError, match="duration_s: expected at least one control interval"):
        control.run(tiny(), duration_s=0.1)
    with pytest.raises(dvfs_sim.InputError, match="fleet-mixed.json: duration_s: expected at most 86400 s"):
        control.fleet(f"{ROOT}/scenarios/power-budget/fleet-mixed.json", duration_s=1e12)
    # -1, nan and 0 were silently the scenario's duration, a seed of -1 the scenario's seed
    for bad in (-1, float("nan"), 0, "20"):
        with pytest.raises(dvfs_sim.InputError, match="duration_s: expected seconds > 0"):
            control.run(tiny(), duration_s=bad)
    for bad in (-1, 1.5, True):
        with pytest.raises(dvfs_sim.InputError, match="seed: expected an integer >= 0"):
            control.run(tiny(), seed=bad)


def test_a_live_environment_blocks_other_simulations_until_closed():
    env = PowerBudgetEnv(tiny())
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match="already live"):
        control.run(tiny(), controller="uncontrolled")
    env.close()
    assert control.run(tiny(), controller="static-cap")["controller"] == "static-cap"


def test_the_static_cap_holds_the_budget_and_compare_reports_it_against_uncontrolled():
    df = control.compare(tiny(40), ["uncontrolled", "static-cap", "pid"], seed=1)
    assert list(df["controller"]) == ["uncontrolled", "static-cap", "pid"]
    unc, cap = df.iloc[0], df.iloc[1]
    assert unc["violations_interval"] > 0.1 and cap["violations_interval"] == 0
    assert cap["energy_mj"] < unc["energy_mj"]
    assert df.loc[1, "violations_vs_uncontrolled"] == pytest.approx(-1.0)


def test_compare_on_training_jobs_judges_throughput_by_trained_tokens_never_nan():
    sc = tiny(40)
    sc["control"]["jobs"][0]["kind"] = "training"
    df = control.compare(sc, ["uncontrolled", "static-cap"], seed=1)
    assert (df["generated_tokens"] == 0).all() and (df["trained_tokens"] > 0).all()
    assert list(df["throughput_basis"]) == ["trained", "trained"]
    assert df.loc[0, "throughput_vs_uncontrolled"] == pytest.approx(1.0)
    assert df.loc[1, "throughput_vs_uncontrolled"] == pytest.approx(df.loc[1, "trained_tokens"] / df.loc[0, "trained_tokens"])
    # tokens_per_s and tokens_per_mwh are in trained tokens too (they were 0 on generated tokens)
    assert (df["tokens_per_s"] > 0).all() and (df["tokens_per_mwh"] > 0).all()
    assert df.loc[1, "tokens_per_s"] / df.loc[0, "tokens_per_s"] == pytest.approx(df.loc[1, "throughput_vs_uncontrolled"])
    r = control.run(sc, controller="uncontrolled", seed=1)
    assert df.loc[0, "tokens_per_s"] == pytest.approx(r["trained_tokens"] / r["duration_s"])


def test_compare_gives_the_rows_of_the_clis_comparison_table(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny(40)))
    cli = json.loads(subprocess.run([BIN, "control", str(path),
                                     "--controller", "uncontrolled,static-cap", "--seed", "1", "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    df = control.compare(str(path), ["uncontrolled", "static-cap"], seed=1)
    for i, row in enumerate(cli["rows"]):
        assert df.loc[i, "controller"] == row["controller"]
        assert df.loc[i, "energy_mj"] == pytest.approx(row["energy_j"] / 1e6)
        assert df.loc[i, "tokens_per_s"] == pytest.approx(row["tokens_per_s"])
        assert df.loc[i, "tokens_per_mwh_vs_uncontrolled"] == pytest.approx(row["tokens_per_mwh_vs_uncontrolled"])
        assert df.loc[i, "violations_interval"] == pytest.approx(row["violation_rate_interval"])


@pytest.mark.parametrize("controllers, message", [("pid", "expected a list of controller names"), ([], "at least one"),
                                                  (["pid", 3], "controllers: expected a string"), (["nosuch"], "nosuch")])
def test_compare_refuses_controllers_that_are_not_a_list_of_known_names(controllers, message):
    with pytest.raises(dvfs_sim.InputError, match=message):
        control.compare(tiny(), controllers)


def test_an_output_folder_for_a_study_that_writes_no_files_is_refused(tmp_path):
    with pytest.raises(dvfs_sim.InputError, match="a control study prints its result and writes no files"):
        dvfs_sim.run(tiny(), output_dir=str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_ppo_trains_and_writes_a_policy_the_controller_loads(tmp_path):
    torch = pytest.importorskip("torch")
    from dvfs_sim.rl.ppo import train
    with PowerBudgetEnv(tiny(10)) as env:
        agent = train(env, 256, seed=0, rollout=128, log=None)
        path = str(tmp_path / "ppo.json")
        write_policy(path, agent.layers(), agent.norm.mean, agent.norm.std, env.observation_names, env.action_names, env.action_spec,
                     {"what": "test run", "torch": torch.__version__})
    doc = json.load(open(path))
    assert [l["activation"] for l in doc["layers"]] == ["tanh", "tanh", "tanh"]
    r = control.run(tiny(10), controller="rl", policy_file=path, seed=2)
    assert r["controller"] == "rl" and r["duration_s"] == 10
