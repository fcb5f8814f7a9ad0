"""``archiver replay --screenshot`` lists each request with its address readable."""

from archiver_app.commands.replay_cmd import request_line


def test_a_request_line_shows_the_address_and_its_detail_readable() -> None:
    url = "https://xn--bcher-kva.example/%D0%BC%D0%B8%D1%80.png"
    line = request_line("archive", url, f"nearest capture of {url}.")
    assert line == (
        "archive\thttps://bücher.example/мир.png  (nearest capture of https://bücher.example/мир.png.)"
    )


def test_a_request_line_without_detail_has_no_parentheses() -> None:
    assert request_line("blocked", "http://a.example/", "") == "blocked\thttp://a.example/"
