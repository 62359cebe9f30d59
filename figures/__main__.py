"""``python -m figures [flags]`` is ``slr figures [flags]``."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(["figures", *sys.argv[1:]]))
