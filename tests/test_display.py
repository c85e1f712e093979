"""The jobs table and log lines, as the CLI prints them and the magics show them."""

from kale_ext.backends.base import Failure, JobInfo, LogLine, NodeState, Status
from kale_ext.display import job_status, jobs_table, log_text, select_jobs
from kale_ext.progress import Progress


def job(name: str, status: Status = Status.RUNNING, reason: str | None = None) -> JobInfo:
    return JobInfo(
        name, status, "local", num_nodes=2, created="2026-11-25T01:00:00Z", reason=reason
    )


def test_columns_stay_aligned_with_long_names():
    long = "a-very-long-training-job-name-that-goes-on-and-on-x1y2z"
    lines = jobs_table([job("short"), job(long, Status.FAILED, "node 1 exited 1")]).splitlines()
    assert lines[0].split() == [
        "NAME", "STATUS", "NODES", "PROGRESS", "ETA", "CREATED", "PARENT", "DISK", "REASON"
    ]  # fmt: skip
    status_column = lines[0].index("STATUS")
    assert lines[1][status_column:].startswith("Running")
    assert lines[2][status_column:].startswith("Failed")
    assert lines[2].endswith("node 1 exited 1")


HALF = Progress.of(45, 100, "step", "report", eta_seconds=65)


def with_progress(status: Status) -> JobInfo:
    info = job(status.value.lower(), status)
    info.progress = HALF
    return info


def test_a_running_job_shows_a_bar_and_an_eta_others_their_state():
    jobs = [with_progress(s) for s in (Status.RUNNING, Status.QUEUED, Status.COMPLETE)]
    lines = jobs_table([*jobs, job("silent")]).splitlines()
    progress, eta = lines[0].index("PROGRESS"), lines[0].index("ETA")
    assert lines[1][progress:eta].strip() == "[####------]   45%"
    assert lines[1][eta:].split()[:2] == ["1m", "05s"]
    for line in lines[2:]:  # queued, complete, never reported: no stale bar
        assert line[progress:eta].strip() == "-" and line[eta:].split()[0] == "-"


def test_status_shows_the_bar_while_running_and_how_far_it_got_after():
    running = job_status(with_progress(Status.RUNNING)).splitlines()
    assert "progress      [#########-----------] 45% (45/100 steps), ETA 1m 05s" in running
    failed = job_status(with_progress(Status.FAILED))
    assert "progress      reached 45% (45/100 steps)" in failed.splitlines()
    assert "ETA" not in failed and "#" not in failed
    assert "progress" not in job_status(with_progress(Status.QUEUED))
    assert "progress" not in job_status(job("silent"))


def test_progress_lines_read_as_steps_of_total():
    metric = LogLine(0, 'KALE_METRIC {"step": 3, "total": 9, "loss": 0.25}', rank=0)
    assert log_text(metric) == "[rank 0] step 3/9: loss 0.25"
    epochs = LogLine(0, 'KALE_METRIC {"step": 3, "epoch": 1, "epochs": 5, "acc": 1}', rank=0)
    assert log_text(epochs) == "[rank 0] step 3, epoch 1/5: acc 1"


def test_no_jobs_says_so():
    assert jobs_table([]) == "no jobs"


def test_metric_lines_read_as_steps():
    metric = LogLine(0, 'KALE_METRIC {"step": 3, "loss": 0.25}', rank=1)
    assert log_text(metric) == "[rank 1] step 3: loss 0.25"
    assert log_text(LogLine(1, "hello")) == "[node 1] hello"


def test_a_stalled_job_reads_stalled_and_can_be_selected():
    quiet = job("quiet")
    quiet.stalled_after = 600
    jobs = [job("busy"), quiet, job("done", Status.COMPLETE)]
    assert "Stalled (no output for 10 min)" in jobs_table(jobs).splitlines()[2]
    assert [j.name for j in select_jobs(jobs, "stalled")] == ["quiet"]
    assert [j.name for j in select_jobs(jobs, "running")] == ["busy", "quiet"]
    assert [j.name for j in select_jobs(jobs, "complete")] == ["done"]
    assert select_jobs(jobs, None) == jobs


FAILED = Failure(
    summary="""node 1, rank 3: cell 4 ("training"), line 2: KeyError: 'label'""",
    node=1,
    rank=3,
    exception="KeyError: 'label'",
    cell_index=3,
    cell_id="c3",
    cell_label="training",
    line=2,
    exit_code=1,
    log_tail=["[rank 3] epoch 1", "[rank 3] KeyError: 'label'"],
)


def test_a_failed_jobs_status_says_where_and_why_on_one_screen():
    info = job("broken", Status.FAILED, FAILED.summary)
    info.failure, info.finished = FAILED, "2026-11-25T01:02:00Z"
    assert job_status(info).splitlines() == [
        "broken: Failed (local, 2 nodes × 1 process)",
        "created 2026-11-25T01:00:00Z, finished 2026-11-25T01:02:00Z",
        FAILED.summary,
        "failed first  node 1, rank 3",
        'where         cell 4 ("training"), line 2 (cell id c3)',
        "error         KeyError: 'label'",
        "ended         exit code 1",
        "last 2 line(s) of rank 3:",
        "  [rank 3] epoch 1",
        "  [rank 3] KeyError: 'label'",
    ]


