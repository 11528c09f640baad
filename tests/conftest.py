import os

from hypothesis import settings

# Property tests are deterministic: derandomized, no example database on disk.
settings.register_profile("referee", derandomize=True, database=None, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "referee"))
