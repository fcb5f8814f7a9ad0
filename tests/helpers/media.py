"""Real media for tests: a short WebM Chromium records from a canvas, and what a
``<video>`` reached (loaded a frame, or failed) once it settles."""

from __future__ import annotations

import base64

from playwright.sync_api import Browser, Frame

#: Two seconds of changing noise on a canvas, as WebM (base64): a real video, some 100s of KiB.
_RECORD = """async () => {
  const c = document.createElement('canvas'); c.width = 320; c.height = 180;
  const x = c.getContext('2d'); const s = c.captureStream(25);
  const r = new MediaRecorder(s, {mimeType: 'video/webm;codecs=vp8', videoBitsPerSecond: 3e6});
  const chunks = []; r.ondataavailable = e => chunks.push(e.data);
  r.start(200); const t0 = performance.now();
  await new Promise(done => { (function draw() {
    for (let i = 0; i < 300; i++) {
      x.fillStyle = `rgb(${Math.random() * 255},${Math.random() * 255},90)`;
      x.fillRect(Math.random() * 320, Math.random() * 180, 12, 12);
    }
    if (performance.now() - t0 < 2000) requestAnimationFrame(draw); else done();
  })(); });
  r.stop(); await new Promise(done => r.onstop = done);
  const bytes = new Uint8Array(await new Blob(chunks).arrayBuffer());
  let out = ''; for (let i = 0; i < bytes.length; i += 8192)
    out += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
  return btoa(out);
}"""
#: The video's state once it loaded or failed (a frame decoded: readyState 2 or more).
_STATE = """v => new Promise(done => {
  const report = () => done({ready: v.readyState, error: v.error && v.error.message,
                              width: v.videoWidth});
  if (v.readyState >= 2 || v.error) return report();
  v.addEventListener('loadeddata', report); v.addEventListener('error', report);
  setTimeout(report, 20000);
})"""


def record_webm(browser: Browser) -> bytes:
    """Two seconds of a 320x180 VP8 video of changing noise (some hundreds of KiB)."""
    page = browser.new_page()
    try:
        return base64.b64decode(page.evaluate(_RECORD))
    finally:
        page.close()


def video_state(frame: Frame, selector: str = "video") -> dict[str, object]:
    """``ready`` (readyState), ``error`` (its message or None) and ``width`` of the video
    once it decoded a frame or failed (20 s at most)."""
    state = frame.evaluate(f"({_STATE})(document.querySelector({selector!r}))")
    assert isinstance(state, dict)
    return state
