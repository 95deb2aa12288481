"""``python -m pathprof``."""

import sys

from pathprof.cli import main

sys.exit(main())
