#!/usr/bin/env bash
# Wrap the one-folder build (dist/archiver) into dist/archiver-<version>-linux-<arch>.tar.gz
# with install.sh, the desktop entry, AppStream metainfo, icons and install-system-deps.sh.
# Run by `make dist` after PyInstaller.
#   DIST=folder      where the build is and the tarball goes (default: dist/)
#   --stage-only     leave the unpacked tarball folder instead of compressing it (tests)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dist=${DIST:-$root/dist}
stage_only=false
[[ ${1:-} == --stage-only ]] && stage_only=true
app=$dist/archiver
[[ -x $app/archiver ]] || { echo "$app/archiver missing: run pyinstaller build.spec first" >&2; exit 1; }
version=$("$app/archiver" --version | cut -d' ' -f2)
name=archiver-$version-linux-$(uname -m)
stage=$dist/$name
app_id=io.github.archiver.Archiver

rm -rf "$stage"
mkdir -p "$stage/share/applications" "$stage/share/metainfo"
cp -al "$app" "$stage/archiver" 2>/dev/null || cp -a "$app" "$stage/archiver"  # hard links: fast
cp "$root/packaging/linux/install.sh" "$root/packaging/linux/install-system-deps.sh" "$stage/"
cp "$root/packaging/linux/$app_id.desktop" "$stage/share/applications/"
cp "$root/packaging/linux/$app_id.metainfo.xml" "$stage/share/metainfo/"
icons=$root/resources/icons
for size in 16 24 32 48 64 128 256 512; do
  mkdir -p "$stage/share/icons/hicolor/${size}x${size}/apps"
  cp "$icons/generated/archiver-$size.png" "$stage/share/icons/hicolor/${size}x${size}/apps/$app_id.png"
done
mkdir -p "$stage/share/icons/hicolor/scalable/apps"
cp "$icons/archiver.svg" "$stage/share/icons/hicolor/scalable/apps/$app_id.svg"
cp "$root/CHANGELOG.md" "$stage/"

if $stage_only; then
  echo "$stage"
  exit 0
fi
tar -C "$dist" -czf "$dist/$name.tar.gz" "$name"
rm -rf "$stage"
echo "$dist/$name.tar.gz ($(du -h "$dist/$name.tar.gz" | cut -f1))"
