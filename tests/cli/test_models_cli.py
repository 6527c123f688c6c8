"""`dvfs-sim models` and models found by name (models/src/model_registry.hpp): a data directory without model files is
an error naming it, and a model file must carry its file's name."""
import json
import os
import shutil
import subprocess

from cli_errors import assert_one_line_error
from conftest import BIN, ROOT


def models_with(data_dir, *args):
    env = dict(os.environ, DVFS_SIM_DATA=str(data_dir))
    return subprocess.run([BIN, "models", *args], capture_output=True, text=True, env=env, timeout=120)


def test_models_refuses_a_data_directory_without_model_files(tmp_path):
    # Each printed nothing and exited 0 (control refused the same directories: "no model files in ...").
    assert_one_line_error(models_with(tmp_path / "absent"), "absent: no such directory: expected the data directory", "$DVFS_SIM_DATA")
    (tmp_path / "file").write_text("x")
    assert_one_line_error(models_with(tmp_path / "file"), "file: not a directory: expected the data directory")
    assert_one_line_error(models_with(tmp_path), "models/gpus: no such directory: expected the GPU model files")
    (tmp_path / "models" / "gpus").mkdir(parents=True)
    assert_one_line_error(models_with(tmp_path, "--json"), "models/gpus: no model files (*.json) in it")


def test_a_model_file_whose_name_differs_from_its_file_name_is_refused_naming_both(tmp_path):
    # a40.json saying "name": "h200" was listed as h200, twice.
    gpus = tmp_path / "models" / "gpus"
    shutil.copytree(os.path.join(ROOT, "models", "gpus"), gpus)
    doc = json.loads((gpus / "a40.json").read_text())
    doc["name"] = "h200"
    (gpus / "a40.json").write_text(json.dumps(doc))
    assert_one_line_error(models_with(tmp_path), "a40.json: name: expected \"a40\" (the file's name", "got \"h200\"")


def test_models_lists_each_shipped_model_once_under_its_file_name():
    r = subprocess.run([BIN, "models", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    names = [m["name"] for m in json.loads(r.stdout)]
    files = sorted(f[:-5] for f in os.listdir(os.path.join(ROOT, "models", "gpus")) if f.endswith(".json"))
    assert names == files
