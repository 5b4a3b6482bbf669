#!/usr/bin/env python3
"""Generates crates/opcua/src/server/namespace_zero_table.rs from the OPC Foundation NodeSet.

Usage: scripts/gen_opcua_ns0.py PATH/TO/Opc.Ua.NodeSet2.xml [OUTPUT.rs]

The input is the published `Schema/Opc.Ua.NodeSet2.xml` of github.com/OPCFoundation/UA-Nodeset
(specification data). Only facts are taken from it: NodeIds, NodeClasses, BrowseNames,
DisplayNames, references with their types and directions, DataType, ValueRank, IsAbstract,
Symmetric, InverseName, AccessLevel, EventNotifier and simple values (numbers, strings,
localized texts, enumeration values, method arguments). Descriptions, documentation and
categories are not copied.

Kept: every ReferenceType, ObjectType, VariableType and DataType; their members (the nodes
reached from a type through forward hierarchical references, i.e. the instance declarations
with their HasModellingRule, and the EnumStrings / EnumValues of data types); the modelling
rule objects; the "Default Binary" encoding object of each data type; the standard folders
(Root, Objects, Types, Views and the four type folders); the Server object and its members,
except the contents of Server.ServerDiagnostics other than EnabledFlag and the per-namespace
metadata objects under Server.Namespaces.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import deque
from pathlib import Path

UA = "{http://opcfoundation.org/UA/2011/03/UANodeSet.xsd}"
UAX = "{http://opcfoundation.org/UA/2008/02/Types.xsd}"
DEFAULT_OUTPUT = (
    Path(__file__).resolve().parent.parent
    / "crates"
    / "opcua"
    / "src"
    / "server"
    / "namespace_zero_table.rs"
)

CLASSES = {
    "UAReferenceType": "ReferenceType",
    "UAObjectType": "ObjectType",
    "UAVariableType": "VariableType",
    "UADataType": "DataType",
    "UAObject": "Object",
    "UAVariable": "Variable",
    "UAMethod": "Method",
}
TYPE_CLASSES = {"ReferenceType", "ObjectType", "VariableType", "DataType"}
HAS_SUBTYPE = 45
HAS_MODELLING_RULE = 37
HAS_ENCODING = 38
HIERARCHICAL_REFERENCES = 33
# Folders kept as they are (their Organizes references to kept nodes follow).
FOLDERS = [84, 85, 86, 87, 88, 89, 90, 91]
SERVER = 2253
SERVER_DIAGNOSTICS = 2274
SERVER_DIAGNOSTICS_ENABLED_FLAG = 2294
HAS_TYPE_DEFINITION = 40
MANDATORY = 78
# Optional Server members the server fills in: OperationLimits (with all its members),
# MaxArrayLength, MaxStringLength, MaxByteStringLength.
SERVER_OPTIONAL = {11704, 11702, 11703, 12911}
ENUM_VALUE_TYPE_ENCODING = 7616
ARGUMENT_ENCODING = 297


def numeric(text: str, aliases: dict[str, str]) -> int:
    """Return the number of a namespace-0 numeric NodeId written as `i=N` or as an alias."""
    text = aliases.get(text, text).strip()
    if not text.startswith("i="):
        raise ValueError(f"not a namespace-0 numeric NodeId: {text!r}")
    return int(text[2:])


def rust_str(text: str) -> str:
    """Return `text` as a Rust string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def child_text(element: ET.Element, name: str) -> str:
    """Return the text of the child `name` (Types.xsd namespace), empty when absent."""
    found = element.find(UAX + name)
    return (found.text or "") if found is not None else ""


def parse_value(element: ET.Element, aliases: dict[str, str]) -> str | None:
    """Return the Rust `V` expression for a <Value>, or None when the table holds no such value.

    The table holds Int32, UInt32, LocalizedText, lists of LocalizedText, EnumValues and
    Arguments.
    """
    value = element.find(UA + "Value")
    if value is None or len(value) == 0:
        return None
    item = value[0]
    tag = item.tag.replace(UAX, "")
    text = (item.text or "").strip()
    if tag == "Int32":
        return f"V::I32({int(text)})"
    if tag == "UInt32":
        return f"V::U32({int(text)})"
    if tag == "LocalizedText":
        return f"V::Text({rust_str(child_text(item, 'Text'))})"
    if tag == "ListOfLocalizedText":
        items = ", ".join(rust_str(child_text(s, "Text")) for s in item)
        return f"V::Texts(&[{items}])"
    if tag == "ListOfExtensionObject":
        return list_of_extension_objects(item, aliases)
    return None


