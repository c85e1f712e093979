"""`python -m kale_ext.cli`."""

import sys

from . import main

sys.exit(main())
