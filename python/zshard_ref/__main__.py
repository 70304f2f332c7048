"""``python3 -m zshard_ref``: see :mod:`zshard_ref.cli`."""

import sys

from .cli import main

sys.exit(main())
