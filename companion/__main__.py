"""`python -m companion ...` runs the same command line as the installed `companion`
script (`companion.cli.main`), so a checkout without the script installed still has it."""

import sys

from companion.cli import main

if __name__ == "__main__":
    sys.exit(main())
