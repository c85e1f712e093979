"""The jobs table and log lines, as the CLI prints them and the magics show them."""

from kale_ext.backends.base import JobInfo, LogLine, Status
from kale_ext.display import jobs_table, log_text


def job(name: str, status: Status = Status.RUNNING, reason: str | None = None) -> JobInfo:
    return JobInfo(
        name, status, "local", num_nodes=2, created="2026-11-25T01:00:00Z", reason=reason
    )


def test_columns_stay_aligned_with_long_names():
    long = "a-very-long-training-job-name-that-goes-on-and-on-x1y2z"
    lines = jobs_table([job("short"), job(long, Status.FAILED, "node 1 exited 1")]).splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "NODES", "CREATED", "REASON"]
    status_column = lines[0].index("STATUS")
    assert lines[1][status_column:].startswith("Running")
    assert lines[2][status_column:].startswith("Failed")
    assert lines[2].endswith("node 1 exited 1")


def test_no_jobs_says_so():
    assert jobs_table([]) == "no jobs"


def test_metric_lines_read_as_steps():
    metric = LogLine(0, 'KALE_METRIC {"step": 3, "loss": 0.25}', rank=1)
    assert log_text(metric) == "[rank 1] step 3: loss 0.25"
    assert log_text(LogLine(1, "hello")) == "[node 1] hello"
