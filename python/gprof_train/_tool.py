"""The gprof-train binary, found and run: the API's results are its --format json outputs."""
import json
import os
import shutil
import subprocess
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


class Error(RuntimeError):
    """gprof-train exited with an error; `message` is what it printed on stderr."""

    def __init__(self, argv, code, message):
        super().__init__("%s exited %d: %s" % (" ".join(argv), code, message.strip()))
        self.code = code
        self.message = message


def executable():
    """The binary this package installed (<package>/bin/gprof-train, its libraries in lib/
    beside it), or else the first gprof-train on PATH (a build tree's bin/, a cmake --install)."""
    own = os.path.join(_HERE, "bin", "gprof-train")
    if os.access(own, os.X_OK):
        return own
    found = shutil.which("gprof-train")
    if found is None:
        raise FileNotFoundError("gprof-train: the binary is neither in %s/bin nor on PATH" % _HERE)
    return found


def _strs(paths):
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    return [os.fspath(p) for p in paths]


def run_json(args, *paths):
    """gprof-train ARGS PATHS... --format json, parsed. Raises Error when it fails."""
    argv = [executable()] + list(args) + [a for p in paths for a in _strs(p)] + ["--format", "json"]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise Error(argv, p.returncode, p.stderr)
    return json.loads(p.stdout)


def run_print(args):
    """gprof-train ARGS, its output on this process's stdout and stderr. @return its exit code."""
    sys.stdout.flush()
    sys.stderr.flush()
    return subprocess.run([executable()] + list(args)).returncode


def main():
    """The `gprof-train` command that pip installs: the binary, with this process's arguments."""
    exe = executable()
    os.execv(exe, ["gprof-train"] + sys.argv[1:])
