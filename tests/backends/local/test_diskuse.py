"""A job folder's disk use: what `du` counts, links not followed, the walk bounded."""

import os
import subprocess

from kale_ext.backends.local.diskuse import MAX_DEPTH, disk_use


def test_counts_what_du_counts_without_following_links(tmp_path):
    job = tmp_path / "job"
    (job / "site" / "pkg").mkdir(parents=True)
    (job / "node-0.log").write_bytes(b"x" * 300_000)
    for i in range(50):
        (job / "site" / "pkg" / f"m{i}.py").write_text("y" * 5000)
    big = tmp_path / "elsewhere"
    big.write_bytes(b"z" * 2_000_000)
    os.symlink(big, job / "link")  # its target is not the job's
    size, partial = disk_use(job)
    du = subprocess.run(["du", "-s", "-B1", str(job)], capture_output=True, text=True, check=True)
    assert (size, partial) == (int(du.stdout.split()[0]), False)
    assert 550_000 <= size < 2_000_000


def test_the_walk_stops_at_its_bounds_and_says_so(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    for i in range(30):
        (job / f"f{i}").write_bytes(b"a" * 4096)
    size, partial = disk_use(job, max_entries=10)
    assert partial and 10 * 4096 <= size < 30 * 4096
    deep = tmp_path / "deep"
    (deep.joinpath(*["d"] * (MAX_DEPTH + 3))).mkdir(parents=True)
    assert disk_use(deep)[1] is True
    assert disk_use(tmp_path / "missing") is None
