#!/usr/bin/env bash
# Builds the user's guide: the command-line reference from the clap definitions
# (`buildwire help-markdown`, into docs/cli/), the mdBook pages of docs/ into docs/book/, and
# the Python API reference from the package's docstrings and type hints (pdoc) into
# docs/book/python-api/. The JSON Schemas of docs/schemas/ are copied along by mdBook.
# Needs the venv with the extension installed (make develop, or make test's maturin step).
# Usage: scripts/build-docs.sh [VENV]
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-.venv}"
rm -rf docs/cli
"$venv/bin/python" -m buildwire help-markdown docs/cli >/dev/null
test -s docs/cli/index.md
"$venv/bin/mdbook" build docs
test -s docs/book/schemas/bacnet-device.schema.json
rm -rf docs/book/python-api
"$venv/bin/pdoc" --docformat google -o docs/book/python-api \
    buildwire buildwire.bacnet buildwire.bacnet_enums buildwire.bacnet_errors \
    buildwire.bacnet_services buildwire.bacnet_network buildwire.bacnet_sc \
    buildwire.gateway buildwire.haystack buildwire.opcua
test -s docs/book/python-api/buildwire/opcua.html
echo "user's guide: docs/book/index.html (Python API: docs/book/python-api/index.html)"
