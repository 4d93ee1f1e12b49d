"""``python -m rxgem.cli``: the ``rxgem`` command."""

import sys

from . import main

sys.exit(main())
