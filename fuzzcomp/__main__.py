"""``python -m fuzzcomp`` is the ``fuzzcomp`` command."""
import sys

from fuzzcomp.cli import main

sys.exit(main())
