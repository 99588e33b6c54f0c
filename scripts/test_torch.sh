#!/usr/bin/env bash
# The PyTorch part of the Python module's tests, kept out of the test
# command (scripts/test.sh): it installs Debian's python3-torch (about
# 20 s here from a warm apt cache; CI would download some 200 MB), then runs
# tests/python/test_torch.py (torch.autograd.gradcheck of the rollout layer,
# a parameter trained through it) and the PyTorch example.
# Usage: scripts/test_torch.sh [BUILD_DIR]   (after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
if ! dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q "install ok installed"; then
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends python3-torch >/dev/null
fi
export PYTHONPATH="$build_dir/python" NEURALSIM_SOURCE_DIR="$PWD"
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python/test_torch.py
/usr/bin/python3 python/examples/train_with_torch.py
