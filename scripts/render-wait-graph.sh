#!/usr/bin/env bash
# Renders the wait graph of the hangs article (<doc:StuckQueues>) from its checked-in DOT source.
# The DOT itself is what the package draws for the documented scenario: WaitGraphTests compares
# them in CI (which has no Graphviz). After a deliberate change to the picture:
#   OPERATIONBRIDGE_UPDATE_WAIT_GRAPH=1 swift test --filter WaitGraphTests
#   scripts/render-wait-graph.sh      # needs Graphviz's `dot` (apt-get install graphviz)
set -euo pipefail
cd "$(dirname "$0")/../Sources/OperationBridge/OperationBridge.docc/Resources"
dot -Tpng -Gdpi=192 stuck-migration.dot -o stuck-migration@2x.png
echo "rendered $(pwd)/stuck-migration@2x.png"
