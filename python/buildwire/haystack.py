r"""Project Haystack values and grids in Python, decoded and encoded by the Rust codecs.

Formats: ``zinc`` (the default), ``json`` (JSON v4, Hayson), ``json3`` (JSON v3) and ``trio``.
Values map to Python as follows: Marker, NA and Remove to the singletons :data:`MARKER`,
:data:`NA` and :data:`REMOVE`; Bool and Str to ``bool`` and ``str``; Number to :class:`Number`
(value and unit); Ref, Uri, Symbol, Coord and XStr to their classes here; Date, Time and
DateTime to :mod:`datetime` objects (a DateTime's Haystack timezone name is kept in
:class:`DateTime`); List and Dict to ``list`` and ``dict``; Grid to :class:`Grid`.

Example:
    >>> from buildwire import haystack
    >>> grid = haystack.decode('ver:"3.0"\nid,dis,area\n@s1 "HQ","Main site",1200ft²\n')
    >>> grid.rows[0]["area"]
    Number(val=1200.0, unit='ft²')
    >>> grid.rows[0]["id"]
    Ref(id='s1', dis='HQ')
    >>> print(haystack.encode(grid, "trio"))
    id:@s1 "HQ"
    dis:Main site
    area:1200ft²
    <BLANKLINE>

"""

from __future__ import annotations

import datetime as _dt
import os
import pathlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Union

from buildwire import _native
from buildwire._lifecycle import AsyncClient, Opening, Subscribing

__all__ = [
    "MARKER",
    "NA",
    "REMOVE",
    "Client",
    "Coord",
    "DateTime",
    "EntityChange",
    "Grid",
    "Number",
    "Ref",
    "Symbol",
    "Uri",
    "Watch",
    "XStr",
    "convert",
    "decode",
    "decode_value",
    "detect_format",
    "encode",
    "encode_value",
    "read_file",
]

FORMATS = ("zinc", "json", "json3", "trio")


class _Singleton:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name

    def __reduce__(self) -> str:
        return self._name


MARKER = _Singleton("MARKER")
"""The Marker value (a tag that is simply present)."""
NA = _Singleton("NA")
"""The NA value (not available)."""
REMOVE = _Singleton("REMOVE")
"""The Remove value (removes a tag in an update)."""


@dataclass(frozen=True)
class Number:
    """A number with an optional unit. ``inf``, ``-inf`` and ``nan`` are allowed."""

    val: float
    unit: str | None = None


@dataclass(frozen=True)
class Ref:
    """A reference to an entity, with an optional display name (ignored by equality)."""

    id: str
    dis: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Uri:
    """A URI."""

    val: str


@dataclass(frozen=True)
class Symbol:
    """A symbol (a def name such as ``^site``)."""

    val: str


@dataclass(frozen=True)
class Coord:
    """A geographic coordinate in decimal degrees."""

    lat: float
    lng: float


@dataclass(frozen=True)
class XStr:
    """A value of a type not built into Haystack: its type name and string encoding."""

    type: str
    val: str


class DateTime(_dt.datetime):
    """A :class:`datetime.datetime` with a UTC offset that also keeps its Haystack timezone name.

    ``tz_name`` is the Haystack name (``New_York``, ``UTC``), or None when the wire had none.
    """

    tz_name: str | None = None


