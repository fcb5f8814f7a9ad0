#!/usr/bin/env bash
# Build dist/Archiver-<version>-<arch>.AppImage from the one-folder build (dist/archiver).
# Needs appimagetool (https://github.com/AppImage/appimagetool/releases): put it on PATH or
# set APPIMAGETOOL. Without it, the AppDir is left in dist/Archiver.AppDir and the command
# to finish is printed. Build on the oldest distribution you support (glibc is not bundled).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
app=$root/dist/archiver
[[ -x $app/archiver ]] || { echo "$app/archiver missing: run make dist first" >&2; exit 1; }
version=$("$app/archiver" --version | cut -d' ' -f2)
arch=$(uname -m)
appdir=$root/dist/Archiver.AppDir
app_id=io.github.archiver.Archiver

rm -rf "$appdir"
mkdir -p "$appdir/usr/lib" "$appdir/usr/share/applications" "$appdir/usr/share/metainfo"
cp -a "$app" "$appdir/usr/lib/archiver"
sed "s|^Exec=.*|Exec=archiver|" "$root/packaging/linux/$app_id.desktop" \
  > "$appdir/usr/share/applications/$app_id.desktop"
cp "$appdir/usr/share/applications/$app_id.desktop" "$appdir/"
cp "$root/packaging/linux/$app_id.metainfo.xml" "$appdir/usr/share/metainfo/"
cp "$root/resources/icons/generated/archiver-256.png" "$appdir/$app_id.png"
ln -s "$app_id.png" "$appdir/.DirIcon"
cat > "$appdir/AppRun" <<'RUN'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
exec "$here/usr/lib/archiver/archiver" "$@"
RUN
chmod +x "$appdir/AppRun"

tool=${APPIMAGETOOL:-$(command -v appimagetool || true)}
out=$root/dist/Archiver-$version-$arch.AppImage
if [[ -z $tool ]]; then
  echo "AppDir ready: $appdir ($("$appdir/AppRun" --version))"
  echo "finish with: ARCH=$arch appimagetool $appdir $out"
  exit 0
fi
ARCH=$arch "$tool" "$appdir" "$out"
echo "$out"
