"""``PackError``: a pack cannot be used, with the file and the field at fault."""

from __future__ import annotations

from pathlib import Path


class PackError(Exception):
    """A pack cannot be used. ``file`` and ``field`` say where (field may be None)."""

    def __init__(self, file: Path | str, field: str | None, message: str) -> None:
        self.file = str(_display(Path(file)))
        self.field = field
        self.message = message
        where = f"{self.file}: {field}" if field else self.file
        super().__init__(f"{where}: {message}")


def _display(path: Path) -> Path:
    """The path from the working folder when it is under it, else absolute: never from another
    folder (the project's), where the same relative path may name a different pack. The file's
    own name is kept: a link is named, not where it leads."""
    try:
        whole = path.parent.resolve() / path.name
    except (OSError, RuntimeError):
        whole = path.absolute()
    try:
        return whole.relative_to(Path.cwd())
    except ValueError:
        return whole
