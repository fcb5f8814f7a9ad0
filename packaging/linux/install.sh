#!/usr/bin/env bash
# Install (or remove) the Archiver one-folder build from this tarball.
#   ./install.sh                 for this user: ~/.local (no root needed)
#   sudo ./install.sh --system   for everyone: /opt/archiver + /usr/local
#   ./install.sh --prefix DIR    under DIR (DIR/lib/archiver, DIR/bin, DIR/share)
#   ./install.sh --uninstall     remove what the same options installed
# The app lands in PREFIX/lib/archiver, `archiver` is linked into PREFIX/bin, and the
# desktop entry, AppStream metainfo and icons go under PREFIX/share.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
app_id=io.github.archiver.Archiver
prefix="$HOME/.local"
action=install
libdir=""

while [[ $# -gt 0 ]]; do
  case $1 in
    --system) prefix=/usr/local; libdir=/opt/archiver ;;
    --prefix) prefix=$2; shift ;;
    --uninstall) action=uninstall ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
libdir=${libdir:-$prefix/lib/archiver}
share=$prefix/share

refresh_caches() {
  command -v update-desktop-database >/dev/null && update-desktop-database -q "$share/applications" || true
  command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$share/icons/hicolor" || true
}

if [[ $action == uninstall ]]; then
  rm -rf "$libdir"
  [[ -L $prefix/bin/archiver ]] && rm -f "$prefix/bin/archiver"
  rm -f "$share/applications/$app_id.desktop" "$share/metainfo/$app_id.metainfo.xml"
  rm -f "$share"/icons/hicolor/*/apps/"$app_id".{png,svg}
  refresh_caches
  echo "removed Archiver from $prefix (your libraries were not touched)"
  exit 0
fi

[[ -x $here/archiver/archiver ]] || { echo "archiver/archiver not found next to $0" >&2; exit 1; }
mkdir -p "$libdir" "$prefix/bin" "$share/applications" "$share/metainfo"
# Replace the previous version as a whole: copy beside it, then swap.
rm -rf "$libdir.new"
cp -a "$here/archiver" "$libdir.new"
rm -rf "$libdir"
mv "$libdir.new" "$libdir"
ln -sfn "$libdir/archiver" "$prefix/bin/archiver"

sed "s|^Exec=.*|Exec=$libdir/archiver|" "$here/share/applications/$app_id.desktop" \
  > "$share/applications/$app_id.desktop"
cp "$here/share/metainfo/$app_id.metainfo.xml" "$share/metainfo/"
for icon in "$here"/share/icons/hicolor/*/apps/*; do
  rel=${icon#"$here/share/"}
  mkdir -p "$share/$(dirname "$rel")"
  cp "$icon" "$share/$rel"
done
refresh_caches

# Libraries the bundle expects from the system (OpenGL/EGL, fonts, X11/Wayland).
missing=$(ldd "$libdir/_internal/PySide6/Qt/plugins/platforms/libqxcb.so" \
  "$libdir/_internal/PySide6/Qt/lib/libQt6WebEngineCore.so.6" 2>/dev/null \
  | awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')
echo "installed Archiver $("$libdir/archiver" --version | cut -d' ' -f2) in $libdir"
[[ :$PATH: == *":$prefix/bin:"* ]] || echo "note: $prefix/bin is not on your PATH"
if [[ -n $missing ]]; then
  echo "missing system libraries: $missing"
  echo "on Debian/Ubuntu: bash $here/install-system-deps.sh run"
fi
"$libdir/archiver" browser >/dev/null 2>&1 \
  || echo "no browser for captures yet: run 'archiver browser install' (or install Chromium/Chrome)"
