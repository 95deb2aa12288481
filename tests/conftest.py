"""Shared test configuration: hypothesis profiles."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# "ci" (the default) runs hundreds of graphs per property; "dev" is quicker.
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The corpus holds programs for the profiler to run, not tests (some use syntax
# newer than the running Python: tests.loading.corpus_programs() picks them).
collect_ignore = ["corpus"]
