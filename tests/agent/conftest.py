from modelwire.testing import emulator, emulator_clean  # noqa: F401 - fixtures
