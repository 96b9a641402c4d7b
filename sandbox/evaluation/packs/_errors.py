"""``PackError``: a pack cannot be used, with the file and the field at fault."""

from __future__ import annotations

from pathlib import Path

from sandbox.paths import PROJECT_ROOT


class PackError(Exception):
    """A pack cannot be used. ``file`` and ``field`` say where (field may be None)."""

    def __init__(self, file: Path | str, field: str | None, message: str) -> None:
        self.file = str(_display(Path(file)))
        self.field = field
        self.message = message
        where = f"{self.file}: {field}" if field else self.file
        super().__init__(f"{where}: {message}")


def _display(path: Path) -> Path:
    try:
        return path.resolve().relative_to(PROJECT_ROOT)
    except ValueError:
        return path
