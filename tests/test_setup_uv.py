"""The set-up's uv takes packages from where the machine's pip does (setup/uv_from_pip.py): the
same indexes, wheel folders and constraints, pip's precedence kept, every index searched for the
best version as pip does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
uv_from_pip = load_script("setup/uv_from_pip.py")

# `pip config list` as a machine with a pip.conf and PIP_* variables prints it
LISTING = """\
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'
global.find-links='/opt/wheels'
global.index-url='https://global.example/simple'
install.index-url='https://install.example/simple'
:env:.default-timeout='180'
:env:.find-links='/opt/wheels /srv/wheels'
"""


def test_pips_places_become_uvs_options_with_pips_precedence():
    settings = uv_from_pip.pip_settings(LISTING)
    assert settings["index-url"] == "https://install.example/simple"  # install over global
    assert settings["find-links"] == "/opt/wheels /srv/wheels"  # the environment over both
    assert uv_from_pip.uv_options(settings) == [
        "--default-index", "https://install.example/simple",
        "--index", "file:///opt/pypi/simple", "--index", "file:///opt/pypi-more/simple",
        "--find-links", "/opt/wheels", "--find-links", "/srv/wheels",
        "--constraint", "/etc/xdg/pip/constraints.txt",
        "--index-strategy", "unsafe-best-match"]


def test_a_pip_with_no_settings_gives_uv_none_and_no_index_is_kept():
    assert uv_from_pip.uv_options(uv_from_pip.pip_settings("")) == []
    assert uv_from_pip.uv_options(uv_from_pip.pip_settings(":env:.no-index='1'\n")) == [
        "--no-index"]


def test_the_script_reads_this_machines_pip():
    env = {"PATH": "/usr/bin:/bin", "PIP_FIND_LINKS": "/srv/wheels", "PIP_CONFIG_FILE": "/dev/null"}
    done = subprocess.run([sys.executable, str(ROOT / "setup" / "uv_from_pip.py")], env=env,
                          capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["--find-links", "/srv/wheels"]
