import pytest


@pytest.fixture
def jobs_env(tmp_path, monkeypatch):
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    return tmp_path
