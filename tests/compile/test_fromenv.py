"""What a value read from the environment needs (kale_ext/compile/fromenv.py)."""

from kale_ext.compile.fromenv import from_environ, needed_by_the_job


def test_a_setting_read_when_compiling_asks_for_the_value_a_job_value_for_its_env():
    said = from_environ("MODE", "cell 3, line 1")
    assert said == {
        "message": "MODE comes from the environment (cell 3, line 1), which kale_ext does not "
        "read when it compiles: write the value in the notebook",
        "env": "MODE",
    }
    assert needed_by_the_job(said["message"], "TOKEN") == (
        "MODE comes from the environment (cell 3, line 1): use --env-from-secret or --env TOKEN=..."
    )
