"""The JSON Schema of BACnet device files (docs/schemas/bacnet-device.schema.json) agrees
with the reader of `buildwire bacnet serve --objects FILE`: every example device file of the
repository (the .json files with a device and its objects, and the JSON examples of the
guide, the README and the profile module's documentation) validates against the schema and
is served by a real device (the Python device, which reads the same JSON as text); a file
with an unknown member or a wrong type fails both."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from buildwire import bacnet

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "schemas" / "bacnet-device.schema.json").read_text())
FENCED_JSON = re.compile(r"```json\n(.*?)```", re.DOTALL)


def _is_device_file(document: object) -> bool:
    return isinstance(document, dict) and "device" in document and "objects" in document


def _examples() -> list[tuple[str, dict]]:
    """(where, document) for every example device file of the repository."""
    found: list[tuple[str, dict]] = []
    skip = {".venv", "target", "node_modules", "book", ".git"}
    for path in sorted(ROOT.rglob("*.json")):
        if skip & set(path.relative_to(ROOT).parts):
            continue
        try:
            document = json.loads(path.read_text())
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        if _is_device_file(document):
            found.append((str(path.relative_to(ROOT)), document))
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for path in texts:
        for number, block in enumerate(FENCED_JSON.findall(path.read_text())):
            document = json.loads(block)
            if _is_device_file(document):
                found.append((f"{path.relative_to(ROOT)} (json block {number + 1})", document))
    module = (ROOT / "crates/bacnet/src/objects/profile.rs").read_text()
    doc = "\n".join(line[4:] for line in module.splitlines() if line.startswith("//! "))
    for number, block in enumerate(FENCED_JSON.findall(doc + "\n")):
        found.append((f"profile.rs (json block {number + 1})", json.loads(block)))
    return found


EXAMPLES = _examples()


def test_the_schema_is_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_repository_has_example_device_files() -> None:
    places = [where for where, _ in EXAMPLES]
    assert "docs/examples/bacnet-device.json" in places
    assert any(where.startswith("docs/formats.md") for where in places)
    assert len(places) >= 3, places


@pytest.mark.parametrize(("where", "document"), EXAMPLES, ids=[w for w, _ in EXAMPLES])
async def test_every_example_validates_and_is_served(where: str, document: dict) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    async with bacnet.Server.start("127.0.0.1:0", objects=json.dumps(document)) as server:
        # The Device object and every object of the file.
        assert server.object_count == len(document["objects"]) + 1, where


@pytest.mark.parametrize(
    ("change", "schema_path"),
    [
        (lambda d: d["device"].update(colour="red"), "device"),
        (lambda d: d["objects"][0].update(present_value="warm"), "objects/0/present_value"),
        (lambda d: d["objects"][0].pop("name"), "objects/0"),
        (lambda d: d["device"].update(instance=4194303), "device/instance"),
    ],
)
async def test_a_wrong_file_fails_the_schema_and_the_reader(
    change: object, schema_path: str
) -> None:
    document = json.loads((ROOT / "docs/examples/bacnet-device.json").read_text())
    change(document)  # type: ignore[operator]
    with pytest.raises(jsonschema.ValidationError) as refused:
        jsonschema.Draft202012Validator(SCHEMA).validate(document)
    assert "/".join(str(p) for p in refused.value.absolute_path) == schema_path
    with pytest.raises(ValueError):
        await bacnet.Server.start("127.0.0.1:0", objects=json.dumps(document))
