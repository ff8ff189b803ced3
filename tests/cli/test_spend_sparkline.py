"""``modelwire spend``'s trend line: the spend record per hour or day as a sparkline,
ASCII where the terminal cannot print block characters, never in --json or --csv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from modelwire.cli import EXIT_OK, main
from modelwire.cli._spark import BLOCKS, RAMP_ASCII, sparkline, unicode_ok
from modelwire.teams.admin import KeyAdmin
from modelwire.teams.backends import open_store
from modelwire.teams.model import SpendRow


@pytest.mark.parametrize(("values", "expected"), [
    ([], ""),
    ([0.0], "▁"),
    ([3.0], "█"),
    ([0, 0, 0], "▁▁▁"),
    ([0, 1, 2, 3, 4, 5, 6, 7], "▁▂▃▄▅▆▇█"),
    ([0, 0.001, 100], "▁▂█"),  # a small spend is never drawn as none
], ids=["no-points", "one-zero", "one-point", "all-zero", "ramp", "small-beside-large"])
def test_a_sparkline_has_one_mark_per_point_scaled_to_the_largest(values, expected):
    assert sparkline(values) == expected


def test_the_ascii_sparkline_uses_the_same_scale():
    values = [0, 1, 2, 3, 4, 5, 6, 7]
    assert sparkline(values, ascii=True) == RAMP_ASCII
    assert [BLOCKS.index(c) for c in sparkline(values)] == [RAMP_ASCII.index(c) for c in sparkline(values, ascii=True)]
    assert sparkline(values, ascii=True).isascii()


@pytest.mark.parametrize(("encoding", "ok"), [("utf-8", True), ("UTF8", True), ("ascii", False),
                                              ("latin-1", False), (None, False), ("no-such", False)])
def test_block_characters_only_where_the_encoding_has_them(encoding, ok):
    assert unicode_ok(encoding) is ok


def _record(url: str, now: float) -> None:
    store = open_store(url)
    store.add_spend([SpendRow(now - 3600 * h - 60, f"r{h}", None, None, "m", "m", "p", 10, 10, cost_usd=c)
                     for h, c in ((0, 0.5), (1, 0.25), (5, 1.0))])
    store.close()


def test_the_series_has_every_hour_of_the_span_oldest_first(tmp_path):
    url = f"sqlite:///{tmp_path}/s.db"
    now = time.time()
    _record(url, now)
    step, points = KeyAdmin(open_store(url), clock=lambda: now).spend_series("24h")
    assert step == 3600 and len(points) == 24
    assert [round(p.cost_usd, 2) for p in points[-6:]] == [1.0, 0, 0, 0, 0.25, 0.5]
    assert sum(p.requests for p in points) == 3
    step, days = KeyAdmin(open_store(url), clock=lambda: now).spend_series("7d")
    assert step == 86400 and len(days) == 7 and round(days[-1].cost_usd, 2) == 1.75


def test_spend_prints_the_trend_under_its_table_but_not_with_json(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/s.db"
    _record(url, time.time())
    assert main(["spend", "--since", "24h", "--store", url]) == EXIT_OK
    last = capsys.readouterr().out.splitlines()[-1]
    line = last.split(": ", 1)[1].split("  ")[0]
    assert last.startswith("cost per hour, last 24h: ") and len(line) == 24
    assert line[-6] == BLOCKS[-1] and line[-1] == BLOCKS[4] and "total $1.7500, 3 requests" in last
    assert "peak $1.0000" in last
    assert main(["spend", "--json", "--store", url]) == EXIT_OK
    json.loads(capsys.readouterr().out)  # the JSON alone, no trend line


def test_spend_draws_the_trend_in_ascii_on_a_terminal_that_is_not_utf8(tmp_path):
    url = f"sqlite:///{tmp_path}/s.db"
    _record(url, time.time())
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "LC_ALL": "C"}
    out = subprocess.run([sys.executable, "-m", "modelwire.cli", "spend", "--since", "24h", "--store", url],
                         capture_output=True, env=env, check=True, timeout=60).stdout
    last = out.decode("ascii").splitlines()[-1]  # decodes: every byte is ASCII
    line = last.split(": ", 1)[1].split("  ")[0]
    assert len(line) == 24 and line[-6] == RAMP_ASCII[-1] and line[-1] == RAMP_ASCII[4]
