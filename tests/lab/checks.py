"""Counted checks in the kselftest manner for the Python scenarios: the twin
of tests/lab/checks.sh, with the same lines and exit codes (TAP;
tests/tier/tap.py reads them).

    from checks import Checks
    c = Checks('stress-reload')
    c.ok(WHAT) / c.bad(WHAT)     "ok N - WHAT" / "not ok N - WHAT"
    c.skip(WHAT, REASON)         "ok N - WHAT # SKIP REASON" (never a pass)
    c.check(COND, WHAT)          ok if COND, else bad; returns COND
    c.note(TEXT)                 a diagnostic line "# TEXT"
    sys.exit(c.finish())         the plan "1..N", "NAME: N passed, N failed,
                                 N skipped", and kselftest's exit status: 0
                                 all passed (skips beside passes have rows of
                                 their own), 1 a check failed or none was
                                 made, 4 (KSFT_SKIP) only skips
    wait_for(SEC, FN, STEP)      FN() until it returns a true value or SEC
                                 seconds pass (by time.monotonic()); its
                                 last value

Checks(NAME, say=FN) sends every line through FN (default: print, flushed),
for a script that keeps a transcript of its own (tests/boards/flow.py).
"""
import time

KSFT_PASS, KSFT_FAIL, KSFT_SKIP = 0, 1, 4


class Checks:
    def __init__(self, name, say=None):
        self.name = name
        self.say = say or (lambda s: print(s, flush=True))
        self.passed = self.failed = self.skipped = 0
        self.failures = []

    def _n(self):
        return self.passed + self.failed + self.skipped

    def ok(self, what):
        self.passed += 1
        self.say(f'ok {self._n()} - {what}')

    def bad(self, what):
        self.failed += 1
        self.failures.append(what)
        self.say(f'not ok {self._n()} - {what}')

    def skip(self, what, why=''):
        self.skipped += 1
        self.say(f'ok {self._n()} - {what} # SKIP {why or "no reason given"}')

    def check(self, cond, what):
        if cond:
            self.ok(what)
        else:
            self.bad(what)
        return cond

    def note(self, text):
        for ln in str(text).split('\n'):
            self.say(f'# {ln}')

    def finish(self):
        self.say(f'1..{self._n()}')
        self.say(f'{self.name}: {self.passed} passed, {self.failed} failed, '
                 f'{self.skipped} skipped')
        if self.failed:
            return KSFT_FAIL
        if self._n() == 0:
            self.say(f'# {self.name}: no check was made, so nothing passed')
            return KSFT_FAIL
        if self.passed == 0:
            return KSFT_SKIP
        return KSFT_PASS


def wait_for(seconds, fn, step=0.25):
    """FN() until it returns a true value or SECONDS pass; its last value."""
    deadline = time.monotonic() + seconds
    while True:
        v = fn()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)
