"""What the commands share (kale_ext/cli/common.py): here, how kale_ext's log warnings are
said on the command line."""

import logging
import subprocess
import sys

from kale_ext.cli.common import say_log_warnings


def test_a_log_warning_is_said_as_the_cli_says_its_warnings_once(capsys):
    say_log_warnings()
    say_log_warnings()  # a second command in one process adds no second handler
    logging.getLogger("kale_ext.backends.kubernetes.kept").warning(
        "could not keep the failure of job %s: %s", "fit", "forbidden\x1b[2J"
    )
    logging.getLogger("kale_ext.anything").info("not said: below WARNING")
    logging.getLogger("elsewhere").warning("not kale_ext's")
    err = capsys.readouterr().err.splitlines()
    said = [line for line in err if "could not keep" in line]
    assert said == ["warning: could not keep the failure of job fit: forbidden\\x1b[2J"], err
    assert not any("below WARNING" in line for line in err)


def test_in_a_process_of_its_own_the_warning_has_its_prefix_and_no_bare_twin():
    """Python's last-resort handler printed the bare message (and only when nothing else
    handled it)."""
    code = (
        "import logging, sys\n"
        "from kale_ext.cli.common import say_log_warnings\n"
        "say_log_warnings()\n"
        "logging.getLogger('kale_ext.backends').warning('runtime %s has no label: skipped', 'x')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == ["warning: runtime x has no label: skipped"], out.stderr
