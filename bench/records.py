"""What the benchmarks share: one JSON line per run appended to `--out`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def append_record(path: Path | None, record: dict[str, Any]) -> None:
    """Append `record` as one JSON line to `path` (created with its folder); nothing when None."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
