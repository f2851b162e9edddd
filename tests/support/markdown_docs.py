"""The user-facing Markdown files (README.md, the task READMEs) as data for their tests: fenced
blocks with the marker that precedes them, relative links, heading anchors.

A shell block (```` ```bash ````, ```` ```sh ````, ```` ```console ````) is one of:

- run by ``tests/docs/test_readme_commands.py`` (no marker before it);
- ``<!-- tested: FILE ... -->``: run by the test module FILE, which reads the block from here;
- ``<!-- illustrative: WHY -->``: not run (needs a GPU, the network, a server of the user's).

The marker is an HTML comment on the line right before the block's opening fence (GitHub and
MkDocs do not show it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
USER_FILES = (
    REPO / "README.md",
    REPO / "tasks" / "logiccat" / "README.md",
    REPO / "tasks" / "tpcds" / "README.md",
)
SHELL = frozenset({"bash", "sh", "shell", "console"})
_FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")
_MARKER = re.compile(r"^<!--\s*(illustrative|tested):\s*(.*?)\s*-->\s*$")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    language: str
    text: str
    marker: str | None  # "illustrative", "tested" or None
    marker_text: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    def commands(self) -> list[str]:
        """The block's commands: one per line, a trailing backslash joining lines, comments and
        blank lines left out."""
        joined = re.sub(r"\\\n\s*", " ", self.text)
        lines = [line.strip() for line in joined.splitlines()]
        return [line for line in lines if line and not line.startswith("#")]


def blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, index = [], 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        fence, language, start = match.group(1), match.group(2).lower(), index
        index += 1
        body = []
        while index < len(lines) and not lines[index].startswith(fence):
            body.append(lines[index])
            index += 1
        index += 1
        previous = lines[start - 1] if start > 0 else ""
        marker = _MARKER.match(previous)
        found.append(
            Block(
                path=path,
                line=start + 1,
                language=language,
                text="\n".join(body) + "\n",
                marker=marker.group(1) if marker else None,
                marker_text=marker.group(2) if marker else "",
            )
        )
    return found


def shell_blocks(path: Path) -> list[Block]:
    return [block for block in blocks(path) if block.language in SHELL]


def block_with(path: Path, text: str) -> Block:
    """The one shell block of ``path`` that contains ``text``."""
    (block,) = [block for block in shell_blocks(path) if text in block.text]
    return block


def prose(path: Path) -> str:
    """``path``'s text outside fenced blocks and HTML comments."""
    lines, inside = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            lines.append(line)
    return re.sub(r"<!--.*?-->", "", "\n".join(lines), flags=re.S)


def links(path: Path) -> list[str]:
    """The link targets of ``path``'s prose."""
    return _LINK.findall(prose(path))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The heading anchors of a Markdown file (GitHub's, duplicates numbered)."""
    seen: dict[str, int] = {}
    result = set()
    for line in prose(path).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result
