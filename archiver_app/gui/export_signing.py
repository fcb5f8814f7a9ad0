"""The export dialog's signing choices: "Sign" and "Timestamp with <authority>".

A WACZ can be signed with the user's key (made on first use in the configuration folder)
and its signature timestamped by the library's default time-stamping authority (set with
``archiver export timestamp-authority URL``), as ``archiver export --sign --timestamp``
does. Without network the export is written signed and the timestamp waits in the library's
queue: :class:`SigningChoice` says so after the export, and says beforehand how many
timestamps are already waiting. See ``docs/prove.md``.
"""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from archiver_app.api.exports import ExportResult, StampCode
from archiver_app.library import Library


class SigningChoice(QWidget):
    """Two check boxes and a note; :meth:`sign` and :meth:`timestamp` feed ``export_config``."""

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.authority = library.exports.default_authority()
        self.sign_box = QCheckBox("Sign with your key", self)
        self.sign_box.setObjectName("export_sign")
        self.sign_box.setToolTip(
            "Sign the WACZ (WACZ signing spec) with your key, made on first use in your "
            "configuration folder; archiver verify-export checks it"
        )
        self.stamp_box = QCheckBox(self)
        self.stamp_box.setObjectName("export_timestamp")
        if self.authority:
            self.stamp_box.setText(f"Timestamp with {self.authority}")
            self.stamp_box.setToolTip(
                "A trusted RFC 3161 timestamp of the signature; without network the export "
                "is written signed and the request waits and is retried later"
            )
        else:
            self.stamp_box.setText("Timestamp (no authority set)")
            self.stamp_box.setToolTip(
                "Set the default time-stamping authority first: "
                "archiver export timestamp-authority URL"
            )
        self.note = QLabel(self)
        self.note.setObjectName("export_timestamp_note")
        self.note.setWordWrap(True)
        waiting = library.exports.pending_timestamps()
        if waiting:
            self.note.setText(
                f"{waiting} timestamp{'s' if waiting > 1 else ''} of earlier exports "
                f"{'wait' if waiting > 1 else 'waits'} for the authority; they are asked "
                "again when the app opens the library."
            )
        self.note.setVisible(bool(waiting))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.sign_box)
        layout.addWidget(self.stamp_box)
        layout.addWidget(self.note)
        self.sign_box.toggled.connect(self._update)
        self._wacz = True
        self._update()

    def set_format(self, fmt: str) -> None:
        """Only a WACZ is signed."""
        self._wacz = fmt == "wacz"
        self._update()

    def _update(self) -> None:
        self.sign_box.setEnabled(self._wacz)
        can_stamp = self._wacz and self.sign_box.isChecked() and bool(self.authority)
        self.stamp_box.setEnabled(can_stamp)
        if not can_stamp:
            self.stamp_box.setChecked(False)

    def sign(self) -> bool:
        return self._wacz and self.sign_box.isChecked()

    def timestamp(self) -> str | None:
        return self.authority if self.sign() and self.stamp_box.isChecked() else None

    @staticmethod
    def outcome(result: ExportResult, signed: bool) -> list[str]:
        """What the export's signature and timestamp came to, in the dialog's words."""
        lines = [f"Signed with your key {result.signer}."] if signed else []
        stamp = result.timestamp
        if stamp is None:
            return lines
        if stamp.code is StampCode.STAMPED:
            when = f" at {stamp.time:%Y-%m-%d %H:%M:%S} UTC" if stamp.time else ""
            lines.append(f"Timestamped{when} ({stamp.message}).")
        elif stamp.code is StampCode.UNREACHABLE:
            lines.append(
                f"Timestamp pending: {stamp.message}. The export is signed; the request "
                "waits and is asked again when the app opens the library."
            )
        else:
            lines.append(f"Signed but NOT timestamped: {stamp.message}.")
        return lines
