"""The kernel-log splat pattern of every test, from scripts/lab/forbidden.re."""
import os
import re

FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'forbidden.re')


def source():
    """The pattern's text: the first line of forbidden.re that is not a comment."""
    with open(FILE) as f:
        for line in f:
            line = line.rstrip('\n')
            if line and not line.startswith('#'):
                return line
    raise ValueError(f'{FILE}: no pattern')


def regex(*extra):
    """The pattern compiled, or'ed with EXTRA patterns a test adds (load errors)."""
    return re.compile('|'.join((source(),) + extra))
