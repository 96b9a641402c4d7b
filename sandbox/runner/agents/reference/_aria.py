"""Read Playwright's AI-mode aria snapshot (what ``browser_snapshot`` returns) into a tree.

A snapshot line looks like ``- role "name" [attr] [ref=e5]: text``; a key with special
characters is wrapped in YAML single quotes, a name is JSON-escaped in double quotes and a
text value is YAML double-quoted when needed (``\\"``, ``\\n``, ``\\xHH``). The scripted
reference agents read every value from these nodes, never from the page source.

Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "0": "\0"}
_LINE = re.compile(r"^(?P<indent> *)- (?P<body>.*)$")
_ATTRIBUTE = re.compile(r"\[([^\]=]+)(?:=([^\]]*))?\]")


def _unescape(text: str) -> str:
    def replace(match: re.Match) -> str:
        code = match.group(1)
        if code[0] in "xu" and len(code) > 1:
            return chr(int(code[1:], 16))
        return _SIMPLE_ESCAPES.get(code, code)

    return _ESCAPE.sub(replace, text)


def _read_double_quoted(text: str, start: int) -> tuple[str, int]:
    """The string opening at ``text[start] == '"'`` and the index after its closing quote."""
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == '"':
            return _unescape(text[start + 1 : index]), index + 1
        index += 1
    return _unescape(text[start + 1 :]), len(text)


def _split_key_value(body: str) -> tuple[str, str | None]:
    """Split ``key: value`` at the first colon outside double quotes and brackets."""
    if body.startswith("'"):  # YAML single-quoted key: '' is an escaped quote
        index, key = 1, []
        while index < len(body):
            if body[index] == "'":
                if body[index + 1 : index + 2] == "'":
                    key.append("'")
                    index += 2
                    continue
                break
            key.append(body[index])
            index += 1
        rest = body[index + 1 :]
        return "".join(key), (rest[1:].strip() if rest.startswith(":") else None)
    index, in_quotes, depth = 0, False, 0
    while index < len(body):
        char = body[index]
        if in_quotes:
            if char == "\\":
                index += 2
                continue
            if char == '"':
                in_quotes = False
        elif char == '"':
            in_quotes = True
        elif char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
        elif char == ":" and depth == 0 and (index + 1 == len(body) or body[index + 1] == " "):
            return body[:index], body[index + 1 :].strip()
        index += 1
    return body, None


def _value(raw: str | None) -> str | None:
    if raw is None or raw == "":
        return None
    if raw.startswith('"'):
        return _read_double_quoted(raw, 0)[0]
    return raw


@dataclass
class Node:
    role: str
    name: str | None = None
    text: str | None = None
    attributes: dict[str, str | None] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)
    parent: Node | None = field(default=None, repr=False)

    @property
    def ref(self) -> str | None:
        return self.attributes.get("ref")

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            yield from child.walk()

    def find_all(self, role: str | None = None) -> list[Node]:
        return [n for n in self.walk() if role is None or n.role == role]

    @property
    def own_text(self) -> str | None:
        """The node's visible words: its text value, else its name."""
        return self.text if self.text is not None else self.name

    def full_text(self, skip_roles: tuple[str, ...] = ("/url", "/placeholder")) -> str:
        """The node's own text, or its descendants' texts joined by spaces (pseudo-nodes
        such as ``/url`` are not visible text)."""
        if self.role in skip_roles:
            return ""
        if self.own_text is not None:
            return self.own_text
        parts = [child.full_text(skip_roles) for child in self.children]
        return " ".join(p for p in parts if p)


def parse_snapshot(snapshot: str) -> Node:
    """The snapshot as a tree under a synthetic ``root`` node."""
    root = Node(role="root")
    stack: list[tuple[int, Node]] = [(-1, root)]
    for line in snapshot.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        indent = len(match.group("indent"))
        key, raw_value = _split_key_value(match.group("body"))
        node = _parse_key(key)
        node.text = _value(raw_value)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        node.parent = parent
        parent.children.append(node)
        stack.append((indent, node))
    return root


def _parse_key(key: str) -> Node:
    role, _, rest = key.partition(" ")
    node = Node(role=role)
    rest = rest.strip()
    if rest.startswith('"'):
        node.name, end = _read_double_quoted(rest, 0)
        rest = rest[end:]
    for attribute in _ATTRIBUTE.finditer(rest):
        node.attributes[attribute.group(1)] = attribute.group(2)
    return node


def normalise_space(text: str) -> str:
    return " ".join(text.split())
