"""A bounded YAML loader for the files users hand to splice (recipes, native-phase headers,
probe specs).

``yaml.safe_load`` refuses arbitrary Python objects but not hostile shapes: a few hundred
bytes of nested aliases (a "billion laughs") expand into billions of nodes, 3,000 nested
brackets exhaust the recursion limit of PyYAML's composer, a ``? [a, b]`` key is an
unhashable list, and an unknown tag is an exception that carries no file name.  Here every one
of those is a ``SpliceError`` naming the file, line and column:

* the text is at most ``max_bytes`` long;
* nesting is at most ``max_depth`` collections deep (checked while composing, before the
  composer recurses);
* at most ``max_aliases`` aliases, and at most ``max_nodes`` nodes visited while building the
  result (an alias is visited again each time it is used, which is what bounds a bomb);
* mapping keys are plain scalars; only the standard tags of the YAML core schema are accepted
  on collections (``!!map``/``!!seq``), and a scalar's tag must be one SafeLoader knows.

The result keeps the position of every key and value (``YMap.at``/``YMap.vat``,
``YList.item_at``) so callers can name the line of a bad value, not only of a bad syntax.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import SpliceError
import yaml
from .util import encode, encoding_advice

_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")    # what a YAML escape can make that no file name may hold
#: an integer YAML 1.1 reads as octal: a leading zero and more digits
_LEADING_ZERO = re.compile(r"[-+]?0[0-9]+")
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"


@dataclass(frozen=True)
class Limits:
    """What a user file may contain; the defaults are far above any real recipe or spec."""
    max_bytes: int = 1 << 20
    max_depth: int = 64
    max_aliases: int = 100
    max_nodes: int = 100_000


DEFAULT_LIMITS = Limits()


class YMap(dict):
    """A mapping that remembers where each key and value was written (1-based line, column)."""
    line = 1
    column = 1

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.key_at = {}
        self.value_at = {}

    def at(self, key) -> tuple:
        return self.key_at.get(key, (self.line, self.column))

    def vat(self, key) -> tuple:
        return self.value_at.get(key, self.at(key))


class YList(list):
    """A sequence that remembers where each item was written."""
    line = 1
    column = 1

    def __init__(self, *a):
        super().__init__(*a)
        self.item_at = []


def _reader_problem(exc) -> str:
    ch = exc.character
    if isinstance(ch, int) and 0xDC80 <= ch <= 0xDCFF:   # surrogateescape: an undecodable byte
        return f"byte 0x{ch - 0xDC00:02x} is not UTF-8 text"
    return f"character #x{ch:04x} is not allowed in YAML" if isinstance(ch, int) else str(exc)


def _offset_pos(text: str, pos: int) -> tuple:
    line = text.count("\n", 0, pos) + 1
    return (line, pos - (text.rfind("\n", 0, pos) + 1) + 1)


def _pos(mark) -> tuple:
    return (mark.line + 1, mark.column + 1) if mark is not None else (None, None)


def _loader_class():

    class BoundedLoader(yaml.SafeLoader):
        """SafeLoader whose composer counts depth and aliases as it goes."""

        def __init__(self, stream, limits: Limits):
            super().__init__(stream)
            self.limits = limits
            self.depth = 0
            self.aliases = 0

        def compose_node(self, parent, index):
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > self.limits.max_aliases:
                    raise yaml.MarkedYAMLError(problem=f"more than {self.limits.max_aliases} aliases",
                                               problem_mark=event.start_mark)
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if self.depth >= self.limits.max_depth:
                    raise yaml.MarkedYAMLError(
                        problem=f"nested deeper than {self.limits.max_depth} levels",
                        problem_mark=event.start_mark)
            self.depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return BoundedLoader


def load_yaml_marked(text: str, path: str, limits: Limits = DEFAULT_LIMITS):
    """The document in ``text`` as YMap/YList/scalars (an empty document is an empty YMap).
    Every problem is a ``SpliceError`` at ``path:line:col``."""
    if len(text) > limits.max_bytes:
        raise SpliceError(f"YAML: file is larger than {limits.max_bytes} bytes", path)
    try:
        loader = _loader_class()(text, limits)
    except yaml.reader.ReaderError as exc:     # a byte that is not UTF-8, a control character
        raise SpliceError(f"YAML: {_reader_problem(exc)}{encoding_advice(encode(text[:64]))}", path,
                          *_offset_pos(text, exc.position)) from None
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise SpliceError(f"YAML: {exc.problem or exc.context}", path, *_pos(mark)) from None
        except yaml.YAMLError as exc:
            raise SpliceError(f"YAML: {exc}", path) from None
        if node is None:
            return YMap()
        return _Converter(loader, path, limits).convert(node)
    finally:
        loader.dispose()


class _Converter:
    """Node graph -> YMap/YList/scalars, counting every node it visits."""

    def __init__(self, loader, path: str, limits: Limits):
        self.loader = loader
        self.path = path
        self.limits = limits
        self.visited = 0

    def error(self, message: str, node) -> SpliceError:
        return SpliceError(f"YAML: {message}", self.path, *_pos(node.start_mark))

    def convert(self, node, depth: int = 0):

        self.visited += 1
        if self.visited > self.limits.max_nodes:
            raise self.error(f"more than {self.limits.max_nodes} values (an alias bomb?)", node)
        if depth > self.limits.max_depth:
            raise self.error(f"nested deeper than {self.limits.max_depth} levels", node)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, depth)
        if isinstance(node, yaml.SequenceNode):
            if node.tag != SEQ_TAG:
                raise self.error(f"unsupported tag {node.tag!r} on a list", node)
            out = YList()
            out.line, out.column = _pos(node.start_mark)
            for v in node.value:
                out.append(self.convert(v, depth + 1))
                out.item_at.append(_pos(v.start_mark))
            return out
        return self._scalar(node)

    def _scalar(self, node):

        try:
            value = self.loader.construct_object(node, deep=True)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or node.start_mark
            raise SpliceError(f"YAML: {exc.problem or exc.context}", self.path, *_pos(mark)) from None
        except (ValueError, OverflowError) as exc:   # e.g. a timestamp out of range
            raise self.error(f"bad value {node.value!r}: {exc}", node) from None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and node.style is None:
            self._one_reading(node, value)
        if isinstance(value, str):
            bad = _NOT_TEXT.search(value)
            if bad:
                # a "\0" or "\ud800" escape: no file name, entry or text of a user file holds
                # one (the OS refuses it in a path: "embedded null byte", "surrogates not allowed")
                what = "a NUL character (\\0)" if bad.group() == "\x00" else f"a lone surrogate ({bad.group()!r})"
                raise self.error(f"{what} in {value!r}", node)
        return value

    def _one_reading(self, node, value) -> None:
        """Refuse a plain number that YAML 1.1 (PyYAML's reading) and YAML 1.2 (every newer
        reader, and what a person means) read differently: ``0512`` is octal 330 to PyYAML and
        512 to YAML 1.2, ``1:30`` sexagesimal 90 (a string in 1.2).  ``threads: 0100`` ran the cut
        on 64 threads, ``woff: 0512`` read weights at 330, without a word."""
        text = node.value.replace("_", "")
        octal = _LEADING_ZERO.fullmatch(text) and int(text.lstrip("+-"), 10) != abs(value)
        if octal or ":" in text:
            how = "octal" if octal else "base 60"
            raise self.error(f"{node.value!r} is {value} to this YAML reader ({how}, YAML 1.1) and something else "
                             "to YAML 1.2: write the number without a leading zero or colon (0x… for hex), "
                             "or quote it for text", node)

    def _mapping(self, node, depth: int) -> YMap:

        if node.tag != MAP_TAG:
            raise self.error(f"unsupported tag {node.tag!r} on a mapping", node)
        out = YMap()
        out.line, out.column = _pos(node.start_mark)
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                raise self.error("a mapping key must be a plain value, not a list or mapping", k)
            key = self._scalar(k)
            try:
                hash(key)
            except TypeError:
                raise self.error(f"a mapping key must be a plain value, got {key!r}", k) from None
            if key in out:
                raise SpliceError(f"duplicate key {key!r}", self.path, *_pos(k.start_mark))
            out[key] = self.convert(v, depth + 1)
            out.key_at[key] = _pos(k.start_mark)
            out.value_at[key] = _pos(v.start_mark)
        return out
