"""``python -m dpcore.reproduce``: the papers' figures from the command line.

The code lives in :mod:`dpcore.lab.reproduce`; this module is only its short command name.
"""
from dpcore.lab.reproduce import main

if __name__ == "__main__":
    raise SystemExit(main())
