"""The price table: each row cited, usage priced by kind, overrides from config."""

from __future__ import annotations

import pytest

from modelwire import Client, ConfigError
from modelwire.config import config_from_dict
from modelwire.providers.catalog import CATALOG
from modelwire.providers.prices import PRICES, Price, price_for
from modelwire.types import empty_usage


def _usage(**counts):
    return {**empty_usage(), **counts}


# each provider's own domains: a row cites its provider's page, never a copy of it
OWN_DOMAINS = {
    "anthropic": ("claude.com", "anthropic.com"),
    "openai": ("openai.com",),
    "gemini": ("ai.google.dev",),
    "xai": ("x.ai",),
    "mistral": ("mistral.ai",),
    "groq": ("groq.com",),
    "deepseek": ("deepseek.com",),
}


@pytest.mark.parametrize("key", sorted(PRICES))
def test_every_row_cites_its_providers_own_page_and_the_day_it_was_read(key):
    import datetime
    import urllib.parse

    price = PRICES[key]
    provider, _, model = key.partition("/")
    assert provider in CATALOG and model
    url = urllib.parse.urlsplit(price.source)
    host = url.hostname or ""
    assert url.scheme == "https"
    assert any(host == d or host.endswith("." + d) for d in OWN_DOMAINS[provider]), host
    datetime.date.fromisoformat(price.checked)
    assert price.input >= 0 and price.output >= 0


def test_rows_read_only_in_third_party_copies_say_so():
    unverified = {k for k, p in PRICES.items() if not p.verified}
    assert {k.split("/")[0] for k in unverified} >= {"openai", "gemini", "mistral", "groq"}
    assert PRICES["xai/grok-4.20-0309-reasoning"].verified
    assert PRICES["anthropic/claude-sonnet-4-5"].verified


def test_an_unverified_row_is_still_priced_so_budgets_see_its_requests():
    gpt5 = price_for("openai", "gpt-5")
    assert gpt5 is not None and not gpt5.verified
    assert gpt5.cost({"prompt_tokens": 1_000_000, "completion_tokens": 0}) == pytest.approx(1.25)


def test_a_row_from_config_is_the_users_own_and_counts_as_verified():
    config = config_from_dict({"prices": {"openai/gpt-5": {"input": 1, "output": 2}}})
    assert price_for("openai", "gpt-5", config.prices).verified


def test_each_kind_of_token_is_priced_at_its_own_rate():
    price = Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75, reasoning=20.0)
    # prompt 1000 = 600 fresh + 300 read + 100 written; completion 500 = 200 text + 300 reasoning
    usage = _usage(prompt_tokens=1000, cache_read_tokens=300, cache_write_tokens=100,
                   completion_tokens=500, reasoning_tokens=300)
    expected = (600 * 3.0 + 300 * 0.3 + 100 * 3.75 + 200 * 15.0 + 300 * 20.0) / 1e6
    assert price.cost(usage) == pytest.approx(expected)


def test_missing_rates_fall_back_to_input_and_output():
    price = Price(input=1.0, output=2.0)
    usage = _usage(prompt_tokens=100, cache_read_tokens=40, completion_tokens=10,
                   reasoning_tokens=5)
    assert price.cost(usage) == pytest.approx((100 * 1.0 + 10 * 2.0) / 1e6)


def test_a_snapshot_date_or_latest_suffix_finds_the_models_row():
    assert price_for("anthropic", "claude-sonnet-4-20250514") is PRICES["anthropic/claude-sonnet-4"]
    assert price_for("anthropic", "claude-3-5-haiku-latest") is PRICES["anthropic/claude-3-5-haiku"]
    assert price_for("anthropic", "claude-unknown-9") is None


def test_deepseek_cache_hits_are_cheaper_than_misses():
    chat = PRICES["deepseek/deepseek-chat"]
    assert chat.cache_read is not None and chat.cache_read < chat.input


def test_config_prices_override_the_table_and_bad_rows_name_themselves():
    config = config_from_dict({"prices": {"deepseek/deepseek-chat": {"input": 9, "output": 9}}})
    assert config.prices["deepseek/deepseek-chat"].input == 9.0
    with pytest.raises(ConfigError, match="prices.deepseek/deepseek-chat.*output"):
        config_from_dict({"prices": {"deepseek/deepseek-chat": {"input": 1}}})
    with pytest.raises(ConfigError, match="provider/model-id"):
        config_from_dict({"prices": {"deepseek-chat": {"input": 1, "output": 1}}})


def test_a_bad_price_given_to_the_client_is_a_config_error():
    with pytest.raises(ConfigError, match="input"):
        Client("emulator/emulator-1", prices={"emulator/emulator-1": {"output": 1}})


def test_openai_cached_input_is_billed_at_its_rate_and_reasoning_as_output():
    gpt5 = price_for("openai", "gpt-5")
    usage = {"prompt_tokens": 1_000_000, "completion_tokens": 1_000_000,
             "cache_read_tokens": 400_000, "reasoning_tokens": 600_000}
    # 600K fresh input at 1.25 + 400K cached at 0.125 + 1M output (reasoning included) at 10
    assert gpt5.cost(usage) == pytest.approx(0.75 + 0.05 + 10.0)


def test_a_row_without_a_cache_rate_charges_cache_reads_at_the_input_rate():
    flash = price_for("gemini", "gemini-2.5-flash")
    cached = flash.cost({"prompt_tokens": 1_000_000, "completion_tokens": 0,
                         "cache_read_tokens": 1_000_000})
    assert cached == pytest.approx(0.30)


def test_a_client_tells_its_primary_models_price_and_none_when_unknown():
    priced = Client("openai/gpt-5-mini", api_key="sk-" + "test-price")
    assert priced.price == price_for("openai", "gpt-5-mini")
    assert Client("emulator/emulator-1").price is None
