"""`record`: the part of `dataclasses.dataclass` lockguard's value classes use, without its cost.

`lockguard check` runs on every commit and must stay within three Python start-ups. Importing
`dataclasses` (it pulls in inspect, ast, dis and tokenize) costs most of one start-up, and each
decorated class costs more, because dataclasses writes its methods as source code and compiles it.
The ~40 value classes on the check path (knowledge rows, the intent, lock-file views, findings)
use this decorator instead: the methods are closures over the field list, built in microseconds.

Same behaviour for what lockguard uses: fields from annotations (base classes first), defaults
and `field(default_factory=..., compare=False)`, keyword or positional construction with the
same TypeErrors, `frozen=True` (assignment raises FrozenInstanceError, an AttributeError; hash of
the compared fields), value equality within one class, a dataclass-style repr, methods a class
defines itself are kept, `__post_init__`. Not provided: `dataclasses.fields/replace/asdict` (use
`fields_of` and `as_dict` below) and `order=` (classes use functools.total_ordering).
"""

from __future__ import annotations

_MISSING = object()


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen record."""


class Field:
    __slots__ = ("default", "default_factory", "compare", "name")

    def __init__(self, default=_MISSING, default_factory=_MISSING, compare: bool = True) -> None:
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.name = ""


def field(*, default=_MISSING, default_factory=_MISSING, compare: bool = True):
    return Field(default, default_factory, compare)


def fields_of(cls_or_record) -> tuple[str, ...]:
    """The field names of a record class or instance, in order."""
    return tuple(f.name for f in cls_or_record.__record_fields__)


def as_dict(record) -> dict:
    """{field: value} of one record (shallow: nested records stay objects)."""
    return {f.name: getattr(record, f.name) for f in record.__record_fields__}


def _collect(cls) -> list[Field]:
    found: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for item in getattr(base, "__record_fields__", ()):
            found[item.name] = item
    for name in cls.__dict__.get("__annotations__", {}):
        value = cls.__dict__.get(name, _MISSING)
        item = value if isinstance(value, Field) else Field(default=value)
        item.name = name
        if isinstance(value, Field):  # the class attribute is the default, as with dataclasses
            if item.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, item.default)
        found.pop(name, None)  # a redefined field keeps the base's position in dataclasses; none here
        found[name] = item
    return list(found.values())


def _make_init(cls, items: list[Field], frozen: bool):
    names = tuple(f.name for f in items)
    index = {name: i for i, name in enumerate(names)}
    defaults = tuple(f.default for f in items)
    factories = tuple(f.default_factory for f in items)
    count = len(names)
    setter = object.__setattr__
    post_init = getattr(cls, "__post_init__", None)
    qualname = cls.__qualname__
    seen_default = False
    for f in items:
        has_default = f.default is not _MISSING or f.default_factory is not _MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        seen_default = seen_default or has_default

    slotted = any("__slots__" in vars(k) for k in cls.__mro__[:-1])

    def __init__(self, *args, **kwargs):
        if not kwargs and len(args) == count and not slotted:  # the common call: all fields, in order
            self.__dict__.update(zip(names, args, strict=True))
            if post_init is not None:
                self.__post_init__()
            return
        if len(args) > count:
            raise TypeError(f"{qualname}.__init__() takes {count + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        values = list(args)
        values.extend([_MISSING] * (count - len(args)))
        for key, value in kwargs.items():
            position = index.get(key)
            if position is None:
                raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument {key!r}")
            if values[position] is not _MISSING:
                raise TypeError(f"{qualname}.__init__() got multiple values for argument {key!r}")
            values[position] = value
        for position in range(count):
            value = values[position]
            if value is _MISSING:
                value = defaults[position]
                if value is _MISSING:
                    factory = factories[position]
                    if factory is _MISSING:
                        missing = [names[i] for i in range(count) if values[i] is _MISSING
                                   and defaults[i] is _MISSING and factories[i] is _MISSING]
                        raise TypeError(f"{qualname}.__init__() missing {len(missing)} required positional "
                                        f"argument{'s' if len(missing) > 1 else ''}: "
                                        + " and ".join(repr(m) for m in missing))
                    value = factory()
            setter(self, names[position], value)
        if post_init is not None:
            self.__post_init__()

    return __init__


def record(cls=None, /, *, frozen: bool = False):
    """Decorate a class like `@dataclass` / `@dataclass(frozen=True)`."""

    def wrap(cls):
        items = _collect(cls)
        cls.__record_fields__ = tuple(items)
        names = tuple(f.name for f in items)
        compared = tuple(f.name for f in items if f.compare)
        own = cls.__dict__
        if "__init__" not in own:
            cls.__init__ = _make_init(cls, items, frozen)
        if "__repr__" not in own:
            def __repr__(self):
                return f"{type(self).__qualname__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"
            cls.__repr__ = __repr__
        def values(self, _names=compared):
            return tuple([getattr(self, n) for n in _names])

        if "__eq__" not in own:
            def __eq__(self, other):
                if other.__class__ is not self.__class__:
                    return NotImplemented
                return values(self) == values(other)
            cls.__eq__ = __eq__
        # dataclasses' rule: a __hash__ the class wrote stays; otherwise frozen records hash their
        # compared fields and mutable ones are unhashable (an __eq__ alone leaves __hash__ = None)
        class_hash = own.get("__hash__", _MISSING)
        if class_hash is _MISSING or (class_hash is None and "__eq__" in own):
            if frozen:
                def __hash__(self):
                    return hash(values(self))
                cls.__hash__ = __hash__
            else:
                cls.__hash__ = None
        if frozen:
            def __setattr__(self, name, value):
                raise FrozenInstanceError(f"cannot assign to field {name!r}")

            def __delattr__(self, name):
                raise FrozenInstanceError(f"cannot delete field {name!r}")
            cls.__setattr__ = __setattr__
            cls.__delattr__ = __delattr__
        cls.__match_args__ = names
        return cls

    return wrap if cls is None else wrap(cls)
