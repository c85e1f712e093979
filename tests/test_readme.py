"""The README's example commands cannot drift: every `kale-ext` command in its shell blocks is
read by the real command line, and the ones that need no job or cluster run as written (in a
copy of examples/, so the checkout is left as it was)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kale_ext.cli import build_parser
from tests.harness.crd import validate_trainjob

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text()
#: What stands for a job's name in the README.
NAME = "digits-ddp-x1y2z"


def commands(tool: str) -> list[list[str]]:
    """The commands of the README's ```sh blocks that start with ``tool`` (after any VAR=value),
    continuation lines joined, comments dropped."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words.pop(0)
            if words[: len(tool.split())] == tool.split():
                found.append(words)
    return found


KALE = commands("kale-ext")
NBCONVERT = commands("jupyter nbconvert")


def test_the_readme_has_one_command_a_line():
    """A line that runs two commands together reads as one command with odd arguments."""
    assert len(KALE) >= 12
    for words in KALE + NBCONVERT:
        assert "kale-ext" not in words[1:], " ".join(words)


@pytest.mark.parametrize("words", KALE, ids=lambda w: " ".join(w[1:3]))
def test_every_kale_ext_command_is_understood(words):
    argv = [NAME if w == "NAME" else w for w in words[1:]]
    parser, handlers = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        pytest.fail(f"the README's `{' '.join(words)}` is not a valid command ({e})")
    assert args.command in handlers


@pytest.fixture
def examples(tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns(
        "outputs", ".kale_ext"))  # fmt: skip
    return tmp_path


def run(words, cwd):
    tool = [sys.executable, "-m", "kale_ext.cli"] if words[0] == "kale-ext" else [
        sys.executable, "-m", "jupyter"]  # fmt: skip
    return subprocess.run([*tool, *words[1:]], capture_output=True, text=True, cwd=cwd)


def test_the_compile_commands_write_what_the_readme_says(examples):
    compiles = [w for w in KALE if w[1] == "compile"]
    assert len(compiles) == 2
    for words in compiles:
        out = run(words, examples)
        assert out.returncode == 0, out.stderr
    built = examples / "examples" / ".kale_ext"
    assert (built / "digits_ddp.py").is_file()  # "# examples/.kale_ext/digits_ddp.py"
    trainjob = yaml.safe_load((built / "trainjob.yaml").read_text())
    validate_trainjob(trainjob)
    assert trainjob["spec"]["trainer"]["numNodes"] == 2


def test_the_nbconvert_command_writes_the_module_and_the_trainjob(examples):
    [words] = NBCONVERT
    out = run(words, examples)
    assert out.returncode == 0, out.stderr
    written = examples / "examples"
    assert (written / "digits_ddp.py").is_file()
    validate_trainjob(yaml.safe_load((written / "digits_ddp.trainjob.yaml").read_text()))
