"""The panel's copy of the server's rules is generated, and kept equal to the source."""

import re
from pathlib import Path

from kale_ext.job.k8s_values import PATTERNS, matches
from kale_ext.server.contract import contract, render

COMMITTED = Path(__file__).resolve().parents[2] / "labextension" / "src" / "contract.json"


def test_the_committed_contract_is_the_generated_one():
    assert COMMITTED.read_text() == render(), (
        "regenerate it: python -m kale_ext.server.contract > labextension/src/contract.json"
    )


def test_every_pattern_reads_the_same_in_javascript():
    # JavaScript's RegExp has no (?P<…>), \A, \Z, possessive or inline flags: none may appear
    for name, rule in PATTERNS.items():
        assert not re.search(r"\(\?[P<=!aiLmsux]|\\[AZ]", rule["pattern"]), name


def test_the_contract_carries_the_rules_the_checks_use():
    data = contract()
    assert data["options"]["nodes"] == {"kind": "count", "minimum": 1, "maximum": 1000}
    assert data["k8s"]["patterns"]["job_name"]["max_length"] == 63
    assert matches("job_name", "digits-ddp") and not matches("job_name", "MyTrainingJob")
    assert data["metrics"]["prefix"] == "KALE_METRIC "
    assert data["volumes"]["kinds"] == ["configmap", "emptydir", "pvc", "secret"]
    assert data["sweep"]["ranges"] == ["uniform", "loguniform", "int"]
    assert data["sweep"]["max_parallel"] == 64
    assert data["tags"] == {"skip": "skip"}  # a cell the panel inserts is left out of the job
