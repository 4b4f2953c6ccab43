"""The toolkit's one error type.

Everything a user can cause (bad input, a wrong option, a foreign model file) is raised as
:class:`TaggerError`; the CLI prints it as one line ``file:line: message`` and exits non-zero.
"""

from __future__ import annotations


class TaggerError(Exception):
    """A user-facing error, printed as ``file:line: message`` without a traceback."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = f"{self.file}:{self.line}: " if self.line is not None else f"{self.file}: "
        return where + self.message
