"""The one adapter around PyYAML: safe loading that refuses duplicate keys (PyYAML keeps the last
one silently) and reports errors with their line, and the block-style dump lock files use."""

from __future__ import annotations

from lockguard.lockfiles.syntax import LockSyntaxError


def _loader():
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):  # type: ignore[misc, valid-type]
        pass

    def construct_mapping(loader, node, deep=False):
        seen: dict = {}
        for key_node, _value in node.value:
            key = loader.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                raise LockSyntaxError(key_node.start_mark.line + 1, "a mapping key that is not a scalar") from None
            if key in seen:
                raise LockSyntaxError(key_node.start_mark.line + 1,
                                      f"duplicate key {str(key)[:60]!r} (first on line {seen[key]})")
            seen[key] = key_node.start_mark.line + 1
        return base.construct_mapping(loader, node, deep)

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return StrictLoader


def load(text: str) -> object:
    """The YAML document in `text`; LockSyntaxError (with the line) when it is not valid YAML or
    repeats a key."""
    import yaml

    try:
        return yaml.load(text, Loader=_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise LockSyntaxError(mark.line + 1 if mark else None, f"not valid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise LockSyntaxError(None, f"not valid YAML: {exc}") from None
    except RecursionError:
        raise LockSyntaxError(None, "not valid YAML: nested too deeply") from None


def dump(document: object) -> str:
    import yaml

    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False, width=1000)
