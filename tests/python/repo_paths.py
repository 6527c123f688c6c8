"""Where the tests find the repository and the CLI (CTest sets both; by default the checkout and its build/)."""
import os

ROOT = os.environ.get("DVFS_SIM_ROOT", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.environ.get("DVFS_SIM_BIN", os.path.join(ROOT, "build", "dvfs-sim"))
