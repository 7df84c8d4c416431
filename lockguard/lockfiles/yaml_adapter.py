"""The one adapter around PyYAML: safe loading that refuses duplicate keys (PyYAML keeps the last
one silently) and reports errors with their line, composing a document into its nodes (each with
its line: `init --from environment.yml` cites them), and the block-style dumps lock files and
Kubernetes manifests use. No other module imports yaml."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from lockguard.lockfiles.syntax import LockSyntaxError

_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_BASE):  # type: ignore[misc, valid-type]
    """A safe loader that refuses a repeated key and notes the line each mapping starts on."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.mapping_lines: dict[int, int] = {}  # id(mapping) -> its first line (1-based)

    def construct_strict_mapping(
        self, node: MappingNode, deep: bool = False
    ) -> dict[Hashable, object]:
        seen: dict[object, int] = {}
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                raise LockSyntaxError(
                    key_node.start_mark.line + 1, "a mapping key that is not a scalar"
                ) from None
            if key in seen:
                raise LockSyntaxError(
                    key_node.start_mark.line + 1,
                    f"duplicate key {str(key)[:60]!r} (first on line {seen[key]})",
                )
            seen[key] = key_node.start_mark.line + 1
        mapping = _BASE.construct_mapping(self, node, deep)
        self.mapping_lines[id(mapping)] = node.start_mark.line + 1
        return mapping


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _StrictLoader.construct_strict_mapping
)


def load_with_lines(text: str) -> tuple[object, dict[int, int]]:
    """The YAML document in `text`, and the line each of its mappings starts on (by id(), valid
    while the document lives); LockSyntaxError (with the line) when it is not valid YAML or
    repeats a key."""
    loader = _StrictLoader(text)
    try:
        return loader.get_single_data(), loader.mapping_lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise LockSyntaxError(
            mark.line + 1 if mark else None, f"not valid YAML: {problem}"
        ) from None
    except yaml.YAMLError as exc:
        raise LockSyntaxError(None, f"not valid YAML: {exc}") from None
    except RecursionError:
        raise LockSyntaxError(None, "not valid YAML: nested too deeply") from None
    finally:
        loader.dispose()


def compose(text: str) -> Node | None:
    """The node tree of the YAML document in `text` (None when it is empty): every node knows its
    line (`node.start_mark.line`, 0-based). LockSyntaxError when it is not valid YAML."""
    loader = _BASE(text)
    try:
        return loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise LockSyntaxError(mark.line + 1 if mark else None, f"not valid YAML: {exc}") from None
    except yaml.YAMLError as exc:
        raise LockSyntaxError(None, f"not valid YAML: {exc}") from None
    finally:
        loader.dispose()


def load(text: str) -> object:
    """The YAML document in `text` (see load_with_lines)."""
    return load_with_lines(text)[0]


def dump(document: object) -> str:
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False, width=1000)


def dump_all(documents: Iterable[object], *, width: int = 1000) -> str:
    """Several documents, `---` between them, keys in the order given."""
    text: str = yaml.safe_dump_all(documents, sort_keys=False, width=width)
    return text


__all__ = [
    "MappingNode",
    "Node",
    "ScalarNode",
    "SequenceNode",
    "compose",
    "dump",
    "dump_all",
    "load",
    "load_with_lines",
]
