#!/usr/bin/env python3
"""Run VecBook from the shell: ``python vecbook.py search "..."``, ``stats`` or ``serve``.

The code is the ``vecbook/`` package beside this script (``from vecbook import VecBook``
in Python); Python imports a package folder before a module file of the same name, so
the import below finds the package, wherever the script is started from.
"""

import sys

from vecbook.cli import main

if __name__ == "__main__":
    sys.exit(main())
