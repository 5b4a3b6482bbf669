"""A subscription across a cut connection, on 127.0.0.1 (issue 23, subscriptions).

node-opcua's client subscribes through a small TCP proxy to a counter on our server
(`opcua serve --simulate 1`: ``ns=1;s=Sim.0`` goes up by one every 200 ms; the client samples
it every 50 ms with queueSize 100). The proxy cuts both sockets and refuses connections for
two seconds, then lets the client back in; node-opcua re-activates its session on a new
channel. The server samples on while no channel is attached, so every value reaches a
NotificationMessage: the values received form one run of consecutive integers across the
outage.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from pathlib import Path

from test_opcua_interop import free_tcp_port, start, stop
from test_opcua_user_tokens import node_env, node_opcua

__all__ = ["node_opcua"]

CHANGE_MS = 200
OUTAGE_S = 2.0
RUN_S = 9


class CuttingProxy:
    """Forwards 127.0.0.1:``port`` to the server; :meth:`cut` closes every forwarded socket
    (both sides) and refuses new connections until :meth:`restore`."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open = threading.Event()
        self.open.set()
        self.lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open.is_set():
                client.close()
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, server]
                self.connections += 1
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        self.open.clear()
        with self.lock:
            for end in self.sockets:
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                end.close()
            self.sockets.clear()

    def restore(self) -> None:
        self.open.set()

    def close(self) -> None:
        self.cut()
        self.listener.close()


def test_node_opcua_subscription_loses_no_sample_across_an_outage(
    buildwire_cmd: list[str], node_opcua: list[str], tmp_path: Path
) -> None:
    port = free_tcp_port()
    server, _ = start(
        [
            *buildwire_cmd,
            "opcua",
            "serve",
            "--bind",
            f"127.0.0.1:{port}",
            "--simulate",
            "1",
            "--simulate-interval",
            f"{CHANGE_MS}ms",
        ]
    )
    proxy = CuttingProxy(port)
    endpoint = f"opc.tcp://127.0.0.1:{proxy.port}/"
    client = subprocess.Popen(
        [*node_opcua, "outage", endpoint, "ns=1;s=Sim.0", str(RUN_S)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=node_env(),
    )
    try:
        assert client.stdout is not None
        for line in client.stdout:
            if line.startswith("{") and json.loads(line).get("event") == "subscribed":
                break
        else:
            raise AssertionError("node-opcua did not subscribe")
        time.sleep(2.0)
        proxy.cut()
        time.sleep(OUTAGE_S)
        proxy.restore()
        rest, _ = client.communicate(timeout=60)
    finally:
        proxy.close()
        if client.poll() is None:
            client.kill()
            client.wait()
        stop(server)
    lines = [json.loads(line) for line in rest.splitlines() if line.startswith("{")]
    events = [line["event"] for line in lines if "event" in line]
    result = lines[-1]
    assert "connection_reestablished" in events, lines
    assert result["reconnects"] >= 1, result
    assert proxy.connections >= 2
    # A sample delivered twice (same value, same source timestamp) is a NotificationMessage
    # that node-opcua republished because its acknowledgement was lost with the channel:
    # allowed (OPC 10000-4 §5.13.5); a missing value is not.
    samples = sorted({(int(value), stamp) for value, stamp in result["values"]})
    values = [value for value, _ in samples]
    # About RUN_S / 0.2 s values; the outage (10 changes) lies inside them.
    assert len(values) >= (RUN_S - 2) * 1000 // CHANGE_MS, result
    first = values[0]
    assert values == list(range(first, first + len(values))), result
