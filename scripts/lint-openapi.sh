#!/usr/bin/env bash
# Lints the OpenAPI documents Funil serves with Spectral (spectral:oas) and Redocly
# (recommended-strict), as independent tools read them: any error or warning fails.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d /tmp/funil-openapi.XXXXXX)
trap 'rm -rf "$dir"' EXIT
npx tsx scripts/openapi-documents.ts "$dir"
npx spectral lint --ruleset .spectral.yaml --fail-severity=warn "$dir/external.json" "$dir/admin.json"
npx redocly lint --config redocly.yaml "$dir/external.json" "$dir/admin.json"
