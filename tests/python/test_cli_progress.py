"""Long CLI commands (calibrate, compare) show progress on stderr only when it is a terminal."""
import os
import pty
import subprocess
from repo_paths import BIN, ROOT

CALIBRATE = ["calibrate", "--recording", os.path.join(ROOT, "traces", "recordings", "h200-gpt3xl"),
             "--base", os.path.join(ROOT, "models", "calibration", "h200.base.json")]


def run_on_a_terminal(args, env):
    """(exit code, stdout, what the command wrote to its terminal stderr)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([BIN, *args], stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the command closed the terminal
            break
        if not chunk:
            break
        err += chunk
    out = p.communicate(timeout=120)[0]
    os.close(master)
    return p.returncode, out.decode(), err.decode()


def test_calibrate_draws_one_progress_line_on_a_terminal(tmp_path):
    env = dict(os.environ, DVFS_SIM_PROGRESS_DELAY_S="0")
    env.pop("DVFS_SIM_PROGRESS", None)
    rc, out, err = run_on_a_terminal([*CALIBRATE, "-o", tmp_path / "h200.json"], env)
    assert rc == 0, err
    assert err.startswith("\rcalibrate from ") and "4/4 (100 %), done in " in err and err.endswith("\r\n")
    assert err.count("\n") == 1  # redrawn in place
    assert "\r" not in out  # results on stdout stay clean


def test_no_progress_when_stderr_is_not_a_terminal_or_it_is_turned_off(tmp_path):
    env = dict(os.environ, DVFS_SIM_PROGRESS_DELAY_S="0")
    r = subprocess.run([BIN, *CALIBRATE, "-o", tmp_path / "a.json"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and r.stderr == ""
    rc, _, err = run_on_a_terminal([*CALIBRATE, "-o", tmp_path / "b.json"], dict(env, DVFS_SIM_PROGRESS="0"))
    assert rc == 0 and err == ""


def test_compare_counts_one_unit_per_replayed_policy_on_a_terminal(tmp_path):
    env = dict(os.environ, DVFS_SIM_PROGRESS_DELAY_S="0")
    env.pop("DVFS_SIM_PROGRESS", None)
    rc, out, err = run_on_a_terminal(["compare", os.path.join(ROOT, "scenarios", "kernel-dvfs", "h200.json"),
                                      "--policies", "max,static-best", "--budget", "1", "-o", tmp_path], env)
    assert rc == 0, err
    assert "compare h200: 3/3 (100 %), done in " in err and "static-best" in out
