#!/usr/bin/env bash
# Fetches the vendored front-end libraries into web/static/vendor/ from the npm registry.
#
# Every library is pinned by version AND by the registry's sha512 `dist.integrity` value,
# written below; the script fails if the tarball does not match, so a re-run either
# reproduces the committed files byte for byte or stops. Needs only curl, sha512sum, base64,
# od and tar: no Node. The fetched files are committed; the server embeds them at compile time,
# so nobody needs to run this unless upgrading (change VERSION and INTEGRITY together, taking
# INTEGRITY from `curl -s https://registry.npmjs.org/uplot/<version>` → dist.integrity).
set -euo pipefail

UPLOT_VERSION="1.6.32"
UPLOT_INTEGRITY="sha512-KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw=="
UPLOT_URL="https://registry.npmjs.org/uplot/-/uplot-${UPLOT_VERSION}.tgz"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="$here/static/vendor/uplot"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "fetching $UPLOT_URL"
curl --fail --silent --show-error --location --proto '=https' --output "$work/uplot.tgz" "$UPLOT_URL"

# npm's integrity is "sha512-" + base64 of the raw digest; compare as hex (coreutils only).
expected_hex="$(printf '%s' "${UPLOT_INTEGRITY#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')"
actual_hex="$(sha512sum "$work/uplot.tgz" | cut -d' ' -f1)"
if [ "$actual_hex" != "$expected_hex" ]; then
    echo "integrity mismatch for $UPLOT_URL" >&2
    echo "  expected sha512 $expected_hex" >&2
    echo "  got      sha512 $actual_hex" >&2
    exit 1
fi
echo "integrity ok: $UPLOT_INTEGRITY"

tar -xzf "$work/uplot.tgz" -C "$work" package/dist/uPlot.iife.min.js package/dist/uPlot.min.css package/LICENSE
mkdir -p "$dest"
cp "$work/package/dist/uPlot.iife.min.js" "$work/package/dist/uPlot.min.css" "$work/package/LICENSE" "$dest/"

cat > "$dest/README.md" <<README
# uPlot (vendored)

Fetched by \`web/vendor.sh\`; do not edit by hand.

- Version: ${UPLOT_VERSION}
- Source: ${UPLOT_URL}
- Integrity (npm \`dist.integrity\`, verified): ${UPLOT_INTEGRITY}
- Files: \`dist/uPlot.iife.min.js\`, \`dist/uPlot.min.css\`, \`LICENSE\` (MIT) from the package tarball.
- Project: https://github.com/leeoniya/uPlot
README
echo "wrote $dest"
