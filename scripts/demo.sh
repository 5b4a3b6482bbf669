#!/usr/bin/env bash
# `make demo`: the main job on embedded defaults. It grows as the protocol issues land; today it
# shows the wire layers of the three protocols and this machine's raw loopback ceilings.
set -euo pipefail
bw="${BUILDWIRE:?set BUILDWIRE to the buildwire binary}"
here="$(cd "$(dirname "$0")/.." && pwd)"
data="$here/../shared/data/haystack"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "buildwire $("$bw" --version | cut -d' ' -f2)"

step "BACnet: a ReadProperty request (analog-input 5, present-value), decoded layer by layer"
"$bw" bacnet decode "81 0a 00 11 01 04 00 05 01 0c 0c 00 00 00 05 19 55"
step "BACnet: a malformed datagram is located, not crashed on"
"$bw" bacnet decode 810a000802001008 || true

step "OPC UA: a UA TCP Hello, and a StatusCode lookup"
"$bw" opcua decode 48454c46380000000000000000000100000001000000000000000000180000006f70632e7463703a2f2f6c6f63616c686f73743a34383430
"$bw" opcua status 0x80070000

if [ -d "$data" ]; then
    step "Haystack: the Alpha and Bravo buildings in every format"
    for f in "$data"/alpha.zinc "$data"/bravo.zinc "$data"/bravo.json "$data"/bravo.trio; do
        "$bw" haystack decode "$f"
    done
    "$bw" haystack convert "$data/alpha.zinc" "$out/alpha.json"
    "$bw" haystack convert "$out/alpha.json" "$out/alpha.trio"
    "$bw" haystack decode "$out/alpha.trio"
else
    step "Haystack: $data not found (clone the project next to shared/ to see Alpha and Bravo)"
fi

step "Raw loopback ceilings of this machine (no protocol at all): UDP, 7 requests in flight"
"$bw" bench limit udp --in-flight 7 --warmup 0.5 --seconds 2
step "TCP, 64-byte request / 1 MiB response, one at a time"
"$bw" bench limit tcp --request-size 64 --response-size 1048576 --warmup 0.5 --seconds 2
