#!/usr/bin/env bash
# `make demo`: the main job on embedded defaults. A simulated site speaks BACnet/IP and OPC UA
# on 127.0.0.1, our clients talk to it, a short benchmark runs against each, and the Haystack
# example buildings are decoded, queried and served over HTTP and WebSocket. Everything stops when the script ends.
set -euo pipefail
bw="${BUILDWIRE:?set BUILDWIRE to the buildwire binary}"
here="$(cd "$(dirname "$0")/.." && pwd)"
data="$here/../shared/data/haystack"
out="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$out"
}
trap cleanup EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
free_port() { python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, getattr(socket, sys.argv[1])); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' "$1"; }
wait_for() {  # wait_for FILE TEXT: until a server has printed TEXT
    for _ in $(seq 1 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    echo "server did not start:"; cat "$1"; return 1
}

step "buildwire $("$bw" --version | cut -d' ' -f2)"

bport="$(free_port SOCK_DGRAM)"
step "BACnet/IP: the 40-object stress device on 127.0.0.1:$bport"
"$bw" bacnet serve --bind "127.0.0.1:$bport" --broadcast 127.255.255.255 > "$out/bacnet.log" 2>&1 &
pids+=($!)
wait_for "$out/bacnet.log" "objects"
cat "$out/bacnet.log"
"$bw" bacnet read "127.0.0.1:$bport" ai,1 pv
"$bw" bacnet write "127.0.0.1:$bport" av,1 pv 42.5 --priority 8
"$bw" bacnet rpm "127.0.0.1:$bport" av,1:present-value,priority-array bi,1:present-value,status-flags
"$bw" bacnet read "127.0.0.1:$bport" device,400 object-list --index 0

gport="$(free_port SOCK_STREAM)"
gapi="http://127.0.0.1:$gport/api"
step "Gateway: that BACnet device discovered as a tagged Haystack model"
"$bw" gateway discover --bacnet 127.0.0.1:0 --device "127.0.0.1:$bport" --who-is-wait 0.5 \
    --site demo:UTC --out "$out/site.trio"
sed -n '/id:@bacnet.dev400.ai1/,/^---/p' "$out/site.trio"
step "Gateway: live values (COV) and history in memory, served on $gapi"
"$bw" gateway run --bacnet 127.0.0.1:0 --device "127.0.0.1:$bport" --who-is-wait 0.5 \
    --site demo:UTC --store memory --haystack "127.0.0.1:$gport" --report 2s > "$out/gateway.log" 2>&1 &
pids+=($!)
wait_for "$out/gateway.log" "serving Haystack"
cat "$out/gateway.log"
curval() { "$bw" haystack client "$gapi" read 'id==@bacnet.dev400.av2' --json \
    | python3 -c 'import json,sys; r=json.load(sys.stdin)["rows"][0]; v=r["curVal"]; print(v["val"], v.get("unit", ""), r["curStatus"])'; }
for value in 61.5 64 68.25; do
    "$bw" bacnet write "127.0.0.1:$bport" av,2 pv "$value" --priority 16 > /dev/null
    sleep 0.5
    printf 'BACnet av,2 := %-6s  Haystack @bacnet.dev400.av2 curVal, curStatus: %s\n' "$value" "$(curval)"
done
step "Gateway: a Haystack pointWrite at level 8 reaches the device's priority-array"
"$bw" haystack client "$gapi" point-write @bacnet.dev400.av2 8 55 --who demo
"$bw" bacnet read "127.0.0.1:$bport" av,2 priority-array --index 8
"$bw" haystack client "$gapi" point-write @bacnet.dev400.av2 8 N --who demo
"$bw" haystack client "$gapi" his-read @bacnet.dev400.av2 today

step "BACnet/IP benchmark: the published mix against that stress server for 3 s (every answer checked)"
"$bw" bench bacnet bip --target "127.0.0.1:$bport" --warmup 1 --sustain 3 --limit-seconds 1

step "BACnet: a malformed datagram is located, not crashed on"
"$bw" bacnet decode 810a000802001008 || true

oport="$(free_port SOCK_STREAM)"
step "OPC UA: our server on opc.tcp://127.0.0.1:$oport with the Throughput benchmark object and 100 simulated points"
"$bw" opcua serve --bind "127.0.0.1:$oport" --simulate 100 --simulate-interval 200ms > "$out/opcua.log" 2>&1 &
pids+=($!)
wait_for "$out/opcua.log" "opc.tcp"
cat "$out/opcua.log"
"$bw" opcua browse "opc.tcp://127.0.0.1:$oport"
"$bw" opcua read "opc.tcp://127.0.0.1:$oport" i=2258
step "OPC UA subscription: two simulated points for 1 s (the client would reconnect by itself)"
"$bw" opcua subscribe "opc.tcp://127.0.0.1:$oport" "ns=1;s=Sim.0" "ns=1;s=Sim.1" --interval 200ms --duration 1
step "OPC UA throughput (the open62541 benchmark), 1 KiB packages for 4 s"
"$bw" bench opcua throughput --endpoint "opc.tcp://127.0.0.1:$oport" --size-kib 1 --seconds 4

if [ -d "$data" ]; then
    step "Haystack: the Alpha and Bravo buildings in every format"
    for f in "$data"/alpha.zinc "$data"/alpha.json "$data"/bravo.trio; do
        "$bw" haystack decode "$f"
    done
    "$bw" haystack convert "$data/alpha.zinc" "$out/alpha.json"
    step "Haystack filters over both buildings"
    for filter in 'site' 'ahu' 'point and his and kind=="Number"' 'equipRef->siteRef->geoCity=="Fort Wayne"'; do
        printf '%-45s %s\n' "$filter" "$("$bw" haystack query "$data/alpha.zinc" "$data/bravo.zinc" "$filter" --count)"
    done
    hport="$(free_port SOCK_STREAM)"
    api="http://127.0.0.1:$hport/api"
    step "Haystack server: Alpha and Bravo on $api (SCRAM login demo/demo)"
    "$bw" haystack serve --bind "127.0.0.1:$hport" --data "$data/alpha.zinc" --data "$data/bravo.zinc" \
        --user demo:demo:admin --user guest:guest:viewer > "$out/haystack.log" 2>&1 &
    pids+=($!)
    wait_for "$out/haystack.log" "listening"
    cat "$out/haystack.log"
    export BUILDWIRE_HAYSTACK_PASSWORD=demo
    "$bw" haystack client "$api" about -u demo
    printf 'sites: %s\n' "$("$bw" haystack client "$api" read site -u demo --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["rows"]))')"
    printf 'points over the WebSocket API: %s\n' "$("$bw" haystack client "$api" read point --ws -u demo --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["rows"]))')"
    "$bw" haystack client "$api" read 'point and his' --limit 3 -u demo
    step "Haystack roles: a viewer may read but not write"
    BUILDWIRE_HAYSTACK_PASSWORD=guest "$bw" haystack client "$api" his-write @a-0001 "2024-01-01T00:00:00Z UTC=1" -u guest || true
else
    step "Haystack: $data not found (clone the project next to shared/ to see Alpha and Bravo)"
fi

step "Raw loopback ceilings of this machine (no protocol at all): UDP, 7 requests in flight"
"$bw" bench limit udp --in-flight 7 --warmup 0.5 --seconds 2
step "TCP, 64-byte request / 1 KiB response, one at a time (the OPC UA 1 KiB ceiling)"
"$bw" bench limit tcp --request-size 64 --response-size 1024 --warmup 0.5 --seconds 2
