#!/usr/bin/env bash
# Install the system packages Archiver needs on Debian/Ubuntu, only those that are missing.
#   install-system-deps.sh run    Qt runtime libraries (to run the app)
#   install-system-deps.sh test   plus Chromium, Xvfb, rsync, PostgreSQL, desktop-file-utils,
#                                 appstream, Node.js/npm if npm is missing (for the tests), then
#                                 ReplayWeb.page
#   install-system-deps.sh replaywebpage
#                                 only ReplayWeb.page, pinned, into .tools/replaywebpage/ of
#                                 this checkout (the export tests replay WACZs in it); quick
#                                 when that version is already there
# On other systems it says what is needed and changes nothing outside this checkout.
set -euo pipefail
mode=${1:-run}
replaywebpage_version=2.5.3

# The npm package ships ReplayWeb.page built (index.html, sw.js, ui.js): `npm pack` fetches
# it alone, where `npm install` would also resolve the dependencies it was built from.
install_replaywebpage() {
  local checkout dest
  checkout=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  dest=$checkout/.tools/replaywebpage
  if [[ -f $dest/package/sw.js ]] &&
    grep -q "\"version\": \"$replaywebpage_version\"" "$dest/package/package.json"; then
    return 0
  fi
  if ! command -v npm >/dev/null; then
    echo "npm is missing: install Node.js and npm, then run $0 replaywebpage" >&2
    return 1
  fi
  echo "installing ReplayWeb.page $replaywebpage_version into $dest"
  mkdir -p "$checkout/.tools"
  local work
  work=$(mktemp -d "$checkout/.tools/.replaywebpage.XXXXXX")
  if ! (cd "$work" && npm pack --silent "replaywebpage@$replaywebpage_version" >/dev/null &&
    tar -xzf "replaywebpage-$replaywebpage_version.tgz" && [[ -f package/sw.js ]]); then
    rm -rf "$work"
    echo "could not fetch replaywebpage@$replaywebpage_version from the npm registry" >&2
    return 1
  fi
  rm -rf "$dest"
  mkdir "$dest"
  mv "$work/package" "$dest/package"
  rm -rf "$work"
}

if [[ $mode == replaywebpage ]]; then
  install_replaywebpage
  exit
fi

qt_runtime=(libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3
  libnss3 libxcomposite1 libxdamage1 libxrandr2 libxtst6 libxkbfile1 libasound2
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
  libxcb-xkb1 libxcb-shape0 libxcb-randr0 libxcb-xinerama0 fonts-dejavu-core)
test_tools=(chromium chromium-headless-shell xvfb rsync postgresql desktop-file-utils appstream)

packages=("${qt_runtime[@]}")
[[ $mode == test ]] && packages+=("${test_tools[@]}")
# Debian's npm only when there is none: a Node.js installed another way brings its own.
[[ $mode == test ]] && ! command -v npm >/dev/null && packages+=(nodejs npm)

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  echo "not a Debian/Ubuntu system: make sure Qt 6's runtime libraries and a Chromium-based"
  echo "browser are installed (see README.md, 'Other systems')."
  [[ $mode == test ]] && install_replaywebpage
  exit 0
fi

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$pkg")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  [[ $mode == test ]] && install_replaywebpage
  exit 0
fi

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
[[ $mode == test ]] && install_replaywebpage
exit 0
