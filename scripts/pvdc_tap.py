"""TAP output for the project's test programs (meson reads it)."""

import contextlib
import shutil
import signal
import sys
import tempfile


class Tap:
    """Prints TAP for a group of cases; every case reports, whatever fails."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def result(self, ok, name, why=""):
        """Report a case whose outcome is known; WHY (text, or lines) is
        printed as diagnostics when it failed."""
        self.n += 1
        self.failed += not ok
        print(f"{'ok' if ok else 'not ok'} {self.n} - {name}")
        if not ok:
            lines = why if isinstance(why, (list, tuple)) else \
                str(why).splitlines()
            for line in lines[-60:]:
                print(f"# {line}")
        sys.stdout.flush()

    def case(self, name, fn, *args):
        """Run FN(*ARGS): the case passes unless it raises."""
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - report every failure
            self.result(False, name, str(e).splitlines() or
                        [type(e).__name__])
        else:
            self.result(True, name)

    def fail(self, name, error):
        """Report a case that could not even run (the guest did not boot)."""
        self.result(False, name, str(error).splitlines() or
                    [type(error).__name__])

    def skip(self, name, why):
        self.n += 1
        print(f"ok {self.n} - {name} # SKIP {why}")
        sys.stdout.flush()

    @contextlib.contextmanager
    def scratch(self, prefix):
        """A temporary folder for the program's files: removed when every
        case passed, kept (and its path said) when one failed.  meson's
        SIGTERM at a timeout unwinds through the clean-up, once."""
        signal.signal(signal.SIGTERM, _unwind)
        tmp = tempfile.mkdtemp(prefix=prefix)
        try:
            yield tmp
        finally:
            if self.failed:
                print(f"# files kept in {tmp}")
            else:
                shutil.rmtree(tmp, ignore_errors=True)

    def run(self, prefix, cases):
        """CASES(tap, folder) in a scratch() folder; the exit status."""
        with self.scratch(prefix) as tmp:
            cases(self, tmp)
        return self.done()

    def done(self):
        print(f"1..{self.n}")
        return 1 if self.failed else 0


def _unwind(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.exit(1)
