#!/usr/bin/env bash
# Renders a tool's report.html to a PNG with headless Chromium, to look at
# how it reads (not part of the test command: the tests check the document
# itself, tests/support/html_check.hpp). Chromium is Debian's `chromium`
# (apt-get install -y chromium). The report has no script and loads
# nothing, so it renders offline.
#
# Usage: scripts/render_report.sh OUT/report.html [PNG] [WIDTHxHEIGHT]
#   PNG defaults to the report's name with .png; the window to 1200x3000
#   (a long report is cut at the window's height: give a taller one).
set -euo pipefail
if [ $# -lt 1 ] || [ ! -f "$1" ]; then
  echo "usage: $0 REPORT.html [PNG] [WIDTHxHEIGHT]" >&2
  exit 2
fi
report=$(realpath "$1")
png=${2:-${report%.html}.png}
size=${3:-1200x3000}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "$0: chromium is not installed (apt-get install -y chromium)" >&2
  exit 3
fi
# A scratch profile: no state from or for another run.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
  --screenshot="$(realpath -m "$png")" --window-size="${size/x/,}" "file://$report" >/dev/null 2>&1
echo "$0: wrote $png"