def test_a_cluster_reason_and_a_signal_in_words():
    failure = Failure("node 0: killed: out of memory", node=0, exit_code=137,
                      signal="killed: out of memory", reason="OOMKilled: the container used "
                      "more than its 1Gi memory limit")  # fmt: skip
    info = job("oom", Status.FAILED, failure.summary)
    info.failure = failure
    text = job_status(info)
    assert "ended         killed: out of memory" in text and "reason        OOMKilled" in text
    assert "where" not in text


def test_a_running_jobs_status_lists_its_nodes():
    info = job("busy")
    info.nodes = [NodeState(0, "Running"), NodeState(1, "Pending", "Unschedulable: 0/3 nodes")]
    info.last_output = "2026-11-25T01:05:00Z"
    lines = job_status(info).splitlines()
    assert lines[1] == "created 2026-11-25T01:00:00Z, last output 2026-11-25T01:05:00Z"
    assert lines[-2:] == ["node 0 Running", "node 1 Pending: Unschedulable: 0/3 nodes"]


#: A job's exception text that would retitle the window, clear the screen and overwrite the line.
HOSTILE = "ValueError: \x1b]0;title\x07\x1b[2J\rgotcha"
CONTROLS = ("\x1b", "\x07", "\r")


def test_text_from_a_job_is_shown_with_its_control_characters_escaped():
    failed = job("x\x1b[2Jname", Status.FAILED, reason=f"node 0 said {HOSTILE}")
    failed.failure = Failure(
        f"node 0, rank 0: {HOSTILE}", node=0, rank=0, exception=HOSTILE, exit_code=1,
        log_tail=[f"Traceback: {HOSTILE}"],
    )  # fmt: skip
    running = job("ok", reason="quiet")
    running.nodes = [NodeState(0, "Running", reason=f"pulled {HOSTILE}")]
    views = [jobs_table([failed, running]), job_status(failed), job_status(running),
             log_text(LogLine(0, HOSTILE, rank=0))]  # fmt: skip
    for view in views:
        assert not any(c in view for c in CONTROLS), view
    assert "ValueError: \\x1b]0;title\\x07\\x1b[2J\\rgotcha" in job_status(failed)
    assert "x\\x1b[2Jname" in jobs_table([failed]) and "\\x1b[2J" in job_status(running)
    # the raw line, where asked for (`kale-ext logs --raw`)
    assert log_text(LogLine(0, HOSTILE, rank=0), raw=True) == f"[rank 0] {HOSTILE}"


def test_a_jobs_status_says_where_its_processes_per_node_come_from():
    info = job("fit", Status.RUNNING)
    info.procs_per_node, info.procs_why = 3, "the runtime's choice: 3 CPUs per node"
    assert job_status(info).splitlines()[0] == (
        "fit: Running (local, 2 nodes × 3 processes (the runtime's choice: 3 CPUs per node))"
    )


def test_disk_use_reads_for_people_and_says_when_it_is_a_lower_bound():
    from kale_ext.display import disk_text

    assert [disk_text(None), disk_text(512), disk_text(3 * 2**20, partial=True)] == [
        "-", "512 B", ">= 3.0 MiB"
    ]  # fmt: skip


def test_the_prune_table_lists_name_status_age_disk_and_what_became_of_outputs():
    from kale_ext.backends.prune import Pruned
    from kale_ext.display import pruned_table

    rows = [Pruned("old-a", "Complete", 3 * 86400 + 7200, 2048),
            Pruned("old-b", "Stopped", 125, None)]  # fmt: skip
    dry = pruned_table(rows, dry_run=True).splitlines()
    assert [line.split() for line in dry[:3]] == [
        ["NAME", "STATUS", "AGE", "DISK"],
        ["old-a", "Complete", "3d", "2h", "2.0", "KiB"],
        ["old-b", "Stopped", "2m", "-"],
    ]
    assert dry[3] == "would remove 2 job(s), 2.0 KiB (a dry run: nothing removed)"
    rows[0].deleted, rows[0].note = True, "kept its outputs in /o/old-a"
    rows[1].note = "left: another action is under way"
    real = pruned_table(rows, dry_run=False).splitlines()
    assert real[1].endswith("kept its outputs in /o/old-a")
    assert real[2].endswith("left: another action is under way")
    assert real[3] == "removed 1 of 2 job(s), freeing 2.0 KiB"
    assert pruned_table([], dry_run=True) == "no finished job to prune"
    cluster = pruned_table([Pruned("tj", "Complete", 60, None)], dry_run=True).splitlines()
    assert cluster[-1] == "would remove 1 job(s) (a dry run: nothing removed)"  # size unknown


def test_a_resumed_jobs_status_and_row_say_whom_it_was_resumed_from():
    from kale_ext.lineage import Checkpoint

    notes = {"kale-ext.io/lineage": "first", "kale-ext.io/parent": "second",
             "kale-ext.io/resume-step": "12"}  # fmt: skip
    info = JobInfo("third", Status.RUNNING, "local", created="2026-11-25T01:00:00Z",
                   provenance=notes)  # fmt: skip
    info.checkpoint = Checkpoint(14, "2026-11-25T01:00:00Z")
    lines = job_status(info).splitlines()
    assert lines[2] == "lineage       resumed from second (lineage first), from step 12"
    assert lines[3].startswith("checkpoint    step 14, ") and lines[3].endswith(" ago")
    table = jobs_table([info, job("first")]).splitlines()
    parent = table[0].index("PARENT")
    assert table[1][parent:].startswith("second (step 12)")
    assert table[2][parent:].split()[0] == "-"
    assert not any(line.startswith(("lineage", "checkpoint")) for line in
                   job_status(job("first")).splitlines())  # fmt: skip
