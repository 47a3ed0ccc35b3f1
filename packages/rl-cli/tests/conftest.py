"""The rl-cli tests import their shared helpers (`cli_helpers`) from this folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
