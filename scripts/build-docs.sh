#!/usr/bin/env bash
# Builds the DocC documentation with the toolchain's own tools (no plugin): dumps the
# library's symbol graphs, then converts the catalog with warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."

graphs=.build/symbol-graphs
output=.build/docs
rm -rf "$graphs" "$output"
mkdir -p "$graphs"

swift package dump-symbol-graph --minimum-access-level public --emit-extension-block-symbols >/dev/null
# Only the library's graphs: the test targets' graphs are not documentation.
dumped="$(swift build --show-bin-path)/../symbolgraph"
cp "$dumped"/OperationBridge.symbols.json "$dumped"/OperationBridge@*.symbols.json "$graphs"/

docc convert Sources/OperationBridge/OperationBridge.docc \
    --additional-symbol-graph-dir "$graphs" \
    --output-path "$output" \
    --fallback-display-name OperationBridge \
    --fallback-bundle-identifier org.operationbridge.OperationBridge \
    --warnings-as-errors

echo "Documentation written to $output"
