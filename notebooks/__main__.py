"""``python -m notebooks``: render the executed notebooks as docs/notebooks/*.html."""

from __future__ import annotations

import sys

from notebooks.render import main

sys.exit(main())
