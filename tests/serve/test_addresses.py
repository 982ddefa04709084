"""The students' link (serve/addresses.py): which address students open, and when the console must say they cannot
reach it."""

from serve.addresses import students_link

CODE = "K7QX2M"


def test_a_console_on_loopback_links_the_lan_address_and_warns_when_the_server_listens_on_loopback_only():
    """Started with --host 127.0.0.1 (issue 55 item 7), the link names the LAN address where nothing listens: the
    warning says so and what to start instead. Listening on every address, or behind nginx (""), no warning."""
    link, warning = students_link("http://localhost:8501/decode?x=1", CODE, lan="192.168.1.20", listening="127.0.0.1")
    assert link == f"http://192.168.1.20:8501/?class={CODE}"
    assert warning == (
        f"This server listens on 127.0.0.1 only, so students' laptops and phones cannot open {link}. Start it again "
        "listening on the network: `inference-explainer --host 0.0.0.0`, or for a class `python -m serve`."
    )
    for listening in ("0.0.0.0", "", "192.168.1.20"):
        assert students_link("http://localhost:8501/", CODE, lan="192.168.1.20", listening=listening) == (link, None)
    assert "::1 only" in students_link("http://[::1]:8501/", CODE, lan="10.0.0.5", listening="::1")[1]


def test_a_public_url_or_a_console_opened_on_the_lan_is_the_link_as_it_is():
    assert students_link("http://localhost:8501/", CODE, "https://class.example.org/app/", "10.0.0.5", "127.0.0.1") == (
        f"https://class.example.org/app/?class={CODE}",
        None,
    )
    assert students_link("http://10.0.0.5:8501/page", CODE, listening="127.0.0.1") == (
        f"http://10.0.0.5:8501/?class={CODE}",
        None,
    )
    link, warning = students_link("http://localhost:8501/", CODE, lan=None, listening="127.0.0.1")
    assert link == f"http://localhost:8501/?class={CODE}" and "no network address" in warning