def list_of_extension_objects(item: ET.Element, aliases: dict[str, str]) -> str | None:
    """Return EnumValueType lists (value, display name) or Argument lists (name, type, rank)."""
    enum_values: list[str] = []
    arguments: list[str] = []
    for extension in item:
        type_id = numeric(child_text(extension.find(UAX + "TypeId"), "Identifier"), aliases)
        body = extension.find(UAX + "Body")
        if body is None or len(body) != 1:
            return None
        fields = body[0]
        if type_id == ENUM_VALUE_TYPE_ENCODING:
            display = fields.find(UAX + "DisplayName")
            name = child_text(display, "Text") if display is not None else ""
            enum_values.append(f"({int(child_text(fields, 'Value'))}, {rust_str(name)})")
        elif type_id == ARGUMENT_ENCODING:
            data_type = fields.find(UAX + "DataType")
            data_type_id = numeric(child_text(data_type, "Identifier"), aliases)
            rank = int(child_text(fields, "ValueRank") or "-1")
            name = rust_str(child_text(fields, "Name"))
            arguments.append(f"({name}, {data_type_id}, {rank})")
        else:
            return None
    if enum_values and not arguments:
        return f"V::EnumValues(&[{', '.join(enum_values)}])"
    if arguments and not enum_values:
        return f"V::Arguments(&[{', '.join(arguments)}])"
    return None


def server_members(
    nodes: dict[int, ET.Element],
    forward: dict[int, list[tuple[int, int]]],
    hierarchical: set[int],
) -> set[int]:
    """Return the Server object's members to keep.

    Those are the members whose declaration in their parent's type is Mandatory (recursively)
    and the optional ones of SERVER_OPTIONAL; of ServerDiagnostics only EnabledFlag (its
    diagnostic arrays and summaries are left out).
    """
    supertype = {t: s for s, links in forward.items() for r, t in links if r == HAS_SUBTYPE}

    def type_of(node_id: int) -> int | None:
        return next((t for r, t in forward.get(node_id, []) if r == HAS_TYPE_DEFINITION), None)

    def mandatory(type_id: int | None, browse_name: str) -> bool:
        while type_id is not None:
            for reference_type, target in forward.get(type_id, []):
                name = nodes[target].get("BrowseName")
                if reference_type in hierarchical and name == browse_name:
                    rules = {t for r, t in forward.get(target, []) if r == HAS_MODELLING_RULE}
                    return MANDATORY in rules
            type_id = supertype.get(type_id)
        return False

    found = {SERVER}
    queue = deque([SERVER])
    while queue:
        parent = queue.popleft()
        for reference_type, child in forward.get(parent, []):
            if reference_type not in hierarchical or child in found or child not in nodes:
                continue
            if parent == SERVER_DIAGNOSTICS and child != SERVER_DIAGNOSTICS_ENABLED_FLAG:
                continue
            name = nodes[child].get("BrowseName", "")
            if (
                child in SERVER_OPTIONAL
                or parent in SERVER_OPTIONAL
                or mandatory(type_of(parent), name)
            ):
                found.add(child)
                queue.append(child)
    return found


