import sys

from .cli import main

sys.exit(main(["figures", *sys.argv[1:]]))
