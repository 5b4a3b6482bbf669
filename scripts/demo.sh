#!/usr/bin/env bash
# `make demo`: the main job on embedded defaults. It grows as the protocol issues land.
set -euo pipefail
bw="${BUILDWIRE:?set BUILDWIRE to the buildwire binary}"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "buildwire $("$bw" --version | cut -d' ' -f2)"

step "Raw loopback ceilings on this machine (no protocol at all): UDP, 7 requests in flight"
"$bw" bench limit udp --in-flight 7 --warmup 0.5 --seconds 2
step "TCP, 64-byte request / 1 MiB response, one at a time"
"$bw" bench limit tcp --request-size 64 --response-size 1048576 --warmup 0.5 --seconds 2
