import os

import pytest
from hypothesis import settings

# Property tests are deterministic: derandomized, no example database on disk.
settings.register_profile("referee", derandomize=True, database=None, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "referee"))


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path_factory, monkeypatch):
    """The demo and the service keep journals in the XDG data dir: never the user's in tests..."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
    # ...nor the user's table profile, which the service's config reads when it names none.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
