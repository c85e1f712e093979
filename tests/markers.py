"""Which tests are `slow`: they start real jobs, Jupyter servers, kernels or the emulated cluster.

`make check` runs the others (`-m "not slow"`); `make test` runs all. A test is slow when it
uses one of SLOW_FIXTURES, or lives in one of SLOW_PLACES (a folder or a module whose tests
start real processes): a new test there is marked without anyone remembering to.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: Fixtures that start a server, a cluster or a kernel.
SLOW_FIXTURES = frozenset(
    {
        "jp_serverapp",  # pytest-jupyter's in-process Jupyter server (jp_fetch)
        "server",  # tests/robustness: `jupyter server` in its own process
        "emulated_cluster",  # tests/harness/emulated: a Kubernetes API whose pods are processes
        "control_plane",  # tests/harness/controlplane: the real kube-apiserver, JobSet, Trainer
        "kube_api",
        "jobs_env",  # tests/cli: a jobs folder for the real jobs `kale-ext run` starts
    }
)

#: Folders and modules (relative to tests/) whose tests run real jobs, kernels or processes.
SLOW_PLACES = (
    "e2e/",
    "harness/controlplane/",  # the real control plane: started (and stopped) in processes
    "robustness/",
    "backends/local/",
    "runs/test_sweep.py",  # sweeps of real local jobs
    "runs/test_cancel.py",
    "runs/test_diff.py",
    "runs/test_tracking.py",  # a real MLflow server
    "runs/test_handle.py",  # real local 2-node jobs and a cluster job for .result()
    "test_sdk.py",  # the Kubeflow SDK's local process backend
    "test_your_files.py",
    "test_exporter.py",  # nbconvert in a process
    "compile/test_fidelity.py",  # each example in a kernel, then compiled
    "compile/test_sdk_parity.py",  # the emulated cluster, the Kubeflow SDK in a process
    "ipython/test_sweep.py",
    "cli/test_sweep.py",
    "test_cputime.py",  # pytest itself in processes, with workers
    "server/test_compile_pool.py",  # the server's compile processes
)

#: Single tests that start a job or a process among a module's unit tests (measured: the
#: slowest of `make check` before they were listed). The name is without parameters.
SLOW_TESTS = frozenset(
    {
        "ipython/test_magics.py::test_trainjob_runs_a_local_job_and_the_job_magics_see_it",
        "ipython/test_magics.py::test_trainjob_two_nodes_in_the_widget",
        "ipython/test_magics.py::test_cancel_stops_a_running_job",
        "ipython/test_magics.py::test_kale_submit_finds_the_notebook_through_the_session",
        "ipython/test_magics.py::test_a_failed_job_says_where_and_why_in_the_monitor_and_kale_status",
        "ipython/test_magics.py::test_a_failed_trainjob_names_the_line_of_its_own_cell",
        "server/test_jobs.py::test_a_restarted_server_still_has_the_job",
        "compile/test_ipython_range.py::test_the_oldest_allowed_ipython_reads_cells_as_kale_ext_does",
        "job/test_defaults.py::test_cli_jobs_start_from_the_same_defaults",
        "job/test_defaults.py::test_the_nbconvert_exporter_starts_from_the_same_defaults",
        "job/test_shipping.py::test_the_container_command_unpacks_the_configmaps_into_the_users_files",
        "server/test_security.py::test_loading_the_extension_imports_nothing_heavy",
        "compile/test_entrypoint.py::test_cli_compiles_an_sdk_style_notebook",
        "backends/test_runtime_packages.py::test_probe_runs_a_job_on_the_runtime_and_caches_its_packages",
        "test_trainer_status.py::test_the_poster_never_fails_or_holds_the_job",  # 9 processes
        "test_trainer_status.py::test_a_compiled_jobs_report_posts_without_kale_ext_in_the_image",
        "test_trainer_status.py::test_an_eta_once_the_rate_is_known_from_progress_py",  # ≥ 2 s
        "ipython/test_job_actions.py::test_kale_rerun_runs_the_recorded_notebook_not_the_one_on_disk",
        "ipython/test_job_actions.py::test_kale_stop_keeps_the_job_stopped_and_kale_resume_goes_on",
        "ipython/test_job_actions.py::test_kale_rerun_of_a_cell_job_runs_that_cell_again",
        "ipython/test_sdkbackend.py::test_an_sdk_notebook_runs_unedited_as_a_two_node_local_job",
        "ipython/test_sdkbackend.py::test_a_failed_job_waited_for_says_where_it_failed",
        "compile/test_sdkcall.py::test_the_example_sdk_notebook_trains_on_two_local_nodes_as_it_is",
        "job/test_command.py::test_command_runs_the_function_byte_exact",  # torchrun, one node
        "test_readme.py::test_the_nbconvert_command_writes_the_module_and_the_trainjob",
        "server/test_compile_worker.py::test_the_process_answers_in_order_keeps_prints_out_and_ends_with_its_stdin",
    }
)


def is_slow(item: pytest.Item) -> bool:
    if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    where = Path(str(item.path)).resolve().relative_to(TESTS).as_posix()
    name = getattr(item, "originalname", None) or getattr(item, "name", "")
    return where.startswith(SLOW_PLACES) or f"{where}::{name}" in SLOW_TESTS


def skip_collecting(path: Path, config: pytest.Config) -> bool:
    """With `-m "not slow"`, the slow places are not even imported (their imports cost every
    worker seconds: the emulated cluster, hypothesis, the SDK)."""
    if config.getoption("markexpr", "").replace(" ", "") != "notslow":
        return False
    try:
        where = path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return False
    return where.startswith(SLOW_PLACES) or f"{where}/".startswith(SLOW_PLACES)


def mark_slow(items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
