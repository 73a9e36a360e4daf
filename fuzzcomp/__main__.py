"""``python -m fuzzcomp`` is the ``fuzzcomp`` command."""
import sys

from fuzzcomp.cli.parser import main

sys.exit(main())
