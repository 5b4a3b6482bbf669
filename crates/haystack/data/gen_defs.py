#!/usr/bin/env python3
"""Generates data/defs.trio, the standard Haystack 4 defs loaded by src/defs/.

Input: `tests/defs/defs.zinc` of the Rust crate libhaystack 4.1.0 (in the cargo registry,
~/.cargo/registry/src/*/libhaystack-4.1.0/tests/defs/defs.zinc): one Zinc grid row per def
of the libs ph, phScience, phIoT and phIct (715 defs).

    python3 gen_defs.py ~/.cargo/registry/src/*/libhaystack-4.1.0/tests/defs/defs.zinc > defs.trio

Output: one Trio record per def, sorted by def name, keeping only the structural tags
(see KEEP). Prose (`doc`, `wikipedia`, `dis`, ...) is dropped; a string `enum` is reduced
to the list of its item names (the `- name: text` lines, or one name per line),
without their descriptions.
"""

import re
import sys

KEEP = [
    "def", "is", "lib", "of", "tagOn", "mandatory", "notInherited", "containedBy",
    "inputs", "outputs", "children", "childrenFlatten", "reciprocalOf",
    "computedFromReciprocal", "transitive", "accumulate", "quantityOf", "prefUnit",
    "enum", "openEnum", "depends", "version", "baseUri", "transient", "minVal", "maxVal",
    "noSideEffects",
]


class Marker:
    def __repr__(self):
        return "M"


class Sym(str):
    pass


class Parser:
    """Just enough Zinc for the defs grid: strings, symbols, markers, numbers, uris,
    lists and dicts."""

    def __init__(self, text):
        self.s = text
        self.i = 0

    def peek(self):
        return self.s[self.i] if self.i < len(self.s) else ""

    def ws(self):
        while self.peek() == " ":
            self.i += 1

    def value(self):
        c = self.peek()
        if c == '"':
            return self.string()
        if c == "^":
            self.i += 1
            return Sym(self.ident(extra=":-."))
        if c == "[":
            self.i += 1
            items = []
            self.ws()
            while self.peek() != "]":
                items.append(self.value())
                self.ws()
                if self.peek() == ",":
                    self.i += 1
                    self.ws()
            self.i += 1
            return items
        if c == "{":
            self.i += 1
            d = {}
            self.ws()
            while self.peek() != "}":
                name = self.ident()
                self.ws()
                if self.peek() == ":":
                    self.i += 1
                    self.ws()
                    d[name] = self.value()
                else:
                    d[name] = Marker()
                self.ws()
                if self.peek() == ",":
                    self.i += 1
                self.ws()
            self.i += 1
            return d
        if c == "`":
            end = self.s.index("`", self.i + 1)
            v = self.s[self.i:end + 1]
            self.i = end + 1
            return ("uri", v)
        m = re.compile(r"-?[0-9][0-9.eE_+-]*[A-Za-z%_/$\u0080-\uffff]*").match(self.s, self.i)
        if m:
            self.i = m.end()
            return ("num", m.group(0))
        word = self.ident()
        if word == "M":
            return Marker()
        if word in ("T", "F"):
            return ("bool", word)
        if word == "N" or word == "":
            return None
        raise SystemExit(f"unexpected value {word!r} at {self.i}")

    def ident(self, extra=""):
        start = self.i
        while self.peek() and (self.peek().isalnum() or self.peek() in "_" + extra):
            self.i += 1
        return self.s[start:self.i]

    def string(self):
        assert self.s[self.i] == '"'
        self.i += 1
        out = []
        while True:
            c = self.s[self.i]
            if c == '"':
                self.i += 1
                return "".join(out)
            if c == "\\":
                n = self.s[self.i + 1]
                if n == "u":
                    out.append(chr(int(self.s[self.i + 2:self.i + 6], 16)))
                    self.i += 6
                    continue
                out.append({"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(n, n))
                self.i += 2
                continue
            out.append(c)
            self.i += 1


def row(text, ncols):
    p = Parser(text)
    cells = []
    while len(cells) < ncols:
        p.ws()
        if p.peek() in (",", ""):
            cells.append(None)
        else:
            cells.append(p.value())
        p.ws()
        if p.peek() == ",":
            p.i += 1
    return cells


def zinc(v):
    if isinstance(v, Marker):
        return "M"
    if isinstance(v, Sym):
        return "^" + v
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, list):
        return "[" + ",".join(zinc(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + " ".join(k if isinstance(x, Marker) else f"{k}:{zinc(x)}" for k, x in v.items()) + "}"
    if isinstance(v, tuple):
        return v[1]
    raise SystemExit(f"cannot write {v!r}")


def enum_names(v):
    if isinstance(v, str):
        names = re.findall(r"^-\s*([^:\s]+)\s*:", v, re.M)
        if not names:
            # A plain list: one item name per line.
            names = [line.strip() for line in v.split("\n") if line.strip()]
        return names
    return v


def main():
    lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
    cols = lines[1].split(",")
    records = []
    for text in lines[2:]:
        if not text.strip():
            continue
        cells = dict(zip(cols, row(text, len(cols))))
        if not isinstance(cells.get("def"), Sym):
            raise SystemExit("row without def: " + text[:80])
        records.append(cells)
    records.sort(key=lambda r: r["def"])
    out = sys.stdout
    out.write("// Haystack 4 standard defs (structure only), generated by gen_defs.py: do not edit.\n")
    for n, rec in enumerate(records):
        if n:
            out.write("---\n")
        for name in KEEP:
            v = rec.get(name)
            if v is None:
                continue
            if name == "enum":
                v = enum_names(v)
            if isinstance(v, Marker):
                out.write(name + "\n")
            else:
                out.write(f"{name}:{zinc(v)}\n")


if __name__ == "__main__":
    main()
