"""Type stubs of the Rust extension module ``buildwire._native``."""

import datetime
from typing import Any

__version__: str

def run_cli(argv: list[str]) -> int:
    """Run the ``buildwire`` command line with ``argv`` (program name first)."""

def bacnet_dissect(datagram: bytes) -> str:
    """Dissect a BACnet/IP datagram; JSON text."""

def bacnet_parse_object_identifier(text: str) -> tuple[str, int, int]:
    """Parse ``ai,1``; (type name, type number, instance)."""

def bacnet_property(text: str) -> tuple[str, int]:
    """Resolve a property name or alias; (name, number)."""

def bacnet_enumerations() -> str:
    """Every BACnet enumeration the stack names; JSON ``{name: [[member, number], ...]}``."""

def opcua_dissect(stream: bytes) -> dict[str, Any]:
    """Dissect UA TCP bytes into ``{"chunks": [...], "error": None | {...}}``."""

def opcua_status_name(code: int) -> str | None:
    """Name of a StatusCode, or None."""

def haystack_convert(text: str, from_: str, to: str) -> str:
    """Convert a grid between ``zinc``, ``json``, ``json3`` and ``trio``."""

def haystack_decode(text: str, format: str) -> HaystackGrid:
    """Decode grid text into a grid handle."""

def haystack_decode_value(text: str) -> Any:
    """Decode one Zinc value into its Python object."""

def haystack_encode_value(value: Any) -> str:
    """Encode a Python value as Zinc."""

def haystack_grid(grid: Any) -> HaystackGrid:
    """Convert a ``buildwire.haystack.Grid`` into a grid handle."""

class HaystackGrid:
    """A grid decoded or received in Rust (see :class:`buildwire.haystack.Grid`)."""

    def meta(self) -> dict[str, Any]: ...
    def columns(self) -> list[tuple[str, dict[str, Any]]]: ...
    def rows(self) -> list[dict[str, Any]]: ...
    def __len__(self) -> int: ...
    def encode(self, format: str) -> str: ...
    def frame_columns(
        self, target: str = "pandas"
    ) -> list[tuple[str, str, Any, bytearray, str | None]]: ...

