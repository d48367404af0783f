"""The Python bindings against a real loopback server.

Every test server here is Python too: a fetch that held the GIL would starve
the server's threads, so each successful fetch also shows the GIL is released.
"""

from __future__ import annotations

import asyncio
import pickle
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import webfetch
from conftest import Site, loopback_config


def test_fetch_returns_the_response_as_a_dict_in_the_srd_order(site: Site, config: str) -> None:
    response = webfetch.fetch(site.url("/article.html"), config_toml=config)

    assert list(response)[:3] == ["requested_url", "final_url", "fetched_at"]
    assert response["requested_url"] == site.url("/article.html")
    assert response["final_url"] == site.url("/article.html")
    assert response["title"] == "Python bindings"
    assert response["language"] == "en"
    assert response["rendering_method"] == "http"
    assert response["truncated"] is False
    assert response["notes"] == []
    text = "".join(chunk["text"] for chunk in response["chunks"])
    assert "# Hello from loopback" in text
    assert "fetched this page through the Python bindings" in text
    # robots.txt is asked for first (404: everything allowed).
    assert site.count("/robots.txt") == 1


def test_a_config_file_path_is_accepted(site: Site, config: str, tmp_path: Path) -> None:
    path = tmp_path / "webfetch.toml"
    path.write_text(config)

    with webfetch.WebFetch(path) as client:
        assert client.fetch(site.url("/article.html"))["title"] == "Python bindings"
    with webfetch.WebFetch(str(path)) as client:
        assert client.fetch(site.url("/article.html"))["title"] == "Python bindings"


def test_an_http_error_is_raised_as_fetch_error_with_the_envelope(site: Site, config: str) -> None:
    with pytest.raises(webfetch.FetchError) as raised:
        webfetch.fetch(site.url("/missing"), config_toml=config)

    error = raised.value
    assert error.code == "http_4xx"
    assert error.retryable is False
    assert error.details == {"status": 404, "status_text": "Not Found"}
    assert error.message == "HTTP 404 Not Found"
    assert str(error) == "http_4xx: HTTP 404 Not Found"
    assert error.envelope == {
        "code": "http_4xx",
        "message": "HTTP 404 Not Found",
        "retryable": False,
        "details": {"status": 404, "status_text": "Not Found"},
    }


def test_invalid_arguments_are_bad_args(site: Site, config: str) -> None:
    with pytest.raises(webfetch.FetchError) as raised:
        webfetch.fetch(site.url("/article.html"), max_chunk_tokens=5, config_toml=config)

    assert raised.value.code == "bad_args"
    assert raised.value.details["field"] == "max_chunk_tokens"
    assert site.count("/article.html") == 0


def test_loopback_is_blocked_by_the_default_security_settings(tmp_path: Path) -> None:
    # Only the cache is moved off the shared default directory; security is default.
    config = f'[tools.webfetch]\ncache_dir = "{tmp_path}"\n'

    with pytest.raises(webfetch.FetchError) as raised:
        webfetch.fetch("http://127.0.0.1/", config_toml=config)

    assert raised.value.code == "ssrf_blocked"
    assert raised.value.retryable is False
    assert raised.value.details["blocked_ip"] == "127.0.0.1"


def test_the_output_budget_is_max_output_bytes(site: Site, config: str) -> None:
    with pytest.raises(webfetch.FetchError) as raised:
        webfetch.fetch(site.url("/article.html"), config_toml=config, max_output_bytes=10)

    assert raised.value.code == "internal"
    assert raised.value.details["error"] == "tool_output_limit"
    assert raised.value.retryable is False


def test_start_chunk_returns_the_page_from_that_chunk_on(site: Site, config: str) -> None:
    with webfetch.WebFetch(config_toml=config) as client:
        whole = client.fetch(site.url("/long.html"), max_chunk_tokens=128)
        rest = client.fetch(site.url("/long.html"), max_chunk_tokens=128, start_chunk=2)

    assert len(whole["chunks"]) > 3
    assert rest["chunks"] == whole["chunks"][2:]


