#!/usr/bin/env bash
# On macOS, after `pyinstaller --noconfirm build.spec`: wrap dist/Archiver.app into
# dist/Archiver-<version>-macos-<arch>.dmg with hdiutil (part of macOS).
# Optional signing and notarisation (needs an Apple Developer ID):
#   CODESIGN_ID="Developer ID Application: NAME (TEAMID)" NOTARY_PROFILE=archiver ./make-dmg.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
app=$root/dist/Archiver.app
[[ -d $app ]] || { echo "$app missing: run pyinstaller --noconfirm build.spec first" >&2; exit 1; }
version=$(/usr/libexec/PlistBuddy -c "Print :CFBundleShortVersionString" "$app/Contents/Info.plist")
dmg=$root/dist/Archiver-$version-macos-$(uname -m).dmg

if [[ -n ${CODESIGN_ID:-} ]]; then
  codesign --deep --force --options runtime --timestamp --sign "$CODESIGN_ID" "$app"
fi
stage=$(mktemp -d)
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
rm -f "$dmg"
hdiutil create -volname "Archiver $version" -srcfolder "$stage" -fs HFS+ -format UDZO "$dmg"
rm -rf "$stage"
if [[ -n ${CODESIGN_ID:-} ]]; then
  codesign --sign "$CODESIGN_ID" --timestamp "$dmg"
fi
if [[ -n ${NOTARY_PROFILE:-} ]]; then
  xcrun notarytool submit "$dmg" --keychain-profile "$NOTARY_PROFILE" --wait
  xcrun stapler staple "$dmg"
fi
echo "$dmg"