class Grid:
    """A Haystack grid: meta, columns (name and meta) and rows (dicts without empty cells).

    ``Grid(meta, columns, rows)`` builds one; :func:`decode` and the client's answers give
    grids decoded in Rust whose rows become Python objects only when ``rows`` is first
    read, so :meth:`to_pandas` and :meth:`to_arrow` of a fresh answer read the decoded
    grid column by column without making a Python object per cell.

    >>> grid = Grid({"dis": "demo"}, [("id", {}), ("v", {})], [{"id": Ref("a"), "v": 1.5}])
    >>> grid.column_names, len(grid)
    (['id', 'v'], 1)
    """

    __slots__ = ("_native", "_rows", "columns", "meta")

    def __init__(
        self,
        meta: dict[str, Any] | None = None,
        columns: list[tuple[str, dict[str, Any]]] | None = None,
        rows: list[dict[str, Any]] | None = None,
    ) -> None:
        self.meta: dict[str, Any] = {} if meta is None else meta
        self.columns: list[tuple[str, dict[str, Any]]] = [] if columns is None else columns
        self._rows: list[dict[str, Any]] | None = [] if rows is None else rows
        self._native: Any = None

    @classmethod
    def _from_native(cls, native: Any) -> Grid:
        """Wrap a grid handle of the native module (rows converted when first read)."""
        grid = cls(native.meta(), native.columns())
        grid._rows = None
        grid._native = native
        return grid

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The rows, one dict per row without its empty cells."""
        if self._rows is None:
            self._rows = self._native.rows()
            # From here on the Python rows are the grid: they may be changed in place.
            self._native = None
        return self._rows

    @rows.setter
    def rows(self, rows: list[dict[str, Any]]) -> None:
        self._rows = rows
        self._native = None

    @property
    def column_names(self) -> list[str]:
        """The column names in order."""
        return [name for name, _ in self.columns]

    def __len__(self) -> int:
        return len(self._native) if self._rows is None else len(self._rows)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Grid):
            return NotImplemented
        return (self.meta, self.columns, self.rows) == (other.meta, other.columns, other.rows)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Grid(meta={self.meta!r}, columns={self.columns!r}, rows={self.rows!r})"

    def _handle(self) -> Any:
        """Return the native grid: the decoded one while untouched, else one from the rows."""
        native = self._native
        if native is not None and [c[0] for c in native.columns()] == self.column_names:
            return native
        return _native.haystack_grid(self)

    def to_pandas(self) -> Any:
        r"""Return a :class:`pandas.DataFrame` built column by column in Rust.

        Number columns become float64 (NaN where missing; the first unit of each column in
        ``DataFrame.attrs["units"]``), Bool and Marker columns pandas' nullable ``boolean``,
        DateTime columns ``datetime64[ns, zone]`` (the column's timezone when all its values
        share one, else UTC), Str, Uri, Symbol and Ref columns strings (a Ref as its id),
        and columns of other or mixed kinds Python values (:data:`Value`).

        >>> decode('ver:"3.0"\nts,v\n2024-01-01T00:00:00Z UTC,1kW\n').to_pandas().dtypes.v
        dtype('float64')

        Raises:
            ImportError: when pandas is not installed (``pip install pandas``).

        """
        import numpy as np
        import pandas as pd

        data: dict[str, Any] = {}
        units: dict[str, str] = {}
        for name, kind, values, missing, extra in self._handle().frame_columns("pandas"):
            absent = np.frombuffer(missing, dtype=np.bool_)
            if kind == "number":
                data[name] = np.frombuffer(values, dtype=np.float64)
                if extra:
                    units[name] = extra
            elif kind == "bool":
                data[name] = pd.arrays.BooleanArray(
                    np.frombuffer(values, dtype=np.bool_), absent.copy()
                )
            elif kind == "datetime":
                stamps = pd.DatetimeIndex(np.frombuffer(values, dtype="datetime64[ns]"))
                data[name] = stamps.tz_localize("UTC").tz_convert(extra)
            else:
                data[name] = values
        frame = pd.DataFrame(data, columns=self.column_names)
        frame.attrs["units"] = units
        return frame

    def to_arrow(self) -> Any:
        """Return a :class:`pyarrow.Table` built column by column in Rust.

        Number columns are float64 (the unit in the field's metadata, ``b"unit"``), Bool and
        Marker columns bool, DateTime columns ``timestamp("ns", zone)``, Str, Uri, Symbol
        and Ref columns string (a Ref as its id), other kinds their Zinc text; missing cells
        are nulls.

        Raises:
            ImportError: when pyarrow is not installed (``pip install pyarrow``).

        """
        import numpy as np
        import pyarrow as pa

        arrays = []
        fields = []
        for name, kind, values, missing, extra in self._handle().frame_columns("arrow"):
            mask = np.frombuffer(missing, dtype=np.bool_)
            metadata = None
            if kind == "number":
                array = pa.array(np.frombuffer(values, dtype=np.float64), mask=mask)
                metadata = {b"unit": extra.encode()} if extra else None
            elif kind == "bool":
                array = pa.array(np.frombuffer(values, dtype=np.bool_), mask=mask)
            elif kind == "datetime":
                validity = pa.array(~mask).buffers()[1] if mask.any() else None
                array = pa.Array.from_buffers(
                    pa.timestamp("ns", tz=extra), len(mask), [validity, pa.py_buffer(values)]
                )
            elif kind == "text":
                offsets, text = values
                validity = pa.array(~mask).buffers()[1] if mask.any() else None
                array = pa.StringArray.from_buffers(
                    len(mask), pa.py_buffer(offsets), pa.py_buffer(text), validity
                )
            else:
                array = pa.array(values, type=pa.string())
            arrays.append(array)
            fields.append(pa.field(name, array.type, metadata=metadata))
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields))

    def to_dataframe(self) -> Any:
        """Return the rows as a :class:`pandas.DataFrame`, one column per grid column.

        Numbers become floats (their units are kept in ``DataFrame.attrs["units"]``), markers
        become True, and missing cells become None; other values stay Python objects (a Ref
        stays a :class:`Ref`). :meth:`to_pandas` is the faster, typed form.

        Raises:
            ImportError: when pandas is not installed (``pip install pandas``).

        """
        import pandas as pd

        units: dict[str, str] = {}

        def cell(name: str, value: Any) -> Any:
            if isinstance(value, Number):
                if value.unit:
                    units.setdefault(name, value.unit)
                return value.val
            if value is MARKER:
                return True
            return value

        data = {
            name: [cell(name, row.get(name)) for row in self.rows] for name in self.column_names
        }
        frame = pd.DataFrame(data, columns=self.column_names)
        frame.attrs["units"] = units
        return frame


Value = Union[
    _Singleton, bool, str, Number, Ref, Uri, Symbol, Coord, XStr, _dt.date, _dt.time, DateTime,
    list, dict, Grid, None,
]  # fmt: skip


def decode(text: str | bytes, format: str | None = None) -> Grid:
    """Decode a grid from ``zinc``, ``json``, ``json3`` or ``trio`` text (or UTF-8 bytes).

    Without ``format`` it is told from the text (see :func:`detect_format`).

    >>> decode('{"_kind": "grid", "meta": {"ver": "3.0"}, "cols": [{"name": "a"}], '
    ...        '"rows": [{"a": 1}]}').rows
    [{'a': Number(val=1.0, unit=None)}]

    Raises:
        ValueError: with the line and column of the first error.

    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8-sig")
    chosen = detect_format(text) if format is None else _check(format)
    return Grid._from_native(_native.haystack_decode(text, chosen))


_JSON3_VALUE = re.compile(r'"[-mznrsdhtubcxy]:')
_EXTENSIONS = {".zinc": "zinc", ".trio": "trio"}


def detect_format(text: str) -> str:
    r"""Tell the format of grid text: ``zinc``, ``json``, ``json3`` or ``trio``.

    Zinc starts with ``ver:``; JSON with ``{`` or ``[`` (JSON v3 when it has no ``_kind``
    and holds v3's typed strings such as ``"r:abc"`` or ``"n:42"``); anything else is read
    as Trio.

    >>> detect_format('ver:"3.0"\nid\n@a\n'), detect_format('{"rows": [{"id": "r:a"}]}')
    ('zinc', 'json3')
    """
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith("ver:"):
        return "zinc"
    if head.startswith(("{", "[")):
        if '"_kind"' not in text and _JSON3_VALUE.search(text):
            return "json3"
        return "json"
    return "trio"


def read_file(path: str | os.PathLike[str], format: str | None = None) -> Grid:
    """Decode a grid file; the format comes from ``.zinc``/``.trio`` or from the text.

    ``.json`` files are told apart as JSON v4 (Hayson) or v3 by their content.
    """
    text = pathlib.Path(path).read_bytes()
    suffix = pathlib.Path(path).suffix.lower()
    return decode(text, format or _EXTENSIONS.get(suffix))


def encode(grid: Grid, format: str = "zinc") -> str:
    """Encode a grid as ``zinc``, ``json``, ``json3`` or ``trio`` text, canonically."""
    return grid._handle().encode(_check(format))


def convert(text: str, source: str, target: str) -> str:
    """Convert grid text between formats without building Python objects (fast path)."""
    return _native.haystack_convert(text, _check(source), _check(target))


def decode_value(text: str) -> Value:
    """Decode one Zinc scalar or collection, e.g. ``'72.5°F'`` or ``'[1, 2, M]'``.

    >>> decode_value("72.5°F")
    Number(val=72.5, unit='°F')
    """
    return _native.haystack_decode_value(text)


def encode_value(value: Value) -> str:
    """Encode one value as Zinc.

    >>> encode_value([Number(1.0, "kW"), MARKER, Ref("a")])
    '[1kW,M,@a]'
    """
    return _native.haystack_encode_value(value)


def _check(format: str) -> str:
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    return format


def _ref_text(ref: Ref | str) -> str:
    return ref.id if isinstance(ref, Ref) else ref.removeprefix("@")


def _grid(native: Any) -> Grid:
    return Grid._from_native(native)


class Client(AsyncClient):
    """An asyncio client of a Haystack server, with SCRAM-SHA-256 login.

    It speaks the HTTP API, or the WebSocket API when asked. Create it with
    :meth:`Client.connect`.

    Ops without side effects go as GET with Zinc query parameters, the others as POST.
    A server's error grid raises :class:`RuntimeError` with its message; a refused login
    raises :class:`PermissionError`; an unreachable server :class:`ConnectionError`.

    Example (against a server on 127.0.0.1:8080)::

        client = await haystack.Client.connect("http://127.0.0.1:8080/api", "admin", "secret")
        about = await client.about()
        points = await client.read("point and his", limit=10)
        his = await client.his_read(points.rows[0]["id"], "yesterday")
        frame = his.to_pandas()                       # with pandas installed
        async for changes in client.watch([p["id"] for p in points.rows]):
            print(changes.rows)
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def connect(
        cls,
        url: str,
        username: str | None = None,
        password: str | None = None,
        *,
        wire: str = "zinc",
        timeout: float = 30.0,
        ca: bytes | None = None,
        websocket: bool = False,
    ) -> Opening[Client]:
        """Connect to the API at ``url`` (``http://host:port/api``) and log in.

        Await it (``client = await Client.connect(...)``) or use it in ``async with``, which
        ends the session on the server (the ``close`` op) at the end of the block.
        ``wire`` is the encoding on the wire (``zinc`` or ``json``); ``ca`` a PEM of extra
        trusted CA certificates for https; ``websocket`` sends the ops over the server's
        WebSocket API (``/api/ws``) after the HTTP login. A URL where nothing answers
        (HTTP 404) raises :class:`ConnectionError` saying to check the API path.
        """
        return Opening(cls._connect(url, username, password, wire, timeout, ca, websocket))

    @classmethod
    async def _connect(cls, *args: Any) -> Client:
        return cls(await _native.haystack_connect(*args))

    @property
    def url(self) -> str:
        """The API's base URL."""
        return self._handle.url

    async def call(self, op: str, request: Grid | None = None) -> Grid:
        """Send ``request`` (an empty grid by default) to ``op``; the answer grid."""
        return _grid(await self._handle.call(op, request or Grid()))

    async def about(self) -> dict[str, Any]:
        """Return the ``about`` row: server name, product, version, time zone..."""
        grid = await self.call("about")
        return grid.rows[0] if grid.rows else {}

    async def ops(self) -> Grid:
        """Return the ops the server supports."""
        return await self.call("ops")

    async def filetypes(self) -> Grid:
        """Return the formats the server supports (``formats`` on Haystack 3 servers)."""
        return await self.call("filetypes")

    async def defs(self, filter: str | None = None, limit: int | None = None) -> Grid:
        """Return the server's defs, optionally filtered."""
        return _grid(await self._handle.filtered("defs", filter, limit))

    async def libs(self, filter: str | None = None, limit: int | None = None) -> Grid:
        """Return the server's def libraries, optionally filtered."""
        return _grid(await self._handle.filtered("libs", filter, limit))

    async def read(self, filter: str, limit: int | None = None) -> Grid:
        """Entities matching a filter, e.g. ``"point and his"``."""
        return _grid(await self._handle.read(filter, limit))

    async def read_ids(self, ids: list[Ref | str]) -> Grid:
        """Entities by id, in the order asked."""
        return _grid(await self._handle.read_ids([_ref_text(i) for i in ids]))

    async def nav(self, nav_id: Ref | str | None = None) -> Grid:
        """Return the navigation tree's roots, or the children of ``nav_id``."""
        return _grid(await self._handle.nav(None if nav_id is None else _ref_text(nav_id)))

    async def point_write(
        self, id: Ref | str, level: int, value: Any, who: str | None = None
    ) -> Grid:
        """Write ``value`` at priority ``level`` (1..17); ``None`` releases the level."""
        return _grid(await self._handle.point_write(_ref_text(id), level, value, who))

    async def point_write_array(self, id: Ref | str) -> Grid:
        """Return the point's 17-level priority array."""
        return _grid(await self._handle.point_write(_ref_text(id)))

    async def his_read(self, id: Ref | str, range: str | _dt.date) -> Grid:
        """Read the history of a point over a range.

        ``range`` is ``"today"``, ``"yesterday"``, a date, ``"2024-01-01,2024-01-31"`` or a
        datetime range; ``his_read(...).to_dataframe()`` gives pandas.
        """
        text = range.isoformat() if isinstance(range, _dt.date) else range
        return _grid(await self._handle.his_read(_ref_text(id), text))

    async def his_rollup(
        self, id: Ref | str, range: str | _dt.date, every: str | Number, fold: str
    ) -> Grid:
        """Read the history of a point folded into buckets of ``every`` with ``fold``.

        ``every`` is a duration such as ``"15min"``, ``"1h"``, ``"1day"`` (or a
        :class:`Number` with that unit); ``fold`` is ``avg``, ``min``, ``max``, ``sum``,
        ``count``, ``first`` or ``last``. buildwire servers fold; when a server answers raw
        samples (it has no rollup), they are folded here the same way and the grid's meta
        has ``hisRollupByClient``.

        Example::

            hourly = await client.his_rollup("@p1", "yesterday", "1h", "avg")
        """
        text = range.isoformat() if isinstance(range, _dt.date) else range
        interval = decode_value(every) if isinstance(every, str) else every
        return _grid(await self._handle.his_rollup(_ref_text(id), text, interval, fold))

    async def his_write(self, id: Ref | str, samples: list[tuple[_dt.datetime, Any]]) -> Grid:
        """Write timestamped values (timezone-aware datetimes) to a point."""
        return _grid(await self._handle.his_write(_ref_text(id), list(samples)))

    async def invoke_action(self, id: Ref | str, action: str, **args: Any) -> Grid:
        """Invoke ``action`` on an entity with keyword arguments."""
        return _grid(await self._handle.invoke_action(_ref_text(id), action, args))

    async def watch(
        self,
        ids: list[Ref | str],
        *,
        dis: str = "buildwire",
        lease: float | None = None,
        interval: float = 1.0,
    ) -> AsyncIterator[Grid]:
        """Watch entities: yields their current values first, then each set of changes.

        The watch is closed on the server when the iteration ends (``break`` included).
        """
        handle = await self._handle.watch([_ref_text(i) for i in ids], dis, lease, interval)
        try:
            while True:
                changes = await handle.next()
                if changes is None:
                    return
                yield _grid(changes)
        finally:
            await handle.close()

    def subscribe(
        self,
        ids: list[Ref | str],
        *,
        dis: str = "buildwire",
        lease: float | None = None,
        interval: float = 1.0,
    ) -> Watch:
        """Watch entities: ``async with`` the result, ``async for`` each changed entity.

        The watch opens on the server on entering the block (or when awaited) and closes
        when it ends. The first changes are the entities' current state; then each entity
        the server reports changed, polled every ``interval`` seconds (pushed over the
        WebSocket API). ``lease`` is the watch's lease in seconds.

        Example::

            async with client.subscribe(["@p1", "@p2"]) as changes:
                async for change in changes:
                    print(change.id, change.entity.get("curVal"), change.timestamp)
        """
        return Watch(self._handle, [_ref_text(i) for i in ids], dis, lease, interval)

    async def close(self) -> None:
        """End the session on the server (the ``close`` op)."""
        await self.call("close")


@dataclass(frozen=True)
class EntityChange:
    """One entity a watch reported changed (see :meth:`Client.subscribe`)."""

    id: Ref
    """The entity's id."""
    entity: dict[str, Any]
    """The entity's tags as the server sent them (``curVal``, ``curStatus`` ...)."""
    removed: bool
    """True when the server says the entity left the watch (deleted, or no longer readable)."""
    timestamp: _dt.datetime
    """When the change reached this program (UTC)."""


class Watch(Subscribing):
    """A Haystack watch: an async iterator of :class:`EntityChange`.

    Made by :meth:`Client.subscribe`; ``async with`` it (or await it) to open it on the
    server, leave the block or call :meth:`close` to close it there.
    """

    def __init__(
        self, client: Any, ids: list[str], dis: str, lease: float | None, interval: float
    ) -> None:
        self._client = client
        self._request = (ids, dis, lease, interval)
        self._handle: Any = None
        self._pending: list[EntityChange] = []

    async def start(self) -> Watch:
        """Open the watch on the server (once)."""
        if self._handle is None:
            self._handle = await self._client.watch(*self._request)
        return self

    def __aiter__(self) -> Watch:
        return self

    async def __anext__(self) -> EntityChange:
        await self.start()
        while not self._pending:
            changes = await self._handle.next()
            if changes is None:
                raise StopAsyncIteration
            now = _dt.datetime.now(_dt.timezone.utc)
            self._pending = [
                EntityChange(row["id"], row, row.get("removed") is MARKER, now)
                for row in _grid(changes).rows
                if isinstance(row.get("id"), Ref)
            ]
        return self._pending.pop(0)

    async def close(self) -> None:
        """Close the watch on the server."""
        if self._handle is not None:
            await self._handle.close()

    async def _end(self) -> None:
        await self.close()
