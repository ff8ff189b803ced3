"""Azure OpenAI: the per-resource URL and the ``api-key`` header.

Every Azure OpenAI resource has its own host. The v1 API
(``https://<resource>.openai.azure.com/openai/v1``) takes the model deployment
name as ``model`` and needs no ``api-version`` query, so the OpenAI codecs work
unchanged once the base URL is known. The base URL comes from ``base_url``
(argument or config), else from ``AZURE_OPENAI_ENDPOINT`` (the variable the
official SDK reads, e.g. ``https://myres.openai.azure.com/``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ConfigError
from .profile import ProviderProfile

__all__ = ["AzureOpenAIProfile"]

TEMPLATE = "https://{resource}.openai.azure.com/openai/v1"


@dataclass(frozen=True, slots=True)
class AzureOpenAIProfile(ProviderProfile):
    """Azure OpenAI (v1 API)."""

    endpoint_env: tuple[str, ...] = ("AZURE_OPENAI_ENDPOINT",)

    def default_base_url(self, environ: Mapping[str, str]) -> str:
        for name in self.endpoint_env:
            endpoint = environ.get(name, "").strip().rstrip("/")
            if endpoint:
                # the SDK's endpoint is the resource root; the v1 API lives below it
                return endpoint if endpoint.endswith("/openai/v1") else endpoint + "/openai/v1"
        return ""

    def url(self, path: str, base_url: str | None = None) -> str:
        base = (base_url or self.base_url).rstrip("/")
        if "{" in base:
            raise ConfigError(
                f"azure needs its resource URL: pass base_url={TEMPLATE!r} or set "
                + " or ".join(self.endpoint_env)
            )
        return base + path
