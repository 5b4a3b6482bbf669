"""Namespace 0 of our server as generic clients walk it (issue 23), on 127.0.0.1 only.

`buildwire opcua serve --bench-methods` is browsed and read by two independent clients:
asyncua (tests/peers/asyncua_address_space.py, Python 3.11 peers venv) and node-opcua
(tests/peers/node_opcua_address_space.js; node-opcua is installed by npm into tests/peers/node
on first use, not committed). Both must find the Types folders filled, DataType and ValueRank on
BaseDataVariableType, BuildInfo decoded as a structure with values, the ServerCapabilities
members with values, and a method's InputArguments NodeId that parses back to the same node.
"""

from __future__ import annotations

import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from test_opcua_interop import REPO, our_server, peer_python, run_json  # noqa: F401

PEER_SCRIPTS = REPO / "tests" / "peers"
NODE_DIR = PEER_SCRIPTS / "node"
NODE_OPCUA = "node-opcua@2.186.4"

TYPES_ROOTS = {
    "ObjectTypes": "BaseObjectType",
    "VariableTypes": "BaseVariableType",
    "DataTypes": "BaseDataType",
    "ReferenceTypes": "References",
}
CAPABILITIES = {
    "ServerProfileArray",
    "LocaleIdArray",
    "MinSupportedSampleRate",
    "MaxBrowseContinuationPoints",
    "MaxQueryContinuationPoints",
    "MaxHistoryContinuationPoints",
    "SoftwareCertificates",
    "ModellingRules",
    "AggregateFunctions",
    "OperationLimits",
}


@pytest.fixture(scope="module")
def node_opcua() -> Path:
    """Installs node-opcua into tests/peers/node once (npm, from its registry)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed for the node-opcua interop test")
    modules = NODE_DIR / "node_modules"
    if not (modules / "node-opcua").is_dir():
        NODE_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund", NODE_OPCUA],
            check=True,
            capture_output=True,
            timeout=900,
        )
    assert (modules / "node-opcua").is_dir()
    return modules


def check_walk(out: dict) -> None:
    """The assertions both clients' findings must satisfy."""
    for folder, root in TYPES_ROOTS.items():
        assert root in out["types_folders"][folder], out["types_folders"]
    assert out["base_object_subtypes"] > 20
    assert out["i63_data_type"] in ("i=24", "ns=0;i=24")
    assert out["i63_value_rank"] == -2
    assert out["build_info_type"] == "BuildInfo"
    info = out["build_info"]
    assert info["ProductUri"] == "urn:buildwire:opcua"
    assert info["ManufacturerName"] == "buildwire"
    assert info["ProductName"] and info["SoftwareVersion"] and info["BuildNumber"]
    build_date = datetime.fromisoformat(info["BuildDate"].replace("Z", "+00:00"))
    assert datetime(2020, 1, 1, tzinfo=timezone.utc) < build_date
    capabilities = out["capabilities"]
    assert CAPABILITIES <= set(capabilities), capabilities
    assert capabilities["ServerProfileArray"]
    assert capabilities["MaxBrowseContinuationPoints"] > 0
    assert capabilities["SoftwareCertificates"] == []
    assert capabilities["OperationLimits"] == "Object"
    assert out["input_arguments_id"] == "ns=1;s=6000.InputArguments"
    assert out["input_arguments_round_trip"] is True
    assert out["input_arguments_class"] == "Variable"
    assert out["input_arguments"] == ["size"]


def test_asyncua_walks_namespace_zero(peer_python: Path, our_server: str) -> None:  # noqa: F811
    out = run_json([str(peer_python), str(PEER_SCRIPTS / "asyncua_address_space.py"), our_server])
    check_walk(out)
    # Static values carry their start-up time, not 1601.
    stamp = out["build_date_source_timestamp"]
    assert stamp is None or not stamp.startswith("1601")


def test_node_opcua_walks_namespace_zero(
    node_opcua: Path,
    our_server: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    # node-opcua keeps its client certificate under $XDG_CONFIG_HOME: a scratch folder.
    out = run_json(
        [
            "env",
            f"NODE_PATH={node_opcua}",
            f"XDG_CONFIG_HOME={tmp_path}",
            "node",
            str(PEER_SCRIPTS / "node_opcua_address_space.js"),
            our_server,
        ]
    )
    check_walk(out)
    assert out["build_info_status"] == "Good"
