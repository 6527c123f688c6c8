"""Chakra execution traces through the command line (docs/chakra.md): `synth --chakra-out` writes one .et per
simulated GPU and ASTRA-sim's comm-group file; a scenario whose `trace` is their prefix replays them to the synthetic
run's energy and time; bad Chakra input is exit 2 with one line naming the file, the node and the field."""
import json
import os
import subprocess


def fixture(root, prefix, *bad):
    subprocess.run(["/usr/bin/python3", os.path.join(root, "tests", "fixtures", "make_chakra_fixture.py"), "write", str(prefix), *bad],
                   check=True)


def test_synth_chakra_out_replays_as_a_scenario_to_the_same_energy_and_time(cli, tmp_path):
    r = cli("synth", "--tp", "1", "--pp", "2", "--dp", "2", "--microbatches", "2", "--policy", "max",
            "--chakra-out", tmp_path / "et", "--json")
    assert r.returncode == 0, r.stderr
    synth = json.loads(r.stdout)
    assert synth["chakra_export"]["ranks"] == 4
    assert sorted(os.listdir(tmp_path / "et")) == ["comm_group.json"] + [f"trace.{g}.et" for g in range(4)]
    (tmp_path / "s.json").write_text(json.dumps({"name": "et", "trace": "et/trace", "gpu": "h200", "policy": {"name": "max"}}))
    r = cli("run", tmp_path / "s.json", "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    summary = json.load(open(tmp_path / "out" / "summary.json"))
    assert summary["trace"]["schema"] == "chakra"
    assert abs(summary["totals"]["energy_j"] - synth["energy_j"]) <= 1e-6 * synth["energy_j"]
    assert abs(summary["totals"]["time_s"] - synth["iteration_s"]) <= 1e-6 * synth["iteration_s"]


def test_run_chakra_out_of_a_chakra_trace_and_bad_input(cli, root, tmp_path):
    fixture(root, tmp_path / "job")
    (tmp_path / "s.json").write_text(json.dumps({"name": "j", "trace": "job", "gpu": "h200", "policy": {"name": "max"}}))
    r = cli("run", tmp_path / "s.json", "-o", tmp_path / "out", "--chakra-out", tmp_path / "again")
    assert r.returncode == 0, r.stderr
    assert "host (is_cpu_op) nodes" in r.stderr  # the import's notes are not silent
    assert json.load(open(tmp_path / "again" / "comm_group.json")) == {"0": [0, 1]}
    assert json.load(open(tmp_path / "out" / "timing.json"))["chakra_export"]["ranks"] == 2
    fixture(root, tmp_path / "bad", "--bad", "no-comm-size")
    (tmp_path / "b.json").write_text(json.dumps({"name": "b", "trace": "bad", "gpu": "h200", "policy": {"name": "max"}}))
    r = cli("run", tmp_path / "b.json", "-o", tmp_path / "bout")
    assert r.returncode == 2
    err = r.stderr.strip()
    assert "\n" not in err and "bad.1.et" in err and "attr comm_size: missing" in err, err
    # a node name that is not UTF-8: protobuf also logged its own "[libprotobuf ERROR ...]" line on stderr
    fixture(root, tmp_path / "utf", "--bad", "invalid-utf8")
    (tmp_path / "u.json").write_text(json.dumps({"name": "u", "trace": "utf", "gpu": "h200", "policy": {"name": "max"}}))
    r = cli("run", tmp_path / "u.json", "-o", tmp_path / "uout")
    assert r.returncode == 2
    err = r.stderr.strip()
    assert "\n" not in err and "utf.1.et" in err and "libprotobuf" not in err, err
