"""The timeline of a route lists that route's captures; the document's other routes are
other views of the page; an anchor is no route."""

from __future__ import annotations

from archiver_app.api.timeline import OtherView, route_of, route_timeline
from archiver_app.replay.replayer import Capture

DOC = "http://h/app/"


def _c(ts: str, url: str, sid: int) -> Capture:
    return Capture(ts, url, sid, 200)


CAPTURES = [
    _c("20220101000000000", DOC, 1),
    _c("20230101000000000", DOC + "#/a", 2),
    _c("20240101000000000", DOC + "#/b", 3),
    _c("20250101000000000", DOC + "#/a", 4),
    _c("20250601000000000", DOC + "#section", 5),  # an anchor: the document itself
]


def test_routes_and_anchors() -> None:
    assert route_of(DOC + "#/a") == "/a"
    assert route_of(DOC + "#!/post/1") == "!/post/1"
    assert route_of(DOC + "#section") == "" and route_of(DOC) == ""


def test_a_route_has_its_own_timeline_and_the_others_are_views() -> None:
    timeline = route_timeline(CAPTURES, DOC + "#/a")
    assert timeline.route == "/a"
    assert [c.snapshot_id for c in timeline.captures] == [2, 4]
    assert timeline.other_views == (
        OtherView(DOC + "#section", "", 2),
        OtherView(DOC + "#/b", "/b", 1),
    )


def test_the_document_without_a_route_keeps_its_anchored_captures() -> None:
    timeline = route_timeline(CAPTURES, DOC + "#section")
    assert [c.snapshot_id for c in timeline.captures] == [1, 5]
    assert [v.route for v in timeline.other_views] == ["/a", "/b"]
    assert route_timeline([], DOC).captures == ()
