"""A small site with a login: a form that sets a session cookie, private pages that need it.

- ``/login``: the form (user ``reader``, password ``secret``); a POST with the right pair
  sets ``sid`` (HttpOnly) and redirects to ``next`` (``/private`` by default);
- ``/private``: the private page with its stylesheet (which sets a cookie) and a script
  calling ``/api/notes`` with an ``Authorization`` header, or a redirect to ``/login``;
- ``/members``: private too, but answers 403 without a session instead of redirecting;
- ``/public``: open to anyone; ``/open-login``: a login form served at an ordinary address;
- ``/sidebar`` and ``/thread``: public pages with a login box beside their content (in an
  ``<aside>``; in plain ``<div>``s at the top); ``/wall``: a login form as the ``<main>`` of
  a page with a large menu and footer (a login wall);
- ``/script-login``: a page whose script logs in by POSTing :data:`TYPED` to
  ``/api/session`` three ways: as a urlencoded form, as ``multipart/form-data`` and as JSON.

``expire_sessions()`` forgets every session on the server side, as a site does when a
session times out.
"""

from __future__ import annotations

import secrets
import threading
from urllib.parse import parse_qs, quote, urlsplit

from tests.helpers.webserver import LocalServer, Request, Response

USER, PASSWORD = "reader", "secret"
#: What the private page's script sends as ``Authorization`` (built by the script, so the
#: value is not in the page's own text).
BEARER = "Bearer notes-key-42"
NOTES_SCRIPT = (
    "<script>fetch('/api/notes', {headers: {'Authorization': "
    "['Bearer', 'notes-key-' + (6 * 7)].join(' ')}})</script>"
)
PRIVATE_TEXT = "Minutes of the committee, for members only"
FORM = """<!doctype html><html><head><title>Sign in</title></head><body>
<h1>Sign in</h1>
<form method="post" action="/login">
<input type="hidden" name="next" value="{next}">
<label>User <input id="user" name="user"></label>
<label>Password <input id="password" name="password" type="password"></label>
<button id="go" type="submit">Sign in</button>
</form></body></html>"""

_BOX = (
    '<form method="post" action="/login"><input name="user"> '
    '<input name="password" type="password"> <button>Log in</button></form>'
)
_POSTS = "".join(
    f"<p>Post {i}: the tide tables for the northern harbour were revised this week, and the "
    "ferry timetable follows them; members compared the old and new figures at length.</p>"
    for i in range(12)
)
_MENU = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(60))
#: A public page with a login widget in its sidebar, as forums and WordPress themes have.
SIDEBAR = (
    "<!doctype html><title>Harbour news</title><body><nav><a href='/'>Home</a></nav>"
    f"<article><h1>Harbour news</h1>{_POSTS}</article>"
    f"<aside><h2>Members</h2>{_BOX}</aside></body>"
)
#: The same, laid out in plain ``<div>``s: a login bar above a long thread.
THREAD = f"<!doctype html><title>Thread</title><div class=top>{_BOX}</div><div>{_POSTS}</div>"
#: A login wall inside the site's chrome: a big menu and footer, the form as the main content.
WALL = (
    f"<!doctype html><title>Members</title><header><ul>{_MENU}</ul></header>"
    f"<main><h1>Please sign in to read this</h1>{_BOX}</main>"
    f"<footer><ul>{_MENU}</ul></footer>"
)
#: A public password-strength demo: one password field and no form, nothing to log in to.
STRENGTH = (
    "<!doctype html><title>How strong is your password?</title><main><h1>Try a password</h1>"
    "<p>Type one to see how long it would take to guess.</p>"
    "<input id=pw type=password> <meter id=score max=4></meter></main>"
)

#: The password the script of ``/script-login`` sends (built by the script, so the value is
#: in no response: only in the request bodies).
TYPED = "hunter2-typed"
SCRIPT_LOGIN = """<!doctype html><title>Script login</title><p>Signing in</p><script>
const pw = ['hunter2', 'typed'].join('-');
const form = new FormData(); form.append('user', 'reader'); form.append('pwd', pw);
Promise.all([
  fetch('/api/session',
    {method: 'POST', body: new URLSearchParams({user: 'reader', password: pw})}),
  fetch('/api/session', {method: 'POST', body: form}),
  fetch('/api/session', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({login: {user: 'reader', password: pw}, remember: true})}),
]).then(() => { document.querySelector('p').textContent = 'Signed in'; });
</script>"""


class LoginSite:
    def __init__(self, server: LocalServer) -> None:
        self.server = server
        self.sessions: set[str] = set()
        self._lock = threading.Lock()
        server.routes.update(
            {
                "/login": self.login,
                "/private": self.private,
                "/members": self.members,
                "/private.css": self.stylesheet,
                "/api/notes": self.notes,
                "/public": lambda _r: Response(200, b"<title>Public</title><p>Open to all</p>"),
                "/open-login": lambda _r: Response(200, FORM.format(next="/private").encode()),
                "/sidebar": lambda _r: Response(200, SIDEBAR.encode()),
                "/thread": lambda _r: Response(200, THREAD.encode()),
                "/wall": lambda _r: Response(200, WALL.encode()),
                "/strength": lambda _r: Response(200, STRENGTH.encode()),
                "/script-login": lambda _r: Response(200, SCRIPT_LOGIN.encode()),
                "/api/session": lambda _r: Response(200, b"{}", [], "application/json"),
            }
        )

    def url(self, path: str) -> str:
        return self.server.url(path)

    def expire_sessions(self) -> None:
        with self._lock:
            self.sessions.clear()

    def _valid(self, req: Request) -> bool:
        cookies = {}
        for part in req.headers.get("Cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            cookies[name] = value
        with self._lock:
            return cookies.get("sid", "") in self.sessions

    def login(self, req: Request) -> Response:
        if req.method == "POST":
            form = {k: v[0] for k, v in parse_qs(req.body.decode()).items()}
            if form.get("user") == USER and form.get("password") == PASSWORD:
                sid = secrets.token_hex(16)
                with self._lock:
                    self.sessions.add(sid)
                target = form.get("next") or "/private"
                return Response(
                    303,
                    b"",
                    [("Location", target), ("Set-Cookie", f"sid={sid}; Path=/; HttpOnly")],
                )
        query = parse_qs(urlsplit(req.path).query)
        return Response(200, FORM.format(next=query.get("next", ["/private"])[0]).encode())

    def private(self, req: Request) -> Response:
        if not self._valid(req):
            return Response(302, b"", [("Location", "/login?next=" + quote("/private"))])
        body = (
            '<!doctype html><html><head><title>Private</title><link rel="stylesheet" '
            f'href="/private.css"></head><body><h1>{PRIVATE_TEXT}</h1>{NOTES_SCRIPT}</body></html>'
        )
        return Response(200, body.encode())

    def members(self, req: Request) -> Response:
        if not self._valid(req):
            return Response(403, b"<title>Forbidden</title><p>Members only</p>")
        return Response(200, b"<title>Members</title><p>Welcome back</p>")

    def notes(self, req: Request) -> Response:
        if req.headers.get("Authorization") != BEARER:
            return Response(401, b"{}", [], "application/json")
        return Response(200, b'{"notes": 3}', [], "application/json")

    def stylesheet(self, req: Request) -> Response:
        headers = [("Set-Cookie", "seen=1; Path=/"), ("Cache-Control", "max-age=86400")]
        return Response(200, b"h1 { color: navy }", headers, "text/css")
