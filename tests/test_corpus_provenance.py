"""The recorded traffic in tests/corpus ships with its provenance and licenses, holds no
secret, and is the only recorded traffic the tests read."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest
from conftest import CORPUS, corpus_files

TESTS = pathlib.Path(__file__).resolve().parent
PROVENANCE = (CORPUS / "PROVENANCE.md").read_text()
# a phrase each license's own text carries
LICENSE_TEXT = {"MIT": "Permission is hereby granted, free of charge",
                "Apache-2.0": "Apache License\n                           Version 2.0",
                "Apache-2.0 OR BSD-3-Clause": "Redistribution and use in source and binary forms"}


def _sources() -> dict[str, dict]:
    """Each source repository named by an exchange, with one exchange's source record."""
    return {json.loads(p.read_text())["source"]["repo"]: json.loads(p.read_text())["source"]
            for p in corpus_files()}


def test_a_missing_corpus_is_an_error_not_an_empty_list(tmp_path):
    with pytest.raises(FileNotFoundError, match="no recorded exchange"):
        corpus_files(root=tmp_path / "corpus")


def test_corpus_passes_its_checker():
    """check.py: schema, redacted auth headers, no secret-looking string, an INDEX.md row
    per file, permissive licenses only."""
    run = subprocess.run([sys.executable, str(CORPUS / "check.py"), str(CORPUS)],
                         check=False, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert f"{len(corpus_files())} passed, 0 failed" in run.stdout


@pytest.mark.parametrize("repo", sorted(_sources()))
def test_every_source_is_named_with_its_commit_and_license_text(repo):
    source = _sources()[repo]
    row = next((line for line in PROVENANCE.splitlines() if line.startswith(f"| [{repo}]")), "")
    assert source["commit"] in row and source["license"] in row, row
    folder = CORPUS / "LICENSES" / repo.replace("/", "__")
    texts = "".join(p.read_text() for p in folder.glob("LICENSE*"))
    assert LICENSE_TEXT[source["license"]] in texts, folder
    assert "Copyright" in (folder / "COPYRIGHT").read_text()


def test_every_exchange_has_a_provenance_line():
    listed = set(re.findall(r"^\| `([^`]+\.json)` \|", PROVENANCE, re.MULTILINE))
    assert {p.name for p in corpus_files()} <= listed


def test_private_deployment_hosts_are_scrubbed():
    """Azure OpenAI resource and Snowflake account names say whose deployment it was."""
    for path in corpus_files():
        host = json.loads(path.read_text())["request"]["host"]
        if host.endswith((".openai.azure.com", ".snowflakecomputing.com")):
            assert host.startswith("example-"), (path.name, host)


def test_no_test_reads_recorded_traffic_from_beside_the_repository():
    # built from parts so this file does not match itself
    beside = re.compile(r"""["']""" + "shared" + r"""["']\s*/|\.\./""" + "shared")
    offenders = [str(p.relative_to(TESTS)) for p in TESTS.rglob("*.py")
                 if beside.search(p.read_text())]
    assert not offenders
