"""pytest for the neuralsim Python module (ctest `python` runs it with
PYTHONPATH at the build's package)."""
import os

import numpy as np
import pytest

SOURCE = os.environ.get("NEURALSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def source(path):
    return os.path.join(SOURCE, path)


@pytest.fixture
def double_pendulum():
    import neuralsim
    return neuralsim.load_model(source("configs/models/double_pendulum.yaml"))


@pytest.fixture
def rng():
    return np.random.default_rng(7)
