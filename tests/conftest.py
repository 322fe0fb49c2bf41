"""Test settings: deterministic hypothesis, no example database written anywhere."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "circuits", derandomize=True, database=None, deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("circuits")

pytest_plugins = ["pytester"]
