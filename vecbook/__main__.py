"""``python -m vecbook``: the same command line as the installed ``vecbook`` command."""

import sys

from vecbook.cli import main

if __name__ == "__main__":
    sys.exit(main())
