"""``modelwire emulate``: option errors are usage errors, before anything binds a port."""

from __future__ import annotations

from click.testing import CliRunner

from modelwire.cli.emulate import command


def test_unknown_profile_is_a_usage_error():
    result = CliRunner().invoke(command, ["--profile", "nonesuch"])
    assert result.exit_code == 2
    assert "unknown emulator profile 'nonesuch'" in result.output


def test_signing_key_env_must_be_set(monkeypatch):
    monkeypatch.delenv("EMU_SIGNING_KEY_TEST", raising=False)
    result = CliRunner().invoke(command, ["--signing-key-env", "EMU_SIGNING_KEY_TEST"])
    assert result.exit_code == 2
    assert "$EMU_SIGNING_KEY_TEST is not set" in result.output


def test_bad_script_is_a_usage_error(tmp_path):
    script = tmp_path / "bad.jsonl"
    script.write_text("not json\n")
    result = CliRunner().invoke(command, ["--script", str(script)])
    assert result.exit_code == 2
    assert "bad.jsonl:1: not JSON" in result.output


def test_emulate_serves_until_stopped():
    import socket
    import subprocess
    import sys
    import time

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = ("import sys; from modelwire.cli.emulate import command; "
            "command.main(sys.argv[1:], standalone_mode=True)")
    proc = subprocess.Popen([sys.executable, "-c", code, "--port", str(port), "--profile",
                             "anthropic", "--keys", "k-one-000001,k-two-000002"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:  # bounded poll until it serves
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/v1/models",
                              headers={"x-api-key": "k-two-000002", "anthropic-version": "2023-06-01"})
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.05)
        assert r.status_code == 200 and r.json()["data"][0]["type"] == "model"
        bad = httpx.post(f"http://127.0.0.1:{port}/v1/messages", json={},
                         headers={"x-api-key": "wrong-key-0000", "anthropic-version": "2023-06-01"})
        assert bad.status_code == 401
    finally:
        proc.terminate()
        proc.wait(10)