def main() -> int:
    """Read the NodeSet named on the command line and write the Rust table."""
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    source = Path(sys.argv[1])
    output = Path(sys.argv[2]) if len(sys.argv) == 3 else DEFAULT_OUTPUT
    root = ET.parse(source).getroot()
    model = root.find(f"{UA}Models/{UA}Model")
    assert model is not None, "no <Model> element"
    aliases = {a.get("Alias", ""): (a.text or "").strip() for a in root.iter(UA + "Alias")}

    nodes: dict[int, ET.Element] = {}
    classes: dict[int, str] = {}
    for element in root:
        kind = CLASSES.get(element.tag.replace(UA, ""))
        if kind is None:
            continue
        node_id = numeric(element.get("NodeId", ""), aliases)
        nodes[node_id] = element
        classes[node_id] = kind

    # Every reference once, forward: (source, type, target).
    references: set[tuple[int, int, int]] = set()
    for node_id, element in nodes.items():
        for reference in element.iter(UA + "Reference"):
            target = numeric(reference.text or "", aliases)
            reference_type = numeric(reference.get("ReferenceType", ""), aliases)
            if reference.get("IsForward", "true") == "false":
                references.add((target, reference_type, node_id))
            else:
                references.add((node_id, reference_type, target))
    forward: dict[int, list[tuple[int, int]]] = {}
    for source_id, reference_type, target in references:
        forward.setdefault(source_id, []).append((reference_type, target))

    hierarchical = {HIERARCHICAL_REFERENCES}
    pending = deque([HIERARCHICAL_REFERENCES])
    while pending:
        for reference_type, target in forward.get(pending.popleft(), []):
            if reference_type == HAS_SUBTYPE and target not in hierarchical:
                hierarchical.add(target)
                pending.append(target)
    hierarchical.discard(HAS_SUBTYPE)

    def members(start: list[int], skip: set[int]) -> set[int]:
        """Return the nodes reached from `start` through forward hierarchical references."""
        found: set[int] = set()
        queue = deque(start)
        while queue:
            current = queue.popleft()
            for reference_type, target in forward.get(current, []):
                if reference_type not in hierarchical or target in skip:
                    continue
                if target in nodes and classes[target] not in TYPE_CLASSES and target not in found:
                    found.add(target)
                    queue.append(target)
        return found

    types = {n for n, kind in classes.items() if kind in TYPE_CLASSES}
    keep = set(types) | set(FOLDERS) | {SERVER}
    keep |= members(sorted(types), set())
    keep |= server_members(nodes, forward, hierarchical)
    # The modelling rules the instance declarations point to, and their NamingRule.
    rules = {t for s, r, t in references if r == HAS_MODELLING_RULE and s in keep}
    keep |= rules | members(sorted(rules), set())
    # The binary encoding of every data type.
    keep |= {
        t
        for s, r, t in references
        if r == HAS_ENCODING and s in types and nodes[t].get("BrowseName") == "Default Binary"
    }
    # Type definitions of kept instances (all are types, hence kept) and targets must exist.
    kept_references = sorted(
        (s, r, t) for s, r, t in references if s in keep and t in keep and r in types
    )

    rows = []
    skipped_values = 0
    for node_id in sorted(keep):
        element = nodes[node_id]
        kind = classes[node_id]
        browse = element.get("BrowseName", "")
        if ":" in browse.split(" ")[0] and browse.split(":", 1)[0].isdigit():
            index, browse = browse.split(":", 1)
            assert index == "0", f"i={node_id}: BrowseName outside namespace 0"
        display_element = element.find(UA + "DisplayName")
        display = (display_element.text or "") if display_element is not None else browse
        flags = []
        if element.get("IsAbstract") == "true":
            flags.append("ABSTRACT")
        if element.get("Symmetric") == "true":
            flags.append("SYMMETRIC")
        flag_text = " | ".join(flags) if flags else "0"
        data_type = numeric(element.get("DataType", "i=24"), aliases)
        rank = int(element.get("ValueRank", "-1"))
        value = parse_value(element, aliases)
        if kind == "Variable" and value is None:
            if element.find(UA + "Value") is not None:
                skipped_values += 1
            value = "V::None"
        name = rust_str(browse)
        if kind == "ReferenceType":
            inverse_element = element.find(UA + "InverseName")
            inverse = (inverse_element.text or "") if inverse_element is not None else ""
            row = f"rt({node_id}, {name}, {flag_text}, {rust_str(inverse)})"
        elif kind == "ObjectType":
            row = f"ot({node_id}, {name}, {flag_text})"
        elif kind == "DataType":
            row = f"dt({node_id}, {name}, {flag_text})"
        elif kind == "VariableType":
            row = f"vt({node_id}, {name}, {flag_text}, {data_type}, {rank})"
        elif kind == "Object":
            row = f"o({node_id}, {name})"
        elif kind == "Variable":
            access = int(element.get("AccessLevel", "1"))
            row = f"v({node_id}, {name}, {data_type}, {rank}, {access}, {value})"
        else:
            row = f"m({node_id}, {name})"
        if display != browse:
            row += f".shown_as({rust_str(display)})"
        rows.append(row)

    counts: dict[str, int] = {}
    for node_id in keep:
        counts[classes[node_id]] = counts.get(classes[node_id], 0) + 1
    summary = ", ".join(f"{counts[k]} {k}" for k in sorted(counts))
    header = [
        "// @generated by scripts/gen_opcua_ns0.py: do not edit by hand.",
        "//",
        "// Source: Schema/Opc.Ua.NodeSet2.xml of https://github.com/OPCFoundation/UA-Nodeset,",
        f"// model {model.get('ModelUri')} version {model.get('Version')},"
        f" published {model.get('PublicationDate')}.",
        "// Only facts are kept (ids, classes, names, references, data types, value ranks, flags,",
        "// simple values); no descriptions. Regenerate with",
        "//     python3 scripts/gen_opcua_ns0.py path/to/Opc.Ua.NodeSet2.xml",
        f"// Kept: {len(rows)} nodes ({summary}), {len(kept_references)} references;",
        f"// {skipped_values} non-simple values left out (their variables read as null).",
        "",
        "use super::table::{ABSTRACT, Row, SYMMETRIC, V, dt, m, o, ot, rt, v, vt};",
        "",
        "/// The nodes, by NodeId.",
        "#[rustfmt::skip]",
        "pub(super) const NODES: &[Row] = &[",
    ]
    lines = header + [f"    {row}," for row in rows]
    lines += [
        "];",
        "",
        "/// The references, forward: (source, reference type, target).",
        "#[rustfmt::skip]",
        "pub(super) const REFERENCES: &[(u32, u32, u32)] = &[",
    ]
    lines += [f"    ({s}, {r}, {t})," for s, r, t in kept_references]
    lines += ["];", ""]
    output.write_text("\n".join(lines))
    print(f"{output}: {len(rows)} nodes ({summary}), {len(kept_references)} references")
    return 0


if __name__ == "__main__":
    sys.exit(main())
