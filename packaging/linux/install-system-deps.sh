#!/usr/bin/env bash
# Install the system packages Archiver needs on Debian/Ubuntu, only those that are missing.
#   install-system-deps.sh run    Qt runtime libraries (to run the app)
#   install-system-deps.sh test   plus Chromium, Xvfb, rsync, PostgreSQL, desktop-file-utils
#                                 and appstream (for the tests)
# On other systems it says what is needed and changes nothing.
set -euo pipefail
mode=${1:-run}

qt_runtime=(libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3
  libnss3 libxcomposite1 libxdamage1 libxrandr2 libxtst6 libxkbfile1 libasound2
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
  libxcb-xkb1 libxcb-shape0 libxcb-randr0 libxcb-xinerama0 fonts-dejavu-core)
test_tools=(chromium xvfb rsync postgresql desktop-file-utils appstream)

packages=("${qt_runtime[@]}")
[[ $mode == test ]] && packages+=("${test_tools[@]}")

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  echo "not a Debian/Ubuntu system: make sure Qt 6's runtime libraries and a Chromium-based"
  echo "browser are installed (see README.md, 'Other systems')."
  exit 0
fi

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "installing system packages: ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "run as root: apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
# libasound2 was renamed libasound2t64 on newer releases; let apt pick what exists.
if ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
  alt=("${missing[@]/libasound2/libasound2t64}")
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${alt[@]}"
fi
