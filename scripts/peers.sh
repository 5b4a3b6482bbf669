#!/usr/bin/env bash
# Installs the independent peers (shared/design/peers.md) into .peers/ inside the repository,
# for interop tests and side-by-side benchmarks. Idempotent: a group already installed is kept.
# Usage: scripts/peers.sh [py311|py313|node|all]...   (default: all)
#   py311: BACpypes3, asyncua, rusty-bacnet      (Python 3.11)
#   py313: bac-py[secure], haystack-py[server]   (Python 3.13, through pyenv)
#   node:  haystack-core                         (npm)
#   node-opcua: node-opcua                       (npm, OPC UA interop tests)
# Prints nothing but errors when everything is already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
peers="${BUILDWIRE_PEERS:-$root/.peers}"
mkdir -p "$peers"

# Versions seen working here; bump deliberately.
PY311_PACKAGES=(bacpypes3==0.0.110 asyncua==2.1.0 rusty-bacnet==0.14.0)
PY313_PACKAGES=("bac-py[secure]==1.5.7" "haystack-py[server]==0.1.10")
NODE_PACKAGES=(haystack-core@3.0.13)
NODE_OPCUA_PACKAGES=(node-opcua@2.186.4)

find_python() {  # find_python 3.13 -> path of an interpreter of that version
    local want="$1" candidate
    for candidate in "python$want" "$(pyenv root 2>/dev/null)/versions/$want"*/bin/python3; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c "import sys; assert sys.version.startswith('$want')" 2>/dev/null; then
            command -v "$candidate"
            return 0
        fi
    done
    echo "no Python $want found: install it (pyenv install $want) to use these peers" >&2
    return 1
}

install_venv() {  # install_venv NAME PYTHON_VERSION PACKAGES...
    local name="$1" version="$2"
    shift 2
    local dir="$peers/$name" stamp="$peers/$name/.installed"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$*" ]; then return 0; fi
    local python
    python="$(find_python "$version")"
    echo "installing peers ($name): $*"
    rm -rf "$dir"
    "$python" -m venv "$dir"
    "$dir/bin/python" -m pip install -q --disable-pip-version-check "$@"
    echo "$*" > "$stamp"
}

install_node() {  # install_node NAME PACKAGES...: an npm folder .peers/NAME
    local name="$1"
    shift
    local dir="$peers/$name" stamp="$peers/$name/.installed"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$*" ]; then return 0; fi
    command -v npm >/dev/null || { echo "npm is not installed: apt-get install nodejs npm" >&2; return 1; }
    echo "installing peers ($name): $*"
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "$@")
    echo "$*" > "$stamp"
}

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(all)
for group in "${groups[@]}"; do
    case "$group" in
        py311) install_venv py311 3.11 "${PY311_PACKAGES[@]}" ;;
        py313) install_venv py313 3.13 "${PY313_PACKAGES[@]}" ;;
        node) install_node node "${NODE_PACKAGES[@]}" ;;
        node-opcua) install_node node-opcua "${NODE_OPCUA_PACKAGES[@]}" ;;
        all) install_venv py311 3.11 "${PY311_PACKAGES[@]}"
             install_venv py313 3.13 "${PY313_PACKAGES[@]}"
             install_node node "${NODE_PACKAGES[@]}"
             install_node node-opcua "${NODE_OPCUA_PACKAGES[@]}" ;;
        *) echo "unknown peer group '$group': use py311, py313, node, node-opcua or all" >&2; exit 2 ;;
    esac
done
