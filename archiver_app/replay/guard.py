"""The script ``archiver serve`` puts first in every archived HTML page.

Chromium opens a TCP connection to a navigation's host as soon as the navigation starts,
before the frame's Content-Security-Policy refuses it. So a page that navigates itself to
a live address built at run time would still knock on the live host's door. The guard
cancels such navigations in the page, through the Navigation API's ``navigate`` event,
before the browser begins them. It runs before any archived script, so none can remove
its listener, and a listener added later cannot undo a cancelled event.

Its limit: the Navigation API fires no event when a page navigates a frame it has just
made (its initial ``about:blank`` document), so that navigation is refused by the CSP
only, after Chromium may have opened a bare connection. The hostile-page suite keeps that
case as a named known gap. The sandbox and CSP of :mod:`archiver_app.replay.server` still
refuse whatever the guard lets through.
"""

from __future__ import annotations

NAVIGATION_GUARD = (
    b"<script>(function(){var n=window.navigation;if(!n)return;"
    b"n.addEventListener('navigate',function(e){var u;"
    b"try{u=new URL(e.destination.url);}catch(x){return;}"
    b"if(u.origin!==location.origin&&!/^(data|blob|about|javascript):$/.test(u.protocol)"
    b"&&e.cancelable)e.preventDefault();});})();</script>"
)