def test_the_client_keeps_its_cache_across_calls(site: Site, tmp_path: Path) -> None:
    with webfetch.WebFetch(config_toml=loopback_config(site.port, tmp_path)) as client:
        first = client.fetch(site.url("/article.html"))
        second = client.fetch(site.url("/article.html"))
        fresh = client.fetch(site.url("/article.html"), no_cache=True)

    assert "cache_hit" not in first["notes"]
    assert "cache_hit" in second["notes"]
    assert "cache_hit" not in fresh["notes"]
    assert second["chunks"] == first["chunks"]
    assert site.count("/article.html") == 2
    # The robots.txt answer is kept by the client as well.
    assert site.count("/robots.txt") == 1


def test_fetches_from_threads_run_at_the_same_time(site: Site, config: str) -> None:
    parties = 4
    site.open_gate(parties)

    with webfetch.WebFetch(config_toml=config) as client:
        with ThreadPoolExecutor(max_workers=parties) as pool:
            responses = list(pool.map(lambda i: client.fetch(site.url(f"/gate/{i}")), range(parties)))

    # Every request was answered only once all of them were in flight.
    assert [r["title"] for r in responses] == [str(i) for i in range(parties)]


def test_fetches_from_asyncio_tasks_run_at_the_same_time(site: Site, config: str) -> None:
    parties = 4
    site.open_gate(parties)

    async def main() -> list:
        async with webfetch.WebFetch(config_toml=config) as client:
            return await asyncio.gather(*(client.fetch_async(site.url(f"/gate/{i}")) for i in range(parties)))

    responses = asyncio.run(main())

    assert [r["title"] for r in responses] == [str(i) for i in range(parties)]


def test_module_level_fetch_async(site: Site, config: str) -> None:
    response = asyncio.run(webfetch.fetch_async(site.url("/article.html"), config_toml=config))
    assert response["title"] == "Python bindings"

    with pytest.raises(webfetch.FetchError) as raised:
        asyncio.run(webfetch.fetch_async(site.url("/missing"), config_toml=config))
    assert raised.value.code == "http_4xx"


def test_a_closed_client_refuses_calls(site: Site, config: str) -> None:
    client = webfetch.WebFetch(config_toml=config)
    client.close()
    client.close()

    assert client.closed
    with pytest.raises(RuntimeError, match="closed"):
        client.fetch(site.url("/article.html"))
    assert site.count("/article.html") == 0


def test_configuration_warnings_are_runtime_warnings(config: str) -> None:
    with pytest.warns(RuntimeWarning, match="SSRF protection disabled for: block_loopback"):
        webfetch.WebFetch(config_toml=config).close()


def test_configuration_errors_are_config_error(tmp_path: Path) -> None:
    with pytest.raises(webfetch.ConfigError, match="tools.mode"):
        webfetch.WebFetch(config_toml='[tools]\nmode = "disabled"\n')
    with pytest.raises(webfetch.ConfigError):
        webfetch.WebFetch(config_toml="[tools.webfetch]\ntimeout_seconds = 'soon'\n")
    with pytest.raises(webfetch.ConfigError, match="cannot read"):
        webfetch.WebFetch(tmp_path / "absent.toml")
    with pytest.raises(TypeError):
        webfetch.WebFetch(tmp_path / "a.toml", config_toml="")


def test_fetch_error_survives_pickling() -> None:
    error = webfetch.FetchError("timeout", "budget spent", True, {"phase": "connect"})

    copy = pickle.loads(pickle.dumps(error))

    assert (copy.code, copy.message, copy.retryable, copy.details) == (
        "timeout",
        "budget spent",
        True,
        {"phase": "connect"},
    )


def test_fetch_many_answers_each_url_in_order_without_raising_for_one(
    site: Site, config: str
) -> None:
    urls = [site.url("/article.html"), "http://169.254.169.254/", site.url("/article.html")]
    with webfetch.WebFetch(config_toml=config, browser_standby=False) as client:
        results = client.fetch_many(urls, extraction="srd")

    assert len(results) == 3
    first, blocked, again = results
    assert isinstance(first, dict) and first["title"] == "Python bindings"
    assert isinstance(blocked, webfetch.FetchError) and blocked.code == "ssrf_blocked"
    assert again == first
    # The same URL twice is fetched once.
    assert site.count("/article.html") == 1


def test_fetch_many_refuses_what_is_not_a_batch(config: str) -> None:
    with pytest.raises(webfetch.FetchError) as raised:
        webfetch.fetch_many([], config_toml=config)
    assert raised.value.code == "bad_args"
    with pytest.raises(webfetch.FetchError):
        webfetch.fetch_many(["http://a.example/"] * 21, config_toml=config)