class BacnetClientHandle:
    """A bound BACnet/IP client (see :class:`buildwire.bacnet.Client`).

    Values cross as Python objects; failures raise the ``buildwire.bacnet_errors``
    family. ``timeout`` (seconds per attempt) and ``retries`` of a call override the
    client's when given.
    """

    local_address: str
    broadcast_address: str | None
    timeout: float
    retries: int
    async def read(
        self,
        device: str,
        object_id: str,
        property_id: str,
        index: int | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> Any: ...
    async def write(
        self,
        device: str,
        object_id: str,
        property_id: str,
        value: float | int | str | bool | None,
        priority: int | None = None,
        index: int | None = None,
        value_type: str | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None: ...
    async def read_multiple(
        self,
        device: str,
        specs: list[tuple[str, list[str]]],
        timeout: float | None = None,
        retries: int | None = None,
    ) -> list[dict[str, Any]]: ...
    async def read_many(
        self,
        device: str,
        references: list[tuple[str, str, int | None]],
        timeout: float | None = None,
        retries: int | None = None,
    ) -> list[dict[str, Any]]: ...
    async def subscribe_cov(
        self,
        device: str,
        object_id: str,
        property_id: str | None = None,
        index: int | None = None,
        confirmed: bool = False,
        lifetime: int = 300,
        increment: float | None = None,
    ) -> BacnetCovHandle: ...
    async def who_is(
        self,
        timeout: float = 2.0,
        low: int | None = None,
        high: int | None = None,
        device: str | None = None,
    ) -> list[dict[str, Any]]: ...
    async def who_has(
        self,
        object_id: str | None = None,
        name: str | None = None,
        timeout: float = 2.0,
        low: int | None = None,
        high: int | None = None,
        device: str | None = None,
    ) -> list[tuple[str, str, str, str]]:
        """Find an object: (address, device, object, name) of each I-Have."""
    async def read_range(
        self,
        device: str,
        object_id: str,
        property_id: str,
        index: int | None = None,
        kind: str | None = None,
        reference: int | tuple[int, int, int, int, int, int, int] | None = None,
        count: int | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> dict[str, Any]:
        """Read a range; ``records`` in the answer tells whether ``items`` are log records."""
    async def write_multiple(
        self,
        device: str,
        writes: list[tuple[Any, ...]],
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None:
        """Write (object, property, value, priority, index, value_type) tuples."""
    async def change_list(
        self,
        device: str,
        object_id: str,
        property_id: str,
        items: list[Any],
        add: bool,
        index: int | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None: ...
    async def device_communication_control(
        self,
        device: str,
        state: str,
        minutes: int | None = None,
        password: str | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None: ...
    async def reinitialize_device(
        self,
        device: str,
        state: str,
        password: str | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None: ...
    async def time_synchronization(
        self,
        fields: tuple[int, int, int, int, int, int, int],
        utc: bool = False,
        device: str | None = None,
    ) -> None:
        """Send (year, month, day, hour, minute, second, hundredths)."""
    def close(self) -> None: ...

class BacnetCovHandle:
    """A live COV subscription (see :class:`buildwire.bacnet.CovSubscription`)."""

    process_identifier: int
    async def next(self) -> dict[str, Any] | None: ...
    async def cancel(self) -> None: ...

class BacnetServerHandle:
    """A running BACnet/IP device (see :class:`buildwire.bacnet.Server`)."""

    local_address: str
    @property
    def object_count(self) -> int: ...
    @property
    def cov_subscriptions(self) -> int: ...
    @property
    def dropped_writes(self) -> int: ...
    def add_object(self, spec_json: str) -> str: ...
    def remove_object(self, object_id: str) -> None: ...
    def get(self, object_id: str, property_id: str, index: int | None = None) -> Any: ...
    def set(
        self,
        object_id: str,
        property_id: str,
        value: float | int | str | bool | None,
        value_type: str | None = None,
    ) -> None: ...
    async def next_write(self) -> tuple[str, str, Any] | None: ...
    async def stop(self) -> None: ...

async def bacnet_client(
    bind: str,
    broadcast: str | None = None,
    port: int | None = None,
    timeout: float = 3.0,
    retries: int = 3,
) -> BacnetClientHandle: ...
async def bacnet_serve(
    bind: str, objects: str = "stress", broadcast: str | None = None
) -> BacnetServerHandle: ...

class BacnetRouterHandle:
    """A running router (see :class:`buildwire.bacnet_network.Router`)."""

    def ports(self) -> str: ...
    def routes(self) -> str: ...
    def stats(self) -> str: ...
    def set_busy(self, busy: bool) -> None: ...
    def close(self) -> None: ...

class BacnetBbmdHandle:
    """A running BBMD (see :class:`buildwire.bacnet_network.Bbmd`)."""

    local_address: str
    def bdt(self) -> str: ...
    def fdt(self) -> str: ...
    def stats(self) -> str: ...
    def close(self) -> None: ...

async def bacnet_router(
    ports: list[str],
    routes: list[str] = ...,
    device_id: int | None = None,
    objects: str = "none",
    accept_routing_table_updates: bool = False,
) -> BacnetRouterHandle: ...
async def bacnet_bbmd(
    bind: str,
    bdt: list[str] = ...,
    broadcast: str | None = None,
    allow_write_bdt: bool = False,
    max_foreign_devices: int = 512,
) -> BacnetBbmdHandle: ...
async def bacnet_read_bdt(address: str, timeout: float = 3.0) -> str: ...
async def bacnet_read_fdt(address: str, timeout: float = 3.0) -> str: ...
async def bacnet_foreign_client(
    bind: str, bbmd: str, ttl: int = 60, broadcast: str | None = None
) -> BacnetClientHandle: ...

class OpcuaClientHandle:
    """A connected OPC UA session (see :class:`buildwire.opcua.Client`)."""

    async def browse(self, node_id: str) -> list[dict[str, str | None]]:
        """Return rows of ``node_id``, ``browse_name``, ``display_name``, ``node_class``."""
    async def read(
        self, node_ids: list[str], attribute: str | None = None
    ) -> list[tuple[Any, str, int]]:
        """Return one (value, status name, status code) per node."""
    async def write(self, node_id: str, value: str, type_name: str | None = None) -> None: ...
    async def call(self, object_id: str, method_id: str, args: list[str]) -> list[Any]:
        """Return the output values (ByteStrings as ``bytes``)."""
    async def create_subscription(self, interval_ms: float) -> int: ...
    async def monitor(
        self,
        subscription_id: int,
        node_ids: list[str],
        sampling_ms: float,
        queue_size: int,
        deadband: tuple[str, float] | None = None,
    ) -> list[tuple[str, int, str, int]]:
        """Return one (node, client handle, status name, status code) per node."""
    async def next_change(self, timeout: float) -> dict[str, Any] | None:
        """Return the next change as a dict, or None after ``timeout`` seconds.

        Keys: ``node``, ``value``, ``type``, ``status``, ``source_timestamp`` and
        ``server_timestamp`` (aware ``datetime`` or None), ``handle``, ``subscription``.
        """
    async def delete_subscriptions(self, subscription_ids: list[int]) -> None: ...
    async def state(self) -> tuple[list[int], int]:
        """Return (subscription ids, reconnects so far)."""
    reconnects: int
    async def close(self) -> None: ...

class OpcuaServerHandle:
    """A running OPC UA server (see :class:`buildwire.opcua.Server`)."""

    endpoint: str
    dropped_writes: int
    def add_namespace(self, uri: str) -> int: ...
    def add_object(self, parent: str, node_id: str, name: str, folder: bool) -> None: ...
    def add_variable(
        self,
        parent: str,
        node_id: str,
        name: str,
        value: Any,
        data_type: str,
        writable: bool,
        description: str | None = None,
        eu_range: tuple[float, float] | None = None,
        units: tuple[str, str | None, str] | None = None,
    ) -> None: ...
    def add_method(
        self,
        parent: str,
        node_id: str,
        name: str,
        inputs: list[tuple[str, str, str]],
        outputs: list[tuple[str, str, str]],
    ) -> None: ...
    def set_value(self, node_id: str, value: Any) -> None: ...
    def get_value(self, node_id: str) -> Any: ...
    async def next_write(self) -> tuple[str, Any, datetime.datetime, str | None] | None:
        """Return (node, value, source timestamp, user), or None once stopped."""
    async def next_call(self) -> dict[str, Any] | None:
        """Return a dict of ``id``, ``object``, ``method``, ``inputs``, ``user``, or None."""
    def complete_call(self, id: int, method_id: str, outputs: list[Any], status: int) -> None: ...
    async def stop(self) -> None: ...

async def opcua_connect(
    endpoint: str,
    user: str | None = None,
    password: str | None = None,
    security: str | None = None,
    mode: str | None = None,
    pki: str | None = None,
    trust_server: bool = False,
    user_cert: str | None = None,
    user_key: str | None = None,
    reconnect_timeout: float = 30.0,
    allow_cleartext_password: bool = False,
) -> OpcuaClientHandle: ...
async def opcua_serve(
    bind: str,
    security: list[str] | None = None,
    mode: str | None = None,
    pki: str | None = None,
    auto_trust: bool = False,
    users: list[tuple[str, str]] | None = None,
    allow_cleartext_passwords: bool = False,
) -> OpcuaServerHandle: ...

class HaystackClientHandle:
    """A connected Haystack client (see :class:`buildwire.haystack.Client`)."""

    url: str
    @property
    def auth_token(self) -> str | None: ...
    async def call(self, op: str, request: Any) -> HaystackGrid: ...
    async def read(self, filter: str, limit: int | None = None) -> HaystackGrid: ...
    async def read_ids(self, ids: list[str]) -> HaystackGrid: ...
    async def nav(self, nav_id: str | None = None) -> HaystackGrid: ...
    async def filtered(
        self, op: str, filter: str | None = None, limit: int | None = None
    ) -> HaystackGrid: ...
    async def point_write(
        self,
        id: str,
        level: int | None = None,
        value: Any = None,
        who: str | None = None,
    ) -> HaystackGrid: ...
    async def his_read(self, id: str, range: str) -> HaystackGrid: ...
    async def his_rollup(self, id: str, range: str, interval: Any, fold: str) -> HaystackGrid: ...
    async def his_write(self, id: str, samples: list[tuple[Any, Any]]) -> HaystackGrid: ...
    async def invoke_action(self, id: str, action: str, args: dict[str, Any]) -> HaystackGrid: ...
    async def watch(
        self, ids: list[str], dis: str, lease: float | None = None, interval: float = 1.0
    ) -> HaystackWatchHandle: ...

class HaystackWatchHandle:
    """An open watch (see :meth:`buildwire.haystack.Client.watch`)."""

    id: str
    async def next(self) -> HaystackGrid | None: ...
    async def close(self) -> None: ...

async def haystack_connect(
    url: str,
    username: str | None = None,
    password: str | None = None,
    wire: str = "zinc",
    timeout: float = 30.0,
    ca_pem: bytes | None = None,
    websocket: bool = False,
) -> HaystackClientHandle: ...

class BacnetScHubHandle:
    """A running BACnet/SC hub (see :class:`buildwire.bacnet_sc.Hub`)."""

    uri: str
    async def stats(self) -> str: ...
    async def stop(self) -> None: ...

class BacnetScDeviceHandle:
    """A device on a BACnet/SC node (see :class:`buildwire.bacnet_sc.Device`)."""

    vmac: str
    async def stop(self) -> None: ...

def bacnet_sc_certs(directory: str, names: list[str], days: int = 365) -> list[str]: ...
async def bacnet_sc_hub(
    bind: str,
    cert: str | None = None,
    key: str | None = None,
    ca: list[str] = ...,
    no_tls: bool = False,
) -> BacnetScHubHandle: ...
async def bacnet_sc_device(
    hub: str,
    cert: str | None = None,
    key: str | None = None,
    ca: list[str] = ...,
    no_tls: bool = False,
    device_id: int = 400,
    failover_hub: str | None = None,
) -> BacnetScDeviceHandle: ...

class BacnetScClientHandle:
    """A client on a BACnet/SC node (see :class:`buildwire.bacnet_sc.Client`)."""

    async def who_is(self, timeout: float) -> str: ...
    async def read(
        self, device: str, object_id: str, property_id: str, index: int | None = None
    ) -> Any: ...
    async def write(
        self,
        device: str,
        object_id: str,
        property_id: str,
        value: str,
        priority: int | None = None,
    ) -> None: ...
    def close(self) -> None: ...

async def bacnet_sc_client(
    hub: str,
    cert: str | None = None,
    key: str | None = None,
    ca: list[str] = ...,
    no_tls: bool = False,
) -> BacnetScClientHandle: ...

class GatewayHandle:
    """A running gateway (see :class:`buildwire.gateway.Gateway`)."""

    url: str
    ws_url: str
    @property
    def report(self) -> str: ...
    @property
    def stats(self) -> str: ...
    def model(self, format: str) -> str: ...
    async def stop(self) -> None: ...

async def gateway_start(
    config_json: str, rules_toml: str | None = None, users: list[str] = ...
) -> GatewayHandle: ...
