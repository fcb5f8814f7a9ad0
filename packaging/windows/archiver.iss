; Inno Setup 6 script: installer for the one-folder Windows build (dist\archiver).
; On Windows, from the repository root, after `pyinstaller --noconfirm build.spec`:
;   $v = (dist\archiver\archiver.exe --version).Split(' ')[1]
;   & "C:\Program Files (x86)\Inno Setup 6\ISCC.exe" /DAppVersion=$v packaging\windows\archiver.iss
; Output: dist\Archiver-<version>-windows-x64-setup.exe
#ifndef AppVersion
  #error Pass the version: ISCC /DAppVersion=x.y.z packaging\windows\archiver.iss
#endif
#define AppName "Archiver"
#define AppExe "archiver-gui.exe"
#define CliExe "archiver.exe"

[Setup]
AppId={{6C1B0E55-2A0B-4C35-9E5B-8A3B2F7D0A11}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=Archiver
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename=Archiver-{#AppVersion}-windows-x64-setup
SetupIconFile=..\..\resources\icons\generated\archiver.ico
UninstallDisplayIcon={app}\{#AppExe}
LicenseFile=..\..\dist\archiver\_internal\licenses\GPL-3.0\GPL-3
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ChangesEnvironment=yes

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Add archiver.exe (the command line) to PATH"; Flags: unchecked

[Registry]
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}'))

[Code]
function NeedsAddPath(Dir: string): Boolean;
var
  Path: string;
begin
  if not RegQueryStringValue(HKCU, 'Environment', 'Path', Path) then
    Path := '';
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Path) + ';') = 0;
end;

[Files]
Source: "..\..\dist\archiver\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
; archiver-gui.exe is the windowed launcher (no console); archiver.exe is the command line.
Name: "{group}\{#AppName}"; Filename: "{app}\{#AppExe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Only the program folder: libraries live in the user's data folder and are kept.
Type: filesandordirs; Name: "{app}\_internal"
