"""gateway.capture: off unless a folder and models or keys are named; the time box is bounded."""

from __future__ import annotations

import pytest

from modelwire.config import CaptureConfig, config_from_dict
from modelwire.errors import ConfigError


def test_capture_is_off_by_default_and_takes_its_keys():
    assert config_from_dict({}).gateway.capture == CaptureConfig()
    spec = {"dir": "/tmp/caps", "models": ["claude-*", "cheap"], "keys": ["alice", "env-0123abcd4567"],
            "failing_only": False, "for": 7200, "max_bytes": 5000, "files": 2, "redact": ["user_id"]}
    got = config_from_dict({"gateway": {"capture": spec}}).gateway.capture
    assert got == CaptureConfig("/tmp/caps", ("claude-*", "cheap"), ("alice", "env-0123abcd4567"),
                                False, 7200.0, 5000, 2, ("user_id",))


def test_one_key_name_may_be_given_without_a_list():
    got = config_from_dict({"gateway": {"capture": {"dir": "/tmp/caps", "keys": "alice"}}})
    assert got.gateway.capture.keys == ("alice",) and got.gateway.capture.models == ()


@pytest.mark.parametrize(("spec", "message"), [
    ({"for": 8 * 86400}, "at most a week"),
    ({"for": 0}, "above 0"),
    ({"for": True}, "gateway.capture.for"),
    ({"models": "m", "key": ["alice"]}, "unknown key"),
    ({"keys": {"alice": True}}, r"gateway\.capture\.keys.*expected a list of key names"),
    ({"keys": ["alice", 7]}, r"gateway\.capture\.keys.*expected a list of key names"),
    ({"keys": [""]}, r"gateway\.capture\.keys"),
    ({"files": 0}, "gateway.capture.files"),
], ids=["for-too-long", "for-zero", "for-bool", "misspelt-keys", "keys-mapping", "keys-not-strings",
        "keys-empty-name", "files-zero"])
def test_a_bad_capture_setting_names_the_key(spec, message):
    with pytest.raises(ConfigError, match=message):
        config_from_dict({"gateway": {"capture": spec}})
