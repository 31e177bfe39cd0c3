"""Re-export of the LoCoMo loader, which lives in `pcm.datasets.locomo` (so `pcm ingest` can use it)."""

from pcm.datasets.locomo import *  # noqa: F401,F403
from pcm.datasets.locomo import DEFAULT_LOCOMO_PATH, MISSING_DATA_HINT, parse_session_datetime  # noqa: F401
