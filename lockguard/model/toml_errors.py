"""Where a TOML error really is: tomllib reports where it noticed a problem, which for an unclosed
array or inline table is the end of the file; the line to blame is found here, with a note for the
cases TOML 1.0 refuses that a reader would not expect (a trailing comma in an inline table)."""

from __future__ import annotations

import re


def clip_text(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def toml_error_line(text: str, message: str) -> tuple[int | None, str]:
    """(the line to blame, an extra note) for a tomllib error message.

    tomllib reports where it noticed the problem; for an unclosed array or inline table that is
    the next key or the end of the document, so the line where the bracket opened is named too."""
    match = re.search(r"at line (\d+)(?:, column (\d+))?", message)
    line = int(match.group(1)) if match else None
    column = int(match.group(2)) if match and match.group(2) else None
    if line is None and "end of document" in message:
        line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
    opened = _unclosed_bracket_line(text, line)
    if (
        opened is not None
        and opened != line
        and (
            "nclosed" in message
            or "end of document" in message
            or "Invalid value" in message
            or "Expected" in message
        )
    ):
        return opened, f" (the bracket opened on line {opened} is not closed before line {line})"
    if line is not None and column is not None and _comma_before_brace(text, line, column):
        return line, (
            " (a comma before an inline table's `}` is TOML 1.1; Python reads TOML 1.0, which "
            "allows none there: remove the comma)"
        )
    return line, ""


def _comma_before_brace(text: str, line: int, column: int) -> bool:
    """Whether the parser stopped at the `}` of an inline table right after a comma: TOML 1.1
    allows that comma, the TOML 1.0 of tomllib (Python 3.11-3.14) and of tomli < 2.4 does not."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines) or column < 1:
        return False
    row = lines[line - 1]
    return row[column - 1 : column] == "}" and row[: column - 1].rstrip().endswith(",")


def _unclosed_bracket_line(text: str, upto: int | None) -> int | None:
    """The line of the outermost `[` / `{` value bracket still open before line `upto`."""
    stack: list[int] = []
    for number, line in enumerate(text.splitlines()[: upto or None], start=1):
        quote = None
        for index, char in enumerate(line):
            if quote:
                if char == quote and line[index - 1] != "\\":
                    quote = None
                continue
            if char in "\"'":
                quote = char
            elif char == "#":
                break
            elif char in "[{" and (stack or "=" in line[:index]):
                stack.append(number)
            elif char in "]}" and stack:
                stack.pop()
    return stack[0] if stack else None


# brackets deep: far beyond any intent, far below what the TOML parser's recursion allows
DEEP = 100


def deep_nesting_line(text: str) -> int | None:
    """The line where `[`/`{` brackets first open more than DEEP deep (quotes and comments
    aside)."""
    depth = 0
    for number, line in enumerate(text.splitlines(), start=1):
        quote = None
        for char in line:
            if quote:
                quote = None if char == quote else quote
            elif char in "\"'":
                quote = char
            elif char == "#":
                break
            elif char in "[{":
                depth += 1
                if depth > DEEP:
                    return number
            elif char in "]}":
                depth = max(0, depth - 1)
    return None
